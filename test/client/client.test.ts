// The typed client: every operation called against a running, validating server (which recomputes
// every hash), what it sends compared with the spec's signed examples, refusals as results and
// failures as typed errors, the settlement helper, and the README quick start.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import {
  createGatewayClient,
  GatewayHttpError,
  GatewayNetworkError,
  isApproved,
  isRefused,
  customFields,
  type GatewayClient,
} from '../../generated/client.ts';
import { operations } from '../../generated/operations.ts';
import type { components } from '../../generated/types.ts';
import { readSettlement } from '../../runtime/settlement.ts';
import { accounts, echoHandlers } from '../fixtures/example-handlers.ts';
import { requestExamples, sandbox } from '../../contract/index.ts';
import { clientName } from '../../scripts/generators/client.ts';
import { createGateway, createNodeServer } from '../../server-stubs/index.ts';
import { asInstalled } from '../../scripts/lib/as-installed.ts';
import { ROOT, doc, errorsOf, validatorFor } from '../support/contract.ts';
import { startSandboxProcess } from '../support/sandbox-process.ts';

type S = components['schemas'];
const settlementZip = new Uint8Array(readFileSync(path.join(ROOT, 'generated/examples/getSettlement.zip')));
const server = createNodeServer(
  createGateway({ accounts, handlers: { ...echoHandlers(), getSettlement: () => settlementZip } }),
);
let base: string;
let client: GatewayClient;
const options = () => ({
  baseUrl: base,
  merchantUUID: sandbox.merchantUUID,
  apiKey: sandbox.apiKey,
  passphrase: sandbox.passphrase,
  partner: { partnerUUID: sandbox.partnerUUID, apiKey: sandbox.apiKey, passphrase: sandbox.passphrase },
});

beforeAll(async () => {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  client = createGatewayClient(options());
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** The example body less what the client fills in for this operation: method, its credentials, its hashes. */
function callerFields(operationId: string, value: Record<string, unknown>): Record<string, unknown> {
  const op = operations.find((o) => o.operationId === operationId)!;
  const filled = new Set(['method', ...op.hashes.map((h) => h.name)]);
  for (const kind of op.credentials) {
    const c = doc['x-body-credentials'][kind]!;
    if (c.token === undefined) filled.add(c.id).add(c.key);
  }
  return Object.fromEntries(Object.entries(value).filter(([k]) => !filled.has(k)));
}

function functionFor(c: GatewayClient, operationId: string): (...args: unknown[]) => Promise<unknown> {
  const op = operations.find((o) => o.operationId === operationId)!;
  const item = doc.paths[op.path][op.verb.toLowerCase()];
  const tag = doc.tags.find((t) => t.name === item.tags[0])!['x-client']!;
  const group = tag.group ? (c as any)[tag.group] : c;
  return group[clientName(op, tag)];
}

describe('every operation through the client, against the validating server', () => {
  for (const op of operations.filter((o) => !o.aliasOf)) {
    const examples = op.request ? requestExamples(op) : [{ name: 'no body', value: undefined }];
    for (const example of examples) {
      it(`${op.operationId} (${example.name}) returns its own result`, async () => {
        const args = [
          ...op.parameters.filter((p) => p.in === 'path').map((p) => p.example),
          ...(example.value ? [callerFields(op.operationId, example.value)] : []),
          ...(op.parameters.some((p) => p.in === 'query')
            ? [
                Object.fromEntries(
                  op.parameters.filter((p) => p.in === 'query' && p.example).map((p) => [p.name, p.example]),
                ),
              ]
            : []),
        ];
        const result = await functionFor(client, op.operationId)(...args);
        if (op.resultType === 'application/zip') return expect(result).toEqual(settlementZip);
        if (op.resultType === 'text/csv') return expect(typeof result).toBe('string');
        const v = validatorFor(`#/components/schemas/${op.result}`);
        expect(v(result), `${JSON.stringify(result)} ${errorsOf(v)}`).toBe(true);
      });
    }
  }
});

describe('what the client sends', () => {
  const sent: { url: string; headers: Headers; body: any }[] = [];
  const recording = () =>
    createGatewayClient({
      ...options(),
      fetch: async (request) => {
        const text = await request.text();
        sent.push({ url: request.url, headers: request.headers, body: text ? JSON.parse(text) : undefined });
        return new Response(JSON.stringify({ responseCode: '0', responseMessage: 'ok' }), {
          headers: { 'content-type': 'application/json' },
        });
      },
    });

  it('fills method, credentials and hashes exactly as the spec examples were signed (public recipes)', async () => {
    for (const id of [
      'processCapture',
      'getSettlement',
      'addMerchant',
      'checkMerchant',
      'processDDebitAuth',
      'addBlacklistedCard',
      'tokenProcessCard',
    ]) {
      const op = operations.find((o) => o.operationId === id)!;
      const example = requestExamples(op)[0]!.value;
      sent.length = 0;
      await functionFor(recording(), id)(callerFields(id, example));
      expect(sent[0]!.body, id).toEqual(example);
      expect(sent[0]!.headers.get('svc-api-version')).toBe('2.0');
    }
  });

  it('fills nothing a form does not take: the 3DS forms of processCard carry their accessToken only', async () => {
    const op = operations.find((o) => o.operationId === 'processCard')!;
    for (const { value } of requestExamples(op)) {
      sent.length = 0;
      await recording().processCard(callerFields('processCard', value) as never);
      expect(sent[0]!.body).toEqual(value);
    }
  });

  it('signs header operations with SVC-MERCHANTID, the API key header and SVC-MESSAGEHASH', async () => {
    sent.length = 0;
    await recording().payouts.getTransactionStatus('PAY-1', 'PTX-1');
    const headers = sent[0]!.headers;
    expect(headers.get('svc-merchantid')).toBe(sandbox.merchantUUID);
    expect(headers.get('svc-api-key')).toBe(sandbox.apiKey);
    expect(headers.get('svc-messagehash')).toMatch(/^[0-9a-f]{64}$/);
    expect(sent[0]!.url).toMatch(/\/payout\/PAY-1\/transaction\/PTX-1\/notify$/);
  });
});

describe('answers', () => {
  it('a refusal is a result, not an exception', async () => {
    const result = await client.processCapture({
      transactionID: 'x',
      transactionAmount: '50',
      transactionCurrency: 'AUD',
      captureAmount: '1.00',
    });
    expect(isRefused(result)).toBe(true);
    expect(result.responseMessage).toMatch(/^Field 'transactionAmount' is invalid/);
  });

  it('isApproved reads "0" and 0 alike; customFields turns [] into undefined', () => {
    expect(isApproved({ responseCode: '0' })).toBe(true);
    expect(isApproved({ responseCode: 0 })).toBe(true);
    expect(isApproved({ responseCode: '-2' })).toBe(false);
    expect(customFields({ custom1: 'a', custom2: [], custom3: [] })).toEqual({
      custom1: 'a',
      custom2: undefined,
      custom3: undefined,
    });
  });

  it('an unreachable gateway throws GatewayNetworkError; a non-contract answer GatewayHttpError', async () => {
    const down = createGatewayClient({ ...options(), baseUrl: 'http://127.0.0.1:9' });
    await expect(down.processVoid({ transactionID: 'x' })).rejects.toBeInstanceOf(GatewayNetworkError);
    const proxy = createGatewayClient({
      ...options(),
      fetch: async () =>
        new Response('<html>Bad gateway</html>', { status: 502, headers: { 'content-type': 'text/html' } }),
    });
    const error = await proxy.processVoid({ transactionID: 'x' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GatewayHttpError);
    expect((error as GatewayHttpError).status).toBe(502);
  });

  it('getSettlement returns the zip, and readSettlement gives its CSV rows', async () => {
    const zip = await client.getSettlement({
      settlementFrom: '2026-11-16',
      settlementTo: '2026-11-22',
      version: '1.6',
    });
    expect(zip).toBeInstanceOf(Uint8Array);
    const file = readSettlement(zip as Uint8Array);
    expect(file.name).toBe('settlement.csv');
    expect(file.columns).toEqual(doc.components.schemas.SettlementFile['x-csv-columns']['1.6']);
    expect(file.rows[0]).toMatchObject({
      transactionReferenceID: 'ORDER-1001',
      status: 'approved',
      transactionAmount: '10.00',
    });
  });
});

describe('types', () => {
  it('each function takes its own request, less what the client fills in, and returns its own result', () => {
    type Capture = Parameters<GatewayClient['processCapture']>[0];
    expectTypeOf<Capture>().toEqualTypeOf<
      Omit<S['ProcessCaptureRequest'], 'method' | 'merchantUUID' | 'apiKey' | 'hash'>
    >();
    expectTypeOf<ReturnType<GatewayClient['processCapture']>>().toEqualTypeOf<
      Promise<S['CaptureResult'] | S['Refusal']>
    >();
    expectTypeOf<ReturnType<GatewayClient['token']['processCard']>>().toEqualTypeOf<
      Promise<S['TransactionResult'] | S['Refusal']>
    >();
    expectTypeOf<Parameters<GatewayClient['payto']['createPayment']>>().toEqualTypeOf<
      [agreementIdentification: string, body: S['CreatePayToPaymentRequest']]
    >();
    expectTypeOf<ReturnType<GatewayClient['payid']['get']>>().toEqualTypeOf<
      Promise<S['PayIdResult'] | S['NppRefusal']>
    >();
    expectTypeOf<ReturnType<GatewayClient['getSettlement']>>().toEqualTypeOf<Promise<Uint8Array | S['Refusal']>>();
    // @ts-expect-error the client fills in the hash
    expectTypeOf<Capture>().toHaveProperty('hash');
  });

  it('isApproved narrows an answer to the result', async () => {
    const answer = {} as S['CaptureResult'] | S['Refusal'];
    if (isApproved(answer)) expectTypeOf(answer).toEqualTypeOf<S['CaptureResult']>();
  });
});

describe("the client teams' quick start", () => {
  it('is examples/client-quick-start.ts, and it runs', async () => {
    const readme = readFileSync(path.join(ROOT, 'docs/CLIENT-TEAMS.md'), 'utf8');
    const example = readFileSync(path.join(ROOT, 'examples/client-quick-start.ts'), 'utf8');
    expect(readme).toContain(asInstalled(example));
    // Against the sandbox the guide sends client teams to: the capture must find the authorisation it
    // made (a newcomer found the old example capturing a transaction only the mock knew).
    const sandboxProcess = await startSandboxProcess({ PGW_DB: ':memory:' });
    try {
      const { stdout } = await promisify(execFile)(
        process.execPath,
        [path.join(ROOT, 'examples/client-quick-start.ts')],
        { env: { ...process.env, GATEWAY_URL: sandboxProcess.base }, timeout: 20_000 },
      );
      expect(stdout.trim()).toMatch(/^captured 30\.00 of \S+$/);
    } finally {
      sandboxProcess.child.kill('SIGTERM');
    }
  });
});

describe('timeoutMs', () => {
  it('a gateway that never answers ends in GatewayNetworkError after timeoutMs', async () => {
    // Reads the request and never answers, as a mock waiting on a body it cannot parse did.
    const silent = (await import('node:http')).createServer(() => {});
    silent.listen(0, '127.0.0.1');
    await once(silent, 'listening');
    try {
      const slow = createGatewayClient({
        ...options(),
        baseUrl: `http://127.0.0.1:${(silent.address() as AddressInfo).port}`,
        timeoutMs: 150,
      });
      const error = await slow.processVoid({ transactionID: 'x' }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(GatewayNetworkError);
      expect((error as Error).message).toMatch(/no answer within 150 ms/);
    } finally {
      silent.closeAllConnections();
      silent.close();
    }
  });

  it('refuses a timeout that is not a finite number of milliseconds above 0', () => {
    for (const timeoutMs of [0, -1, Number.POSITIVE_INFINITY, Number.NaN]) {
      expect(() => createGatewayClient({ ...options(), timeoutMs })).toThrow(/timeoutMs must be/);
    }
  });
});
