// openapi-fetch's middleware on the typed client, through its public entry (generated/client.ts, the
// package's `./client`): onRequest sees each request signed, as it goes, and may add to it;
// onResponse sees each answer before the client reads it, and may replace it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGatewayClient, type Middleware } from '../../generated/client.ts';
import { requestExamples, operation, sandbox } from '../../contract/index.ts';
import { createGateway, createNodeServer } from '../../server-stubs/index.ts';
import { accounts, echoHandlers } from '../fixtures/example-handlers.ts';
import { onLoopback } from '../support/loopback.ts';

const server = createNodeServer(createGateway({ accounts, handlers: echoHandlers(), logger: false }));
let base: string;
let close: () => Promise<void>;
beforeAll(async () => {
  ({ base, close } = await onLoopback(server));
});
afterAll(() => close());

const capture = () => {
  const {
    method: _method,
    merchantUUID: _id,
    apiKey: _key,
    hash: _hash,
    ...fields
  } = requestExamples(operation('processCapture'))[0]!.value as Record<string, string>;
  return fields as Parameters<ReturnType<typeof createGatewayClient>['processCapture']>[0];
};
const credentials = () => ({
  baseUrl: base,
  merchantUUID: sandbox.merchantUUID,
  apiKey: sandbox.apiKey,
  passphrase: sandbox.passphrase,
});

describe('the typed client’s middleware (openapi-fetch’s onRequest / onResponse)', () => {
  it('onRequest sees the request signed and may add a header that goes on the wire; onResponse sees the answer', async () => {
    const seen: { path: string; body: Record<string, unknown>; status?: number }[] = [];
    const sent: (string | null)[] = [];
    const trace: Middleware = {
      async onRequest({ request, schemaPath }) {
        seen.push({ path: schemaPath, body: await request.clone().json() });
        request.headers.set('x-trace-id', 'trace-1');
        return request;
      },
      onResponse({ response }) {
        seen.at(-1)!.status = response.status;
      },
    };
    const client = createGatewayClient({
      ...credentials(),
      middleware: [trace],
      fetch: (request) => {
        sent.push(request.headers.get('x-trace-id'));
        return fetch(request);
      },
    });
    const result = await client.processCapture(capture());
    expect(result.responseCode).toBe('0');
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ path: '/post', status: 200 });
    // Signed before the middleware: the method, the credentials and the hash are in the body it sees.
    expect(seen[0]!.body).toMatchObject({ method: 'processCapture', merchantUUID: sandbox.merchantUUID });
    expect(seen[0]!.body.hash).toMatch(/^[0-9a-f]{32}$/);
    expect(sent).toEqual(['trace-1']);
  });

  it('an answer onResponse returns is the one the client reads', async () => {
    const refused: Middleware = {
      onResponse: () =>
        new Response(JSON.stringify({ responseCode: '-4', responseMessage: 'replaced' }), {
          headers: { 'content-type': 'application/json' },
        }),
    };
    const client = createGatewayClient({ ...credentials(), middleware: [refused] });
    expect(await client.processCapture(capture())).toEqual({ responseCode: '-4', responseMessage: 'replaced' });
  });
});
