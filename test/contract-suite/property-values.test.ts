// The property-based requests of an operation are drawn from its request forms' schemas with the run's
// seed: the same values for its JSON checks and for its form checks, and again in a later run of the
// same process (a test file runs the suite many times). They were drawn afresh by each check, about a
// tenth of a run's CPU; now once per form, count and seed, and each check still sends all of them.
import { afterEach, expect, it } from 'vitest';
import { allChecks } from '../../contract/run.ts';
import { requestValidators } from '../../contract/http.ts';
import { operations } from '../../generated/operations.ts';
import type { RunContext } from '../../contract/checks.ts';
import { sandboxCredentials } from '../support/contract.ts';

const op = operations.find((o) => o.operationId === 'refundCard')!;
const forms = op.forms ?? [op.request!];
const originals = forms.map((f) => requestValidators[f]!);
afterEach(() => {
  forms.forEach((f, i) => {
    requestValidators[f] = originals[i]!;
  });
});

it("draws an operation's property-based values once for both wire formats and for a later run", async () => {
  const checks = allChecks('both').filter((c) => c.operationId === 'refundCard' && c.kind === 'property');
  expect(checks.map((c) => c.wire ?? 'json')).toEqual(['json', 'form']);
  // The draw keeps each value its form's validator accepts: its calls are the draws.
  let validated = 0;
  forms.forEach((f, i) => {
    requestValidators[f] = Object.assign((v: unknown) => {
      validated++;
      return originals[i]!(v);
    }, originals[i]!);
  });
  // What each check sends: it fails at its first request (nothing listens on port 9); the values are drawn before it.
  const sent: string[] = [];
  const ctx: RunContext = {
    base: 'http://127.0.0.1:9',
    creds: sandboxCredentials(),
    mock: false,
    runs: 4,
    // A seed of this test's own: no other run in this worker drew with it.
    seed: 91_827_364,
    wire: 'json',
  };
  const drawing: number[] = [];
  for (const run of [1, 2])
    for (const c of checks) {
      const before = validated;
      await c.run({ ...ctx, wire: c.wire ?? 'json' }).then(
        () => sent.push(`${run} ${c.id}: no error`),
        (error: Error) => sent.push(`${run} ${c.id}: ${error.constructor.name}`),
      );
      drawing.push(validated - before);
    }
  // The JSON check of the first run draws; its form check and the second run's two send the same values.
  expect(drawing[0]).toBeGreaterThan(0);
  expect(drawing.slice(1), 'validator calls drawing values, by check after the first').toEqual([0, 0, 0]);
  expect(
    sent.every((s) => s.endsWith(': ExchangeFailed')),
    sent.join('\n'),
  ).toBe(true);
});
