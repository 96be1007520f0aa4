// Run in a worker thread by time-bounds.test.ts: every date computation of runtime/gateway-time.ts,
// fed any day, instant and business-day list, answers (a day, a time) or throws a RangeError. A loop
// that never ends cannot fail a test in the thread it blocks, so the test waits for this thread's
// answer with a deadline: the answer names the first input that failed, or says none did.
import { parentPort, workerData } from 'node:worker_threads';
import fc from 'fast-check';
import { businessDayOnOrAfter, instantOf, wallTime } from '../../runtime/gateway-time.ts';

const ZONES = ['UTC', 'Australia/Sydney', 'Pacific/Kiritimati', 'America/Adak'];
const DAY_MS = 86_400_000;

/** Days as text: well formed in and out of the years the gateway writes, impossible ones, and noise. */
const day = fc.oneof(
  fc
    .date({ min: new Date(-8.64e15), max: new Date(8.64e15), noInvalidDate: true })
    .map((d) => d.toISOString().slice(0, d.toISOString().indexOf('T'))),
  fc
    .tuple(fc.integer({ min: 0, max: 99_999 }), fc.integer({ min: 0, max: 19 }), fc.integer({ min: 0, max: 39 }))
    .map(([y, m, d]) => `${String(y).padStart(4, '0')}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`),
  fc.constantFrom('9999-12-31', '9999-12-30', '0000-01-01', '+010000-01-01', '2026-02-31', '', 'NaN-NaN-NaN'),
  fc.string({ maxLength: 12 }),
);
const businessDays = fc.oneof(
  fc.uniqueArray(fc.integer({ min: 1, max: 7 }), { minLength: 1, maxLength: 7 }),
  fc.array(fc.integer({ min: -3, max: 12 }), { maxLength: 4 }),
);
const instant = fc.oneof(
  fc.double({ min: -9e15, max: 9e15, noNaN: false }),
  fc.constantFrom(Number.NaN, 253402300799999, 253402300800000, -62167219200000, -62167219200001, 8.64e15),
);

const isRangeError = (e: unknown) => e instanceof RangeError;

try {
  fc.assert(
    fc.property(day, businessDays, (d, days) => {
      let answer: string;
      try {
        answer = businessDayOnOrAfter(d, days);
      } catch (e) {
        return isRangeError(e);
      }
      // A day of the form, one of the business days, within the week from the day given.
      const at = Date.parse(`${answer}T00:00:00Z`);
      const from = Date.parse(`${d}T00:00:00Z`);
      return (
        /^\d{4}-\d{2}-\d{2}$/.test(answer) &&
        days.includes(new Date(at).getUTCDay() || 7) &&
        at >= from &&
        at - from < 7 * DAY_MS
      );
    }),
    { seed: workerData.seed, numRuns: 20_000 },
  );
  fc.assert(
    fc.property(instant, fc.constantFrom(...ZONES), (ms, zone) => {
      let text: string;
      try {
        text = wallTime(new Date(ms), zone);
      } catch (e) {
        return isRangeError(e);
      }
      // Written in the form, and read back to an instant the zone writes the same way.
      return /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/.test(text) && wallTime(instantOf(text, zone), zone) === text;
    }),
    { seed: workerData.seed + 1, numRuns: 20_000 },
  );
  fc.assert(
    fc.property(fc.oneof(day, fc.string({ maxLength: 24 })), fc.constantFrom(...ZONES), (text, zone) => {
      try {
        const at = instantOf(text, zone);
        return at instanceof Date;
      } catch (e) {
        return isRangeError(e);
      }
    }),
    { seed: workerData.seed + 2, numRuns: 20_000 },
  );
  parentPort!.postMessage({ ok: true });
} catch (error) {
  parentPort!.postMessage({ ok: false, message: (error as Error).message.split('\n').slice(0, 8).join('\n') });
}
