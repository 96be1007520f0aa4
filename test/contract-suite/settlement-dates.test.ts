// Settlement dates from evidence (SettledDate's x-settlement-date, docs/RULES.md): the cut-off window
// is exactly what the recorded answers show, every recorded answer is accepted by the suite's value
// rule at the time it was made, the day the evidence rules out is refused, and inside the window both
// days are accepted. The sandbox's cut-off lies inside the window.
import { describe, expect, it } from 'vitest';
import { valueViolations } from '../../contract/value-rules.ts';
import { operations } from '../../generated/operations.ts';
import { settlementDates } from '../../generated/spec-constants.ts';
import {
  businessDayOnOrAfter,
  dayAfter,
  instantOf,
  settlementDayAt,
  settlementDaysAt,
  transactionIdTime,
  wallTime,
} from '../../runtime/gateway-time.ts';
import { doc } from '../support/contract.ts';

const mark = doc.components.schemas.SettledDate['x-settlement-date'];
const cut = mark.cutOff;
const zone = mark.zone as string;
const at = (sydney: string) => instantOf(sydney, zone);
const resultOf = (operationId: string) => operations.find((o) => o.operationId === operationId)!.result;
/** What the suite says of an answer carrying this authSettledDate, given at this instant. */
const judged = (operationId: string, day: string, now: Date) =>
  valueViolations(resultOf(operationId), { responseCode: '0', authSettledDate: day }, now);

const evidence = (cut.evidence as { operation: string; transactionID: string; answered: string }[]).map((e) => {
  const made = transactionIdTime(e.transactionID);
  if (!made) throw new Error(`${e.transactionID} is not a version-1 UUID`);
  const local = wallTime(made, zone);
  const own = businessDayOnOrAfter(local.slice(0, 10), mark.businessDays);
  const next = businessDayOnOrAfter(dayAfter(local.slice(0, 10)), mark.businessDays);
  return { ...e, made, time: local.slice(11), own, next };
});

describe('the cut-off, from the recorded answers', () => {
  it('each recorded answer is dated its own Sydney business day or the next one', () => {
    expect(evidence.length).toBeGreaterThanOrEqual(5);
    for (const e of evidence) expect([e.own, e.next], e.transactionID).toContain(e.answered);
    // The answer at 05:50 Sydney, 18:50 UTC the day before, rules out UTC's day.
    expect(evidence.some((e) => e.answered !== wallTime(e.made, 'UTC').slice(0, 10))).toBe(true);
  });

  it('the window is exactly what they show: the latest own-day time, the earliest next-day time', () => {
    const ownDay = evidence.filter((e) => e.answered === e.own).map((e) => e.time);
    const nextDay = evidence.filter((e) => e.answered !== e.own).map((e) => e.time);
    expect(cut.sameDayUntil).toBe(ownDay.sort().at(-1));
    expect(cut.nextDayFrom).toBe(nextDay.sort()[0]);
    expect(cut.sameDayUntil < cut.nextDayFrom).toBe(true);
    // The sandbox's cut-off inside it, and the generated constants the sandbox reads the same.
    expect(cut.sandbox > cut.sameDayUntil && cut.sandbox <= cut.nextDayFrom).toBe(true);
    expect(settlementDates.cutOff).toEqual({
      sameDayUntil: cut.sameDayUntil,
      nextDayFrom: cut.nextDayFrom,
      sandbox: cut.sandbox,
    });
  });

  it('the suite accepts every recorded answer at the time it was made, and refuses the other day', () => {
    for (const e of evidence) {
      expect(judged(e.operation, e.answered, e.made), e.transactionID).toEqual([]);
      // The other day, two minutes further from the window (the suite allows a minute of clock skew,
      // and the answers at its edges are the window's ends).
      const own = e.answered === e.own;
      const clear = new Date(e.made.getTime() + (own ? -120_000 : 120_000));
      expect(judged(e.operation, own ? e.next : e.own, clear).join(), e.transactionID).toMatch(
        /is not the day a transaction made at/,
      );
    }
  });

  it('the sandbox dates each recorded answer as the real service did', () => {
    for (const e of evidence) expect(settlementDayAt(e.made, mark), e.transactionID).toBe(e.answered);
  });
});

describe('the days the suite accepts, by the time of the answer (Sydney)', () => {
  const cases: [string, string, string[]][] = [
    ['a Tuesday morning', '2026-12-01 09:00:00', ['2026-12-01']],
    ['a Tuesday two minutes before the last own-day time seen', '2026-12-01 17:56:23', ['2026-12-01']],
    ['a Tuesday inside the window', '2026-12-01 18:10:00', ['2026-12-01', '2026-12-02']],
    ['a Tuesday two minutes after the first next-day time seen', '2026-12-01 18:27:24', ['2026-12-02']],
    ['a Tuesday night', '2026-12-01 23:30:00', ['2026-12-02']],
    ['a Friday inside the window', '2026-12-04 18:10:00', ['2026-12-04', '2026-12-07']],
    ['a Friday evening', '2026-12-04 19:00:00', ['2026-12-07']],
    ['a Saturday afternoon', '2026-12-05 13:00:00', ['2026-12-07']],
    ['a Sunday night', '2026-12-06 23:30:00', ['2026-12-07']],
    ['the night the clocks go back (AEDT to AEST)', '2027-04-04 02:30:00', ['2027-04-05']],
    ['the night the clocks go forward (AEST to AEDT)', '2026-10-04 03:30:00', ['2026-10-05']],
  ];
  for (const [what, sydney, days] of cases)
    it(`${what}: ${days.join(' or ')}`, () => {
      expect(settlementDaysAt(at(sydney), mark)).toEqual(days);
      // A minute away from a boundary, the skew allows the day across it: these cases stay clear of one.
      for (const day of days) expect(judged('processCard', day, at(sydney))).toEqual([]);
      const ruled = [dayAfter(days.at(-1)!), '2026-12-08'].filter((d) => !days.includes(d));
      for (const day of ruled) expect(judged('processCard', day, at(sydney))).not.toEqual([]);
    });
});
