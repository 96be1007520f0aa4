// Finding: getSettlement answered nothing to a client that sent its request and then closed its side
// of the connection (a half-close: `curl` does not, but a script that shuts its write side down after
// sending does, and HTTP/1.1 says a half-closed connection neither ends the request nor says the
// client has lost interest, RFC 9112 9.6). Node's server, by default, ends a connection whose client
// half-closes once the request is read: an answer made asynchronously (a streamed settlement zip, any
// answer from PostgreSQL) found the socket gone. The stubs' server (createNodeServer) now finishes
// the answer under way, then closes.
import net from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestExamples } from '../../contract/index.ts';
import { operations } from '../../generated/operations.ts';
import { startSandbox, type TestSandbox } from '../sandbox/support.ts';
import { signed } from './support.ts';

let t: TestSandbox;
beforeAll(async () => {
  t = await startSandbox();
});
afterAll(() => t.close());

/** Sends the request, half-closes, and reads until the server closes: the whole answer as sent. */
function halfClosed(port: number, head: string, body: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.write(head + body);
      socket.end();
    });
    const chunks: Buffer[] = [];
    socket.on('data', (d: Buffer) => chunks.push(d));
    socket.on('error', () => {});
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
    setTimeout(() => socket.destroy(), 10_000).unref();
  });
}

/** Whether an HTTP/1.1 answer is whole: its Content-Length read, or its chunked body's last chunk. */
function whole(answer: string): boolean {
  const end = answer.indexOf('\r\n\r\n');
  if (!answer.startsWith('HTTP/1.1 ') || end < 0) return false;
  const head = answer.slice(0, end).toLowerCase();
  const body = answer.slice(end + 4);
  const length = /\r\ncontent-length: (\d+)/.exec(head);
  if (length) return body.length === Number(length[1]);
  return /\r\ntransfer-encoding: chunked/.test(head) && body.endsWith('0\r\n\r\n');
}

const withBody = operations.filter((o) => o.request && !o.aliasOf);

describe('a client that half-closes after sending', () => {
  it('gets the whole answer, of every operation, streamed ones included', async () => {
    const port = Number(new URL(t.base).port);
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('getSettlement', ...withBody.map((o) => o.operationId)), async (id) => {
        const op = operations.find((o) => o.operationId === id)!;
        const request = signed(id, requestExamples(op)[0]!.value as Record<string, unknown>);
        const body = String(request.body ?? '');
        const headers = Object.entries(request.headers).map(([k, v]) => `${k}: ${v}`);
        const head = `${request.verb} ${request.url} HTTP/1.1\r\nhost: 127.0.0.1\r\n${headers.join('\r\n')}\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n`;
        const answer = await halfClosed(port, head, body);
        expect(whole(answer), `${id}: ${JSON.stringify(answer.slice(0, 200))}`).toBe(true);
      }),
      { seed: 3925, numRuns: 60 },
    );
  });
});
