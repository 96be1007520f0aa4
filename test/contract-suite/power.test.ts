// The suite's own power: run against broken variants of the sandbox, one rule broken in each (a
// shape, an echo, a hash, a sum, a state rule, a refusal), it must fail each one; run through the
// same proxy with nothing broken, it must pass. The figure is in the README.
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { runContract } from '../../contract/run.ts';
import { CredentialsRefused } from '../../contract/credentials.ts';
import { breaks, brokenSandbox, type Break } from '../support/broken-variants.ts';
import { sandboxCredentials } from '../support/contract.ts';

const creds = sandboxCredentials();

/**
 * The payout scenario waits until a payout's NPP attempt has ended (2 s of the sandbox's time by
 * default): where a run checks getPayoutTransactionStatus, the sandbox's NPP attempt is pending
 * 100 ms (its PGW_SANDBOX_NPP_MS wait, set on the sandbox as it is made). The scenario still sees it
 * end declined and the DE attempt begin; other runs keep the default, so a break that needs a
 * transaction still pending (a payout summary completed too early) meets one.
 */
const shortNpp = (b: Break): Break =>
  b.only.includes('getPayoutTransactionStatus')
    ? {
        ...b,
        handlers: (handlers, sb) => {
          sb.waits.nppMs = 100;
          return b.handlers?.(handlers, sb) ?? {};
        },
      }
    : b;

async function failuresAgainst(b: Break, only = b.only): Promise<string[]> {
  const broken = await brokenSandbox(shortNpp(b));
  broken.server.listen(0, '127.0.0.1');
  await once(broken.server, 'listening');
  try {
    // JSON only: the proxy breaks JSON answers (a form request's XML answer passes it untouched).
    const results = await runContract({
      base: `http://127.0.0.1:${(broken.server.address() as AddressInfo).port}`,
      creds,
      only,
      wire: 'json',
    }).catch((error: unknown) => {
      // Refused credentials stop the run before any check: the stop is the catch.
      if (error instanceof CredentialsRefused) return error;
      throw error;
    });
    if (results instanceof CredentialsRefused) return [`stopped: ${results.message}`];
    return results.filter((r) => r.status === 'failed').map((r) => `${r.operationId}: ${r.name}: ${r.reason}`);
  } finally {
    broken.server.close();
    broken.close();
  }
}

describe('the contract-test suite against broken sandboxes', () => {
  it('has at least thirty breaks, over shapes, echoes, hashes, arithmetic, state and refusals', () => {
    expect(breaks.length).toBeGreaterThanOrEqual(30);
    expect(new Set(breaks.map((b) => b.kind))).toEqual(
      new Set(['shape', 'echo', 'hash', 'arithmetic', 'state', 'refusal', 'time', 'credentials']),
    );
  });

  it('passes the sandbox behind the same proxy with nothing broken, on every operation the breaks select', async () => {
    const only = [...new Set(breaks.flatMap((b) => b.only))];
    expect(await failuresAgainst({ name: 'nothing', kind: 'shape', only })).toEqual([]);
  });

  for (const b of breaks) {
    it(`catches: ${b.name} (${b.kind})`, async () => {
      const failures = await failuresAgainst(b);
      expect(failures.length).toBeGreaterThan(0);
      // A refused credential is named in the one line that stops the run.
      if (b.kind === 'credentials')
        expect(failures).toEqual([expect.stringMatching(/^stopped: the [\w -]+ credentials were refused/)]);
    });
  }
});

describe('the model-based sequences', () => {
  it('find a ledger that drifts from the model, shrunk to a short sequence, with the seed that replays it', async () => {
    const drift: Break = {
      name: 'queryCard forgets refunds',
      kind: 'state',
      only: ['processCapture'],
      answer: (op, _sent, got) =>
        op.operationId === 'queryCard' && Number(got.responseCode) === 0
          ? { ...got, refundedAmount: '0.00' }
          : undefined,
    };
    const failures = await failuresAgainst(drift);
    const model = failures.find((f) => f.includes('model-based'));
    expect(model).toMatch(/seed/i);
    expect(model).toMatch(/Counterexample/);
    expect(model).toMatch(/refund/);
  });
});
