// A Sydney wall-clock time in the hour the clocks repeat (the first Sunday of April, 02:00 to 02:59,
// first AEDT and then AEST) stands for two instants, and one in the hour they skip (the first Sunday
// of October, 02:00 to 02:59) for none. The suite reads a recorded time as either of its instants: the
// pinned-instants test found it refusing the sandbox's payout times written a second before the
// clocks went back ("60 min after the answer"), reading them as the later one.
import { describe, expect, it } from 'vitest';
import { valueViolations } from '../../contract/value-rules.ts';
import { operations } from '../../generated/operations.ts';
import { instantsOf } from '../../runtime/gateway-time.ts';

const sydney = 'Australia/Sydney';
const iso = (dates: Date[]) => dates.map((d) => d.toISOString());

describe('instantsOf', () => {
  it('reads a time of the repeated hour as both its instants, earliest first', () => {
    expect(iso(instantsOf('2027-04-04 02:30:00', sydney))).toEqual([
      '2027-04-03T15:30:00.000Z',
      '2027-04-03T16:30:00.000Z',
    ]);
  });
  it('reads a time of the skipped hour as none', () => {
    expect(instantsOf('2026-10-04 02:30:00', sydney)).toEqual([]);
  });
  it('reads any other time as one, in either season', () => {
    expect(iso(instantsOf('2027-04-04 03:00:00', sydney))).toEqual(['2027-04-03T17:00:00.000Z']);
    expect(iso(instantsOf('2026-10-04 03:00:00', sydney))).toEqual(['2026-10-03T16:00:00.000Z']);
    expect(iso(instantsOf('2026-12-01 18:00:00', sydney))).toEqual(['2026-12-01T07:00:00.000Z']);
    expect(iso(instantsOf('2026-06-01 18:00:00', sydney))).toEqual(['2026-06-01T08:00:00.000Z']);
  });
});

describe('a recorded payout time in the repeated hour', () => {
  const op = operations.find((o) => o.operationId === 'getPayoutTransactionStatus')!;
  const answer = (at: string) => ({
    responseCode: 0,
    result: { payouts: [{ type: 'NPP', status: 'declined', createdAt: at, lastUpdated: at }] },
  });
  const late = (at: string, now: string) =>
    valueViolations(op.result, answer(at), new Date(now)).filter((v) => /after the answer|never shows/.test(v));

  it('is not after an answer given a second later, while AEDT runs', () => {
    expect(late('2027-04-04 02:59:57', '2027-04-03T15:59:58Z')).toEqual([]);
  });
  it('is after an answer given an hour before either reading', () => {
    expect(late('2027-04-04 02:59:57', '2027-04-03T14:00:00Z').join()).toMatch(/after the answer/);
  });
  it('is refused in the skipped hour: Sydney never shows it', () => {
    expect(late('2026-10-04 02:30:00', '2026-10-03T17:00:00Z').join()).toMatch(/never shows/);
  });
});

describe('the order of the times of payout attempts across the repeated hour', () => {
  const op = operations.find((o) => o.operationId === 'getPayoutTransactionStatus')!;
  const order = (payouts: Record<string, string>[]) =>
    valueViolations(op.result, { responseCode: 0, result: { payouts } }, undefined).filter((v) =>
      /before it was made|before attempt/.test(v),
    );
  const attempt = (type: string, status: string, createdAt: string, lastUpdated: string) => ({
    type,
    status,
    createdAt,
    lastUpdated,
  });

  it('takes an update written after the clocks went back (02:00 AEST) for an attempt made at 02:59:59 AEDT', () => {
    // The pinned-instants run under load: made a second before 03:00 AEDT, updated a second after.
    expect(order([attempt('NPP', 'declined', '2027-04-04 02:59:59', '2027-04-04 02:00:00')])).toEqual([]);
    expect(
      order([
        attempt('NPP', 'declined', '2027-04-04 02:59:59', '2027-04-04 02:59:59'),
        attempt('DE', 'approved', '2027-04-04 02:00:01', '2027-04-04 02:00:02'),
      ]),
    ).toEqual([]);
  });
  it('still refuses an update surely before the attempt was made', () => {
    expect(order([attempt('NPP', 'declined', '2027-04-04 03:30:00', '2027-04-04 02:00:00')]).join()).toMatch(
      /before it was made/,
    );
    expect(order([attempt('NPP', 'declined', '2026-12-01 10:00:01', '2026-12-01 10:00:00')]).join()).toMatch(
      /before it was made/,
    );
    expect(
      order([
        attempt('NPP', 'declined', '2026-12-01 10:00:00', '2026-12-01 10:05:00'),
        attempt('DE', 'approved', '2026-12-01 10:04:00', '2026-12-01 10:06:00'),
      ]).join(),
    ).toMatch(/before attempt 1 ended/);
  });
});
