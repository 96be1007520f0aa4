// Finding: the success checks took processDDebit's documented pending answer (responseCode 10) as its
// only success, so a server that debited at once and answered 0 failed "its success answer is
// reached", though the seed says "`0` means success" (§2, §7.1); and among several non-zero result
// examples the success was the first one listed. Success is now 0 (runtime/client.ts isApproved),
// or the one code an operation that documents no 0 documents as its result.
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { isSuccess, successWords } from '../../contract/coverage.ts';
import { runContract } from '../../contract/run.ts';
import { type ContractOperation, operations } from '../../generated/operations.ts';
import { brokenSandbox } from '../support/broken-variants.ts';
import { sandboxCredentials } from '../support/contract.ts';

const op = (id: string) => operations.find((o) => o.operationId === id)!;

describe("an operation's success answer", () => {
  it('is responseCode 0 for every operation, processDDebit too, and its documented pending 10 beside it', () => {
    const debit = op('processDDebit');
    expect(isSuccess(debit, 0)).toBe(true);
    expect(isSuccess(debit, 10)).toBe(true);
    expect(isSuccess(debit, 7)).toBe(false);
    expect(isSuccess(debit, -2)).toBe(false);
    expect(successWords(debit)).toBe('responseCode 0 or 10');
    expect(isSuccess(op('processCard'), 0)).toBe(true);
    expect(isSuccess(op('processCard'), 4)).toBe(false);
    expect(successWords(op('processCard'))).toBe('responseCode 0');
  });

  it('does not hang on the order of the examples: of several non-zero results none is chosen, 0 alone is success', () => {
    const debit = op('processDDebit');
    const results = ['processDDebitPending', 'processCardDeclined'];
    // Each its own operation (an id of its own: the old code kept one answer per operationId).
    const listed = (id: string, result: string[]): ContractOperation => ({
      ...debit,
      operationId: id as ContractOperation['operationId'],
      examples: { ...debit.examples, result },
    });
    for (const [id, result] of [
      ['either', results],
      ['other', [...results].reverse()],
    ] as const) {
      const o = listed(id, [...result]);
      expect(
        [0, 4, 10].map((code) => isSuccess(o, code)),
        id,
      ).toEqual([true, false, false]);
      expect(successWords(o), id).toBe('responseCode 0');
    }
  });

  it('passes a server whose processDDebit answers 0, debited at once', async () => {
    const broken = await brokenSandbox({
      name: 'processDDebit approved at once (responseCode 0)',
      kind: 'state',
      only: ['processDDebit'],
      answer: (o, _sent, got) =>
        o.operationId === 'processDDebit' && Number(got.responseCode) === 10
          ? { ...got, responseCode: '0', responseMessage: 'Transaction approved' }
          : undefined,
    });
    broken.server.listen(0, '127.0.0.1');
    await once(broken.server, 'listening');
    try {
      const results = await runContract({
        base: `http://127.0.0.1:${(broken.server.address() as AddressInfo).port}`,
        creds: sandboxCredentials(),
        // processDDebitAuth: the authorised account (its fingerprint) the debit is made on.
        only: ['processDDebit', 'processDDebitAuth'],
        wire: 'json',
      });
      const success = results.filter((r) => r.kind === 'state' && r.operationId === 'processDDebit');
      expect(success.map((r) => `${r.name}: ${r.status}${r.reason ? `: ${r.reason}` : ''}`)).toEqual([
        'its success answer is reached, on state the suite built: passed',
      ]);
      expect(results.filter((r) => r.status === 'failed').map((r) => `${r.name}: ${r.reason}`)).toEqual([]);
    } finally {
      broken.server.close();
      broken.close();
    }
  });
});
