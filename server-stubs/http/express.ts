// The Express (or Connect) adapter: the gateway as one middleware, mounted anywhere in an app. Paths
// the contract does not serve go on to the app's next handler. Typed with node:http's request and
// response, so that the package needs neither express nor its types.
import type http from 'node:http';
import type { Gateway } from '../core/gateway.ts';
import { protocols } from '../core/contract.ts';
import { splitUrl } from '../core/request.ts';
import { answerRequest, readAndAnswer } from './node.ts';

type Next = (error?: unknown) => void;
export type GatewayMiddleware = (
  req: http.IncomingMessage & { body?: unknown },
  res: http.ServerResponse,
  next: Next,
) => void;

export function createExpressMiddleware(gateway: Gateway): GatewayMiddleware {
  return (req, res, next) => {
    // Below a mount path, Express gives the rest of the path in req.url.
    if (!gateway.serves(splitUrl(req.url ?? '/').pathname)) return next();
    if (!req.readableEnded) return readAndAnswer(gateway, req, res);
    // A body parser mounted before this middleware has read the stream: take what it kept. A parsed
    // object is written again in the protocol its Content-Type names; the hashes are computed over
    // fields, not bytes, so they still hold.
    const { body } = req;
    const kept =
      typeof body === 'string' || Buffer.isBuffer(body)
        ? body
        : body !== undefined && body !== null
          ? protocols
              .choose(req.headers as Record<string, string | undefined>, undefined)
              .writeRequest(body as Record<string, unknown>)
          : undefined;
    answerRequest(gateway, req, res, kept);
  };
}
