// The sandbox keeps the spec's time rules: payout times in Australian Eastern time (Australia/Sydney,
// +11:00 in summer and +10:00 in winter), a card transaction dated with its Sydney business day (the
// next one from the evening cut-off, x-settlement-date), and a settlement file that lists nothing
// dated after the sandbox's today.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSettlement } from '../../runtime/settlement.ts';
import { instantOf, isoWeekday, wallTime } from '../../runtime/gateway-time.ts';
import { card, customer, entryTime, startSandbox, type TestSandbox } from './support.ts';

let t: TestSandbox;
beforeAll(async () => {
  t = await startSandbox();
});
afterAll(() => t.close());

/** Moves the sandbox clock so that it reads `sydney` (a wall-clock time in Australia/Sydney). */
const setSydneyTime = (sydney: string) =>
  t.sandbox.clock.advance(instantOf(sydney, 'Australia/Sydney').getTime() - t.sandbox.clock.now().getTime());

const purchase = () =>
  t.client.processCard({
    transactionAmount: '5.00',
    transactionCurrency: 'AUD',
    transactionProduct: 'Dated',
    ...customer,
    ...card.visa,
  } as never) as Promise<{ transactionID: string; authSettledDate: string }>;

const settlement = async (from: string, to: string) =>
  readSettlement((await t.client.getSettlement({ settlementFrom: from, settlementTo: to })) as Uint8Array).rows;

describe('times the gateway writes in Australian Eastern time', () => {
  for (const [season, sydney, utc] of [
    ['summer (AEDT, +11:00)', '2026-12-01 09:30:00', '2026-11-30 22:30:00'],
    ['winter (AEST, +10:00)', '2027-06-01 09:30:00', '2027-05-31 23:30:00'],
  ] as const) {
    it(`payout attempts are timed on Sydney's clock in ${season}`, async () => {
      setSydneyTime(sydney);
      expect(wallTime(t.sandbox.clock.now(), 'UTC')).toBe(utc);
      const created = (await t.client.payouts.create({
        reference: `TZ-${sydney.slice(0, 4)}`,
        transactions: [
          {
            payee: { name: 'Zone' },
            transaction: { reference: `TZ-${sydney.slice(0, 4)}-1`, amount: 1, bsb: '802950', accNumber: '123321' },
          },
        ],
      })) as { result: { payoutId: string; transactions: { transactionId: string }[] } };
      const status = (await t.client.payouts.getTransactionStatus(
        created.result.payoutId,
        created.result.transactions[0]!.transactionId,
      )) as { result: { payouts: { createdAt: string; lastUpdated: string }[] } };
      for (const attempt of status.result.payouts) {
        const lag = t.sandbox.clock.now().getTime() - instantOf(attempt.lastUpdated, 'Australia/Sydney').getTime();
        expect(lag).toBeGreaterThanOrEqual(0);
        expect(lag).toBeLessThan(60_000);
        expect(attempt.createdAt.slice(0, 10)).toBe(sydney.slice(0, 10));
      }
    });
  }
});

describe('settlement dates and files', () => {
  it("dates a purchase with its Sydney day, past UTC's midnight", async () => {
    setSydneyTime('2026-12-02 08:00:00'); // a Wednesday in Sydney, still Tuesday in UTC
    expect((await purchase()).authSettledDate).toBe('2026-12-02');
  });

  it('dates a purchase made from its 18:00 cut-off (Sydney) with the next business day', async () => {
    setSydneyTime('2026-12-01 17:59:58'); // a Tuesday, just before
    expect((await purchase()).authSettledDate).toBe('2026-12-01');
    setSydneyTime('2026-12-01 18:00:00');
    expect((await purchase()).authSettledDate).toBe('2026-12-02');
    setSydneyTime('2026-12-04 18:30:00'); // a Friday evening: the Monday after
    expect((await purchase()).authSettledDate).toBe('2026-12-07');
  });

  it('dates a weekend purchase with the Monday after, and lists it only once that Monday has come', async () => {
    setSydneyTime('2026-12-05 12:00:00'); // a Saturday
    const sale = await purchase();
    expect(sale.authSettledDate).toBe('2026-12-07');
    expect(isoWeekday(sale.authSettledDate)).toBe(1);
    const ids = async () => (await settlement('2026-12-01', '2026-12-31')).map((r) => r.transactionID);
    expect(await ids()).not.toContain(sale.transactionID);
    t.sandbox.clock.advanceDays(2);
    expect(await ids()).toContain(sale.transactionID);
  });

  it('lists no row dated after today, whatever range is asked', async () => {
    setSydneyTime('2026-12-09 10:00:00');
    await purchase();
    const today = t.sandbox.clock.settlementToday();
    setSydneyTime('2026-12-08 10:00:00'); // the day before: the purchase above is not settled yet
    const rows = await settlement('2026-11-01', '2027-01-31');
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.every((r) => r.settlementDate! <= '2026-12-08')).toBe(true);
    expect(today).toBe('2026-12-09');
  });

  it("times the file's entry when it was made, on the sandbox clock as Sydney's wall clock reads it", async () => {
    setSydneyTime('2026-12-09 10:00:07');
    const zip = (await t.client.getSettlement({
      settlementFrom: '2026-12-01',
      settlementTo: '2026-12-09',
    })) as Uint8Array;
    // A zip entry's time has two-second steps.
    expect(entryTime(zip)).toMatch(/^2026-12-09 10:00:0[678]$/);
  });
});
