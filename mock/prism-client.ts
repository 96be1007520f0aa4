// One exchange with Prism, bounded: a time-out for the whole exchange and a cap on what is read of the
// answer. Prism runs beside the front on the loopback; when it hangs or dies, the front answers the
// caller a refusal of its own (mock/front.ts) rather than waiting with it, or failing with a stack.
import type * as Http from 'node:http';
import { http } from '../runtime/node-http.ts';

export interface PrismTarget {
  host: string;
  port: number;
}

export interface PrismAsk {
  verb: string;
  /** Path and query. */
  url: string;
  headers: Http.OutgoingHttpHeaders;
  body?: Uint8Array | string | undefined;
}

export type PrismAnswer =
  | { status: number; headers: Http.IncomingHttpHeaders; body: Buffer }
  | { failed: 'timeout' | 'too large' | 'unreachable'; why: string };

/** The most of an answer read from Prism: larger than any example (the settlement zip is served from its file). */
export const PRISM_MAX_ANSWER_BYTES = 16 * 1024 * 1024;

export function askPrism(target: PrismTarget, ask: PrismAsk, timeoutMs: number): Promise<PrismAnswer> {
  return new Promise((resolve) => {
    let settled = false;
    const settle = (answer: PrismAnswer) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(answer);
    };
    const body = ask.body === undefined ? undefined : Buffer.from(ask.body);
    const headers = { ...ask.headers, host: `${target.host}:${target.port}` };
    if (body) headers['content-length'] = String(body.length);
    else delete headers['content-length'];
    delete headers['transfer-encoding'];
    let request: Http.ClientRequest;
    const timer = setTimeout(() => {
      settle({ failed: 'timeout', why: `no answer within ${timeoutMs} ms` });
      request.destroy();
    }, timeoutMs);
    const send = () => {
      request = http.request({ host: target.host, port: target.port, method: ask.verb, path: ask.url, headers });
      request.on('error', (error: NodeJS.ErrnoException) => {
        // A kept-alive connection that Prism closed as it was reused (its idle time-out, 5 s, met the
        // request; seen under load, issue 44): sent again on another connection, as Node's documentation
        // advises. No answer had begun, so Prism never saw the request. Within the same time-out.
        if (request.reusedSocket && error.code === 'ECONNRESET' && !settled) return send();
        settle({ failed: 'unreachable', why: error.message });
      });
      request.on('response', onAnswer);
      request.end(body);
    };
    const onAnswer = (answer: Http.IncomingMessage) => {
      const parts: Buffer[] = [];
      let size = 0;
      answer.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > PRISM_MAX_ANSWER_BYTES) {
          settle({ failed: 'too large', why: `an answer above ${PRISM_MAX_ANSWER_BYTES} bytes` });
          request.destroy();
          return;
        }
        parts.push(chunk);
      });
      answer.on('error', (error) => settle({ failed: 'unreachable', why: error.message }));
      answer.on('end', () =>
        settle({ status: answer.statusCode ?? 502, headers: answer.headers, body: Buffer.concat(parts) }),
      );
    };
    send();
  });
}
