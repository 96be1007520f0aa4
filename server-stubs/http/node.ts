// The node:http adapter: the default server. It reads at most what the path's operations accept,
// hands the request to the gateway core and writes its response.
import http from 'node:http';
import type { Gateway } from '../core/gateway.ts';
import { refusalResponse, refuse } from '../core/refusals.ts';
import { splitUrl } from '../core/request.ts';
import type { GatewayResponse } from '../core/types.ts';

function send(res: http.ServerResponse, response: GatewayResponse): void {
  // A string body stays a string: node:http then writes head and body in one write() call.
  const { body } = response;
  res.writeHead(response.status, { ...response.headers, 'content-length': typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength });
  res.end(body);
}

const failed = () => refusalResponse(undefined, refuse(-4, 'Internal gateway error', 500));

/** Hands a request whose body is already read to the core and writes the answer. */
export function answerRequest(gateway: Gateway, req: http.IncomingMessage, res: http.ServerResponse, body: Buffer | string | undefined): void {
  const headers = req.headers as Record<string, string | undefined>;
  let response: GatewayResponse | Promise<GatewayResponse>;
  try {
    response = gateway.respond({ verb: req.method ?? 'GET', url: req.url ?? '/', headers, body });
  } catch {
    response = failed();
  }
  if (response instanceof Promise) response.then((r) => send(res, r), () => send(res, failed()));
  else send(res, response);
}

/** Reads the body, refusing it as soon as it passes what the path accepts, then answers. */
export function readAndAnswer(gateway: Gateway, req: http.IncomingMessage, res: http.ServerResponse): void {
  const limit = gateway.readLimit(splitUrl(req.url ?? '/').pathname);
  const declared = Number(req.headers['content-length'] ?? 0);
  const tooLarge = () => {
    send(res, refusalResponse(undefined, refuse(-2, `Request body exceeds ${limit} bytes`, 413)));
    req.destroy();
  };
  if (declared > limit) return tooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  req.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size > limit) tooLarge();
    else chunks.push(chunk);
  });
  req.on('end', () => {
    if (size <= limit) answerRequest(gateway, req, res, chunks.length > 1 ? Buffer.concat(chunks) : chunks[0]);
  });
}

export function createNodeHandler(gateway: Gateway): http.RequestListener {
  return (req, res) => readAndAnswer(gateway, req, res);
}

export function createNodeServer(gateway: Gateway): http.Server {
  const server = http.createServer(createNodeHandler(gateway));
  // Keep-alive connections beyond load-balancer time-outs; headers must arrive within ten seconds.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 10_000;
  return server;
}
