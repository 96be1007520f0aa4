// The suite's own power: run against broken variants of the sandbox, one rule broken in each (a
// shape, an echo, a hash, a sum, a state rule, a refusal), it must fail each one; run through the
// same proxy with nothing broken, it must pass. The figure is in the README.
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { runContract } from '../../contract/run.ts';
import { summary, type Result } from '../../contract/report.ts';
import { CredentialsRefused } from '../../contract/credentials.ts';
import { breaks, brokenSandbox, type Break } from '../support/broken-variants.ts';
import { sandboxCredentials } from '../support/contract.ts';
import { writeSample } from '../support/samples.ts';

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
  const results = await resultsAgainst(b, only);
  if (results instanceof CredentialsRefused) return [`stopped: ${results.message}`];
  return results.filter((r) => r.status === 'failed').map((r) => `${r.operationId}: ${r.name}: ${r.reason}`);
}

async function resultsAgainst(b: Break, only = b.only): Promise<Result[] | CredentialsRefused> {
  const broken = await brokenSandbox(shortNpp(b));
  broken.server.listen(0, '127.0.0.1');
  await once(broken.server, 'listening');
  try {
    // JSON only: the proxy breaks JSON answers (a form request's XML answer passes it untouched).
    return await runContract({
      base: `http://127.0.0.1:${(broken.server.address() as AddressInfo).port}`,
      creds,
      only,
      wire: 'json',
    }).catch((error: unknown) => {
      // Refused credentials stop the run before any check: the stop is the catch.
      if (error instanceof CredentialsRefused) return error;
      throw error;
    });
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

describe('the success checks', () => {
  it('take the approval they are named after, not a decline, and say what came instead', async () => {
    const declining = breaks.find((b) => b.name.startsWith('every payframe purchase declined'))!;
    const failures = await failuresAgainst(declining);
    expect(failures.filter((f) => f.includes('its success answer is reached'))).toEqual([
      expect.stringMatching(
        /^processCard: its success answer is reached with the form processCard with a payframe token, on state the suite built: no success answer \(responseCode 0\) reached with the form processCard with a payframe token: the last of \d+ tries with the run's state answered responseCode 2 "Transaction declined", a decline \(/,
      ),
      expect.stringMatching(
        /^payframeProcessCard: its success answer is reached, on state the suite built: no success answer \(responseCode 0\) reached: the last of \d+ tries with the run's state answered responseCode 2 "Transaction declined", a decline \(/,
      ),
    ]);
  });
});

describe('the model-based sequences', () => {
  // The check by its id: every operation of its sequences sent (an operationId in --only narrows them).
  const MODEL =
    'processCapture/model-based-random-sequences-over-the-card-ledger-and-the-vault-keep-to-a-model-of-them';
  it('find a ledger that drifts from the model, shrunk to a short sequence printed one step a line, with the seed that replays it', async () => {
    const drift: Break = {
      name: 'queryCard forgets refunds',
      kind: 'state',
      only: ['processCapture'],
      answer: (op, _sent, got) =>
        op.operationId === 'queryCard' && Number(got.responseCode) === 0
          ? { ...got, refundedAmount: '0.00' }
          : undefined,
    };
    const results = await resultsAgainst(drift, [MODEL]);
    if (results instanceof CredentialsRefused) throw results;
    const model = results.find((r) => r.status === 'failed' && r.name.startsWith('model-based'));
    expect(model?.reason).toMatch(/^queryCard of a \w+ says amount \/ captured \/ refunded .*, the run made /);
    // The console: the counterexample under the reason, one step a line (not fast-check's report with
    // its line breaks escaped onto one line), the seed named.
    const lines = summary(results, 1).split('\n');
    const at = lines.findIndex((l) =>
      l.startsWith('      counterexample, the shortest failing sequence found (seed 20261122,'),
    );
    expect(at, lines.join('\n')).toBeGreaterThan(0);
    expect(lines[at - 1]).toBe(`      ${model!.reason}`);
    const steps = lines.slice(at + 1).filter((l) => /^ {8}\d+\. /.test(l));
    expect(steps[0]).toMatch(/^ {8}1\. (auth|purchase) \d+\.\d\d$/);
    expect(steps.some((l) => /\. refund #\d+ /.test(l))).toBe(true);
    expect(steps.at(-1)).toMatch(/\. query #\d+$/);
    expect(lines.filter((l) => l.includes('\\n'))).toEqual([]);
    writeSample('contract-model-counterexample', lines.slice(at - 2, at + 1 + steps.length).join('\n'));
  });

  const modelFailure = async (name: string) => {
    const results = await resultsAgainst(breaks.find((b) => b.name === name)!, [MODEL]);
    if (results instanceof CredentialsRefused) throw results;
    expect(results.map((r) => r.status)).toEqual(['failed']);
    return results[0]!;
  };

  it('end their counterexample at the step whose answer broke the contract', async () => {
    // An answer that breaks its schema failed every later sequence too: shrunk to no step at all.
    const failure = await modelFailure('addCard answers no ivrCardID');
    expect(failure.reason).toMatch(
      /^an answer broke the contract: addCard: AddCardResult: body must have required property 'ivrCardID'$/,
    );
    expect(failure.details?.slice(1)).toEqual(['  1. addCard']);
  });

  it("print as sent the failing step's request, not the last one shrinking tried", async () => {
    const failure = await modelFailure('a second void approved');
    expect(failure.details?.at(-1)).toMatch(/^ {2}\d+\. void #\d+$/);
    // The answer the reason quotes echoes the transaction its void was sent for.
    const voided = /"transactionID":"([^"]+)"/.exec(failure.reason!)?.[1];
    expect(voided).toBeDefined();
    expect(failure.request).toContain('"method":"processVoid"');
    expect(failure.request).toContain(`"transactionID":"${voided}"`);
  });
});
