// The request log hook (onRequest): one record per answered request, and on a -1 the check that
// failed, named for the log only: never in the answer, never with the key, passphrase or hash.
import { CLI_COMMAND } from '../../runtime/command.ts';
import { describe, expect, it } from 'vitest';
import { operations } from '../../generated/operations.ts';
import { createGateway, type RequestRecord } from '../../server-stubs/index.ts';
import { accounts, echoHandlers } from '../fixtures/example-handlers.ts';
import { buildRequest, operation, requestExamples, sandbox } from '../../contract/index.ts';

const records: RequestRecord[] = [];
const errors: string[] = [];
const gateway = createGateway({
  handlers: {
    ...echoHandlers(),
    processVoid: () => {
      throw new Error('boom');
    },
  },
  accounts,
  onRequest: (r) => records.push(r),
  logger: { warn() {}, error: (m, f) => errors.push(`${m} ${JSON.stringify(f)}`) },
});
const example = (id: string) => structuredClone(requestExamples(operation(id))[0]!.value) as Record<string, unknown>;

async function logged(
  id: string,
  body: Record<string, unknown> | undefined,
  extra: Record<string, string | undefined> = {},
) {
  records.length = 0;
  const request = buildRequest(operation(id), { body });
  const response = await gateway.handle({ ...request, headers: { ...request.headers, ...extra } });
  expect(records).toHaveLength(1);
  return { record: records[0]!, answer: JSON.parse(String(response.body)) };
}

describe('onRequest', () => {
  it('records verb, path, method, operationId, responseCode and time of an approved request', async () => {
    const { record } = await logged('processCapture', example('processCapture'));
    expect(record).toMatchObject({
      verb: 'POST',
      path: '/post',
      method: 'processCapture',
      operationId: 'processCapture',
      responseCode: '0',
      status: 200,
    });
    expect(record.ms).toBeGreaterThanOrEqual(0);
    expect(record.reason).toBeUndefined();
  });

  it.each([
    ['an unknown merchant', { merchantUUID: 'ffffffffffff' }, "unknown merchant 'ffffffffffff' (merchantUUID)"],
    ['a wrong api key', { apiKey: 'wrongkey' }, `apiKey is not the api key of merchant '${sandbox.merchantUUID}'`],
    [
      'a wrong hash',
      { hash: '0'.repeat(32) },
      // The hint names the program as it runs here (the npm script in a checkout, the bin in an install).
      `'hash' does not match recipe 'transaction' under the passphrase of merchant '${sandbox.merchantUUID}' (${CLI_COMMAND} sign processCapture --preimage`,
    ],
  ])('on %s, the log names the check; the answer stays the plain -1', async (_, change, reason) => {
    const { record, answer } = await logged('processCapture', { ...example('processCapture'), ...change });
    expect(answer).toEqual({ responseCode: '-1', responseMessage: 'Invalid authentication credentials' });
    expect(record.responseCode).toBe('-1');
    expect(record.reason).toContain(reason);
    for (const secret of [sandbox.passphrase, sandbox.apiKey, 'wrongkey', '0'.repeat(32)])
      expect(record.reason).not.toContain(secret);
  });

  it('on a header HMAC that does not match, the log names the header and its recipe', async () => {
    const id = operations.find((o) => o.headers)!.operationId;
    const body = operation(id).request ? example(id) : undefined;
    const { record } = await logged(id, body, { 'svc-messagehash': 'f'.repeat(64) });
    expect(record.reason).toContain("header SVC-MESSAGEHASH does not match recipe 'message'");
  });

  it('an unknown method is recorded with the method sent and no operationId', async () => {
    const { record, answer } = await logged('processCapture', { method: 'noSuchMethod' });
    expect(Number(answer.responseCode)).toBeLessThan(0);
    expect(record.method).toBe('noSuchMethod');
    expect(record.operationId).toBeUndefined();
  });

  it('a 5xx answer is logged by the server stubs', async () => {
    errors.length = 0;
    const { record } = await logged('processVoid', example('processVoid'));
    expect(record.status).toBe(500);
    expect(errors.join('\n')).toContain('processVoid');
  });

  it('a 5xx refusal (an operation without a handler) is logged by the server stubs too', async () => {
    const logged: string[] = [];
    const bare = createGateway({
      handlers: {},
      accounts,
      logger: { warn() {}, error: (m, f) => logged.push(`${m} ${JSON.stringify(f)}`) },
    });
    const response = await bare.handle(buildRequest(operation('processCapture'), { body: example('processCapture') }));
    expect(response.status).toBe(500);
    expect(logged.join('\n')).toContain('processCapture is not implemented');
  });
});
