// Finding: one account could move its own clock, by steps the control API allows (at most 365 days
// and 31,536,000 seconds a call), past the year 9999; its next purchase then computed a settlement
// day on a date the gateway cannot write (+010000-…, later Invalid Date), in a loop that never met a
// business day, and the whole instance answered no one, every account included. Now every date
// computation is bounded (runtime/gateway-time.ts: a day, a time or a RangeError), and an account's
// clock stays within 36,525 days (100 years) ahead of real time: an advance past it is refused -2
// naming the field and the rule, and nothing moves.
//
// The sandbox runs as its own process (as npm start runs it): a computation that never ends is then a
// request that times out here, not a test run that hangs. The date computations themselves run in a
// worker thread, for the same reason.
import { Worker } from 'node:worker_threads';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayRequest } from '../../server-stubs/index.ts';
import { startSandboxProcess, type SandboxProcess } from '../support/sandbox-process.ts';
import { sandbox as accounts } from '../../contract/index.ts';
import { merchant, purchase, signed } from './support.ts';

const RANGE_DAYS = 36_525;
/** A request that takes longer than this has hung (the sandbox answers these in milliseconds). */
const ANSWER_MS = 10_000;

let sandbox: SandboxProcess;
beforeAll(async () => {
  sandbox = await startSandboxProcess({ PGW_DB: ':memory:', PGW_QUIET: '1' });
});
afterAll(() => {
  sandbox?.child.kill('SIGKILL');
});

async function call(request: GatewayRequest): Promise<any> {
  const response = await fetch(`${sandbox.base}${request.url}`, {
    method: request.verb,
    headers: Object.fromEntries(Object.entries(request.headers).filter(([, v]) => v !== undefined)) as Record<
      string,
      string
    >,
    ...(request.body === undefined ? {} : { body: request.body as string }),
    signal: AbortSignal.timeout(ANSWER_MS),
  });
  return response.json();
}

function control(account: string, verb: string, path: string, body?: unknown): Promise<any> {
  return fetch(`${sandbox.base}/_sandbox${path}`, {
    method: verb,
    headers: {
      authorization: `Basic ${btoa(`${account}:${merchant.apiKey}`)}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(ANSWER_MS),
  }).then((r) => r.json());
}

describe('time without bounds', () => {
  it('every date computation ends, with an answer or a RangeError, whatever it is given', async () => {
    const worker = new Worker(new URL('./date-computations.ts', import.meta.url), { workerData: { seed: 3901 } });
    try {
      const answer = await new Promise<{ ok: boolean; message?: string }>((resolve, reject) => {
        const timer = setTimeout(
          () => resolve({ ok: false, message: 'a date computation did not end in 60 s' }),
          60_000,
        );
        worker.once('message', (m) => {
          clearTimeout(timer);
          resolve(m);
        });
        worker.once('error', reject);
      });
      expect(answer.message).toBeUndefined();
      expect(answer.ok).toBe(true);
    } finally {
      await worker.terminate();
    }
  }, 90_000);

  it('an account moving its clock by allowed steps is stopped at the range, and the instance answers every account', async () => {
    const steps = fc.sample(
      fc.oneof(
        fc.record({ days: fc.integer({ min: 1, max: 365 }) }),
        fc.record({ seconds: fc.integer({ min: 1, max: 31_536_000 }) }),
        {
          arbitrary: fc.record({
            days: fc.integer({ min: 300, max: 365 }),
            seconds: fc.integer({ min: 20_000_000, max: 31_536_000 }),
          }),
          weight: 6,
        },
      ),
      { seed: 3902, numRuns: 8000 },
    );
    let refusal: any;
    let ahead = 0;
    for (const step of steps) {
      const before = (await control(merchant.merchantUUID, 'GET', '/clock')).offsetSeconds;
      const answer = await control(merchant.merchantUUID, 'POST', '/clock/advance', step);
      if (answer.responseCode < 0) {
        refusal = { step, answer, before };
        break;
      }
      ahead = answer.offsetSeconds;
      // Well past the range: the year 9999 is ~8,000 years ahead, so the old clock went on past it.
      if (ahead > 10_000 * 365 * 86_400) break;
    }
    expect(refusal, `no advance was refused; the clock went ${Math.round(ahead / 86_400)} days ahead`).toBeDefined();
    const field =
      refusal.step.days === undefined ? 'seconds' : refusal.step.seconds === undefined ? 'days' : 'days and seconds';
    expect(refusal.answer).toEqual({
      responseCode: -2,
      responseMessage: expect.stringMatching(
        new RegExp(
          `^Field '${field}' is invalid: would move the clock more than ${RANGE_DAYS} days \\(100 years\\) ahead of real time; \\d+ seconds are left$`,
        ),
      ),
    });
    // The refused advance moved nothing, and the clock never left its range.
    const after = (await control(merchant.merchantUUID, 'GET', '/clock')).offsetSeconds;
    expect(Math.abs(after - refusal.before)).toBeLessThanOrEqual(1);
    expect(after).toBeLessThanOrEqual(RANGE_DAYS * 86_400 + 1);
    // The seconds left are exactly what the range still allows: an advance of them is taken.
    const left = Number(/(\d+) seconds are left/.exec(refusal.answer.responseMessage)![1]);
    if (left > 0)
      expect(
        (await control(merchant.merchantUUID, 'POST', '/clock/advance', { seconds: Math.min(left, 31_536_000) }))
          .responseCode,
      ).toBe(0);

    // The far-ahead merchant is served on its time (a settlement day worked out), and so is everyone else.
    for (const body of [purchase(), purchase({ transactionAmount: '11.00' })]) {
      const paid = await call(signed('processCard', body));
      expect(paid.responseCode, JSON.stringify(paid)).toBe('0');
      expect(paid.authSettledDate ?? paid.settlementDate ?? '').not.toMatch(/^\+|NaN/);
    }
    const partner = await control(accounts.partnerUUID, 'GET', '/clock');
    expect(partner.responseCode).toBe(0);
    expect(partner.offsetSeconds).toBe(0);
  }, 300_000);
});
