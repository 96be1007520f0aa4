// A check's answer is judged by its status, its head and its bytes (contract/http.ts send): the run's
// client read it whole and then made it a Response, which the check read back as bytes through a web
// stream, about a tenth of the suite's CPU in undici's Response, its body and its stream. send() now
// takes the answer as read (runtime/bounded-fetch.ts whole()); what the check judges is the same.
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { send } from '../../contract/http.ts';
import { operations } from '../../generated/operations.ts';
import { protocols } from '../../generated/protocols.ts';
import { sandboxCredentials } from '../support/contract.ts';

const op = operations.find((o) => o.operationId === 'refundCard')!;
const refusal = { responseCode: '-2', responseMessage: "Field 'refundAmount' is invalid" };
const form = protocols.all.find((p) => p.id === 'form')!;
let server: http.Server;
let base: string;
beforeAll(async () => {
  server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const xml = String(req.headers['content-type']).startsWith('application/x-www-form-urlencoded');
      res.writeHead(200, {
        'content-type': xml ? form.answerType : 'application/json',
        date: 'Sat, 28 Nov 2026 01:02:03 GMT',
      });
      res.end(xml ? form.writeAnswer(refusal, op.shapes.refusal) : JSON.stringify(refusal));
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => server?.close());

const original = globalThis.Response;
afterEach(() => {
  globalThis.Response = original;
});

it('judges an answer from its status, head and bytes, without making a Response of it', async () => {
  let made = 0;
  globalThis.Response = class extends original {
    constructor(...args: ConstructorParameters<typeof Response>) {
      super(...args);
      made++;
    }
  };
  for (const wire of ['json', 'form'] as const) {
    const a = await send(base, { op, body: { method: 'refundCard', transactionID: 'x' } }, sandboxCredentials(), wire);
    expect(a).toMatchObject({ status: 200, json: refusal });
    expect(a.date?.toISOString()).toBe('2026-11-28T01:02:03.000Z');
    expect(new TextDecoder().decode(a.bytes)).toBe(
      wire === 'form' ? form.writeAnswer(refusal, op.shapes.refusal) : JSON.stringify(refusal),
    );
    expect(a.protocol.id).toBe(wire);
  }
  expect(made, 'Responses made for two exchanges').toBe(0);
});
