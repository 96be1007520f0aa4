// The Express adapter: the gateway mounted as one middleware of an app that has routes of its own,
// with and without a body parser before it.
import { once } from 'node:events';
import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterAll, describe, expect, it } from 'vitest';
import { buildRequest, operation, requestExamples } from '../../contract/index.ts';
import { accounts, echoHandlers, type Call } from '../fixtures/example-handlers.ts';
import { createExpressMiddleware, createGateway } from '../../server-stubs/index.ts';

const servers: http.Server[] = [];
afterAll(() => Promise.all(servers.map((s) => new Promise((r) => s.close(r)))));

async function app(parseJsonFirst: boolean): Promise<{ base: string; calls: Call[] }> {
  const calls: Call[] = [];
  const a = express();
  if (parseJsonFirst) a.use(express.json());
  a.get('/health', (_req, res) => void res.json({ ok: true }));
  a.use('/gateway', createExpressMiddleware(createGateway({ handlers: echoHandlers(calls), accounts })));
  a.use((_req, res) => void res.status(404).send('the app’s own 404'));
  const server = a.listen(0, '127.0.0.1');
  servers.push(server);
  await once(server, 'listening');
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, calls };
}

async function send(base: string, operationId: string, body?: Record<string, unknown>) {
  const op = operation(operationId);
  const r = buildRequest(op, { body: body ?? requestExamples(op)[0]!.value });
  // An adapter that waits for a body stream already consumed never answers: fail in seconds, not at
  // the suite's two-minute time-out.
  const signal = AbortSignal.timeout(5_000);
  const response = await fetch(`${base}/gateway${r.url}`, {
    method: r.verb,
    headers: r.headers as Record<string, string>,
    body: (r.body as string | undefined) ?? null,
    signal,
  });
  return { status: response.status, body: await response.json() };
}

describe.each([false, true])('createExpressMiddleware (express.json() before it: %s)', (parseJsonFirst) => {
  it('answers the contract under its mount path, with validation and authentication', async () => {
    const { base, calls } = await app(parseJsonFirst);
    const ok = await send(base, 'processCard');
    expect(ok.status).toBe(200);
    expect(ok.body.responseCode).toBe('0');
    expect(calls.map((c) => c.operationId)).toEqual(['processCard']);

    const example = requestExamples(operation('processCapture'))[0]!.value as Record<string, unknown>;
    const { transactionAmount: _, ...missing } = example;
    const refused = await send(base, 'processCapture', missing);
    expect(refused.body.responseCode).toBe('-3');
    expect(refused.body.responseMessage).toMatch(/'transactionAmount'/);

    const forged = await send(base, 'processCapture', { ...example, hash: '0'.repeat(32) });
    expect(forged.body.responseCode).toBe('-1');
    expect(calls).toHaveLength(1);
  });

  it("leaves the app's own routes and unknown paths to the app", async () => {
    const { base } = await app(parseJsonFirst);
    expect(await (await fetch(`${base}/health`)).json()).toEqual({ ok: true });
    expect(await (await fetch(`${base}/gateway/no-such-operation`)).text()).toBe('the app’s own 404');
    expect((await fetch(`${base}/gateway/openapi.json`)).headers.get('content-type')).toBe('application/json');
  });
});
