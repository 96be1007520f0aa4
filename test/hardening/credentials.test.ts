// Finding: a known merchant and a right key with a wrong hash each cost ~3 µs more than an unknown
// merchant, which answered at once: timing told an attacker which merchants exist and which key is
// right. Every refusal now does the same work: the key compared and every hash computed, its legacy
// form too (against a decoy account's secrets when the account is unknown). Counted here in digests,
// not timed.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { buildRequest, operation, requestExamples } from '../../contract/index.ts';
import { accounts, echoHandlers } from '../fixtures/example-handlers.ts';
import { nodeDigests } from '../../server-stubs/index.ts';
import { createGateway } from '../../server-stubs/index.ts';

const gateway = createGateway({ handlers: echoHandlers(), accounts });
afterEach(() => vi.restoreAllMocks());

async function digestsFor(
  operationId: string,
  change: Record<string, unknown>,
  headers?: Record<string, string>,
): Promise<{ code: number; digests: number }> {
  const md5 = vi.spyOn(nodeDigests, 'md5Hex');
  const hmac = vi.spyOn(nodeDigests, 'hmacSha256Hex');
  const op = operation(operationId);
  const body = { ...requestExamples(op)[0]!.value, ...change };
  const response = await gateway.handle(buildRequest(op, { body, ...(headers ? { headers } : {}) }));
  const digests = md5.mock.calls.length + hmac.mock.calls.length;
  vi.restoreAllMocks();
  return { code: Number(JSON.parse(String(response.body)).responseCode), digests };
}

describe('credential checks cost the same whatever fails', () => {
  it('body credentials: unknown merchant, wrong key, wrong hash', async () => {
    // Warm md5(passphrase)'s cache for the decoy and the real account, as on any running server.
    await digestsFor('processCapture', { merchantUUID: 'ffffffffffff' });
    await digestsFor('processCapture', { hash: '0'.repeat(32) });
    const unknown = await digestsFor('processCapture', { merchantUUID: 'ffffffffffff' });
    const wrongKey = await digestsFor('processCapture', { apiKey: 'wrongkey' });
    const wrongHash = await digestsFor('processCapture', { hash: '0'.repeat(32) });
    expect([unknown.code, wrongKey.code, wrongHash.code]).toEqual([-1, -1, -1]);
    expect(wrongHash.digests).toBeGreaterThan(0);
    expect(unknown.digests).toBe(wrongHash.digests);
    // The example's hash is right: a wrong key in front of it costs what a wrong hash costs, though
    // an accepted request skips the legacy form (the answer says it was accepted anyway).
    expect(wrongKey.digests).toBe(wrongHash.digests);
  });

  it('header credentials: unknown merchant, wrong key, wrong hash', async () => {
    const unknown = await digestsFor('createPayToPayment', {}, { 'svc-merchantid': 'nobody' });
    const wrongKey = await digestsFor('createPayToPayment', {}, { 'svc-apikey': 'wrongkey' });
    const wrongHash = await digestsFor('createPayToPayment', {}, { 'svc-messagehash': 'f'.repeat(64) });
    expect([unknown.code, wrongKey.code, wrongHash.code]).toEqual([-1, -1, -1]);
    expect(unknown.digests).toBe(wrongHash.digests);
    expect(wrongKey.digests).toBe(wrongHash.digests);
  });
});
