// Finding: payouts accepted and stored amounts with sub-cent digits, zero and negative zero; agreement
// terms accepted sub-cent maximums. Every amount a request sends in the major unit (payouts, PayTo
// payments and agreement terms, PayID refunds) is whole cents and above zero, by one rule of the spec
// (fields.yaml#/PositiveMoney, x-decimals: 2), so the validators refuse it -2 naming the field before
// any handler runs, and nothing is stored.
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { counts, hardeningSandbox, send, signed } from './support.ts';

const sb = await hardeningSandbox();
afterAll(() => sb.close());

/** The request text with `"amount":AMOUNT` written as given (-0 and 1.005 as JSON text, not as JSON.stringify writes them). */
function withAmount(operationId: string, body: object, amount: string, params?: Record<string, string>) {
  const text = JSON.stringify(body).replace('"@AMOUNT@"', amount);
  const request = signed(operationId, JSON.parse(text), params ? { params } : {});
  return { ...request, body: text };
}

const payId = 'cents-1@merchant.payid.test';
let transactionId = '';
let agreementIdentification = '';

const SHAPES: [string, string, (amount: string) => ReturnType<typeof withAmount>][] = [
  [
    'createPayouts',
    'transactions[0].transaction.amount',
    (a) =>
      withAmount(
        'createPayouts',
        {
          reference: 'PO-C',
          transactions: [
            {
              payee: { name: 'Sam' },
              transaction: { reference: 'PO-C-1', amount: '@AMOUNT@', bsb: '802950', accNumber: '123321' },
            },
          ],
        },
        a,
      ),
  ],
  [
    'createAgreement',
    'agreement.payment.maximum',
    (a) =>
      withAmount(
        'createAgreement',
        {
          payer: { name: 'Jane', account: { name: 'Jane', bsb: '802950', accountNumber: '123321' } },
          agreement: {
            arrangement: 'Gym',
            payment: { type: 'BALN', frequency: 'ADHO', maximum: '@AMOUNT@', pointInTime: 4 },
          },
        },
        a,
      ),
  ],
  [
    'createPayToPayment',
    'transaction.amount',
    (a) =>
      withAmount(
        'createPayToPayment',
        { payer: { name: 'Jane' }, transaction: { reference: 'PT-C', amount: '@AMOUNT@' } },
        a,
        { agreementIdentification },
      ),
  ],
  [
    'refundPayIdTransaction',
    'amount',
    (a) => withAmount('refundPayIdTransaction', { amount: '@AMOUNT@' }, a, { transactionId }),
  ],
];

/** Amounts no gateway takes: a fraction of a cent, zero in each spelling, below zero. */
const badAmount = fc.oneof(
  fc
    .tuple(fc.integer({ min: 0, max: 99_999 }), fc.integer({ min: 1, max: 9 }), fc.integer({ min: 0, max: 99 }))
    .map(([units, mill, cents]) => `${units}.${String(cents).padStart(2, '0')}${mill}`),
  fc.constantFrom('0', '0.0', '0.00', '-0', '-0.0', '0e5', '-0e-3', '1e-7', '0.001', '1.005', '0.30000000000000004'),
  fc.integer({ min: 1, max: 10_000_000 }).map((n) => `-${(n / 100).toFixed(2)}`),
  fc
    .double({ noNaN: true, noDefaultInfinity: true, min: -1e6, max: 1e6 })
    .filter((d) => d <= 0 || Number(d.toFixed(2)) !== d)
    .map(String),
);

describe('every amount is whole cents above zero', () => {
  it('setup', async () => {
    expect((await send(sb, signed('createPayId', { payId, name: 'Jane' }))).json.responseCode).toBe(0);
    transactionId = (await send(sb, signed('listPayIdTransactions', {}, { params: { payId } }))).json.result
      .transactions[0].transactionId;
    agreementIdentification = (
      await send(
        sb,
        signed('createAgreement', {
          payer: { name: 'Jane', account: { name: 'Jane', bsb: '802950', accountNumber: '123321' } },
          agreement: { arrangement: 'Gym', payment: { type: 'BALN', frequency: 'ADHO', maximum: 500, pointInTime: 4 } },
        }),
      )
    ).json.result.agreementIdentification;
  });

  it.each(SHAPES)(
    '%s: a sub-cent, zero or negative %s is refused -2 naming it, nothing stored',
    async (_, field, request) => {
      await fc.assert(
        fc.asyncProperty(badAmount, async (amount) => {
          const before = await counts(sb);
          const answer = await send(sb, request(amount));
          expect(answer.status, amount).toBeLessThan(500);
          expect(answer.json, amount).toMatchObject({
            responseCode: -2,
            responseMessage: expect.stringContaining(`'${field}'`),
          });
          expect(await counts(sb)).toEqual(before);
        }),
        { seed: 2814, numRuns: 60 },
      );
    },
  );

  it.each(SHAPES)('%s: whole cents pass the rule', async (_, field, request) => {
    for (const amount of ['0.01', '1.15', '0.29', '25.5', '7', '100.07']) {
      const answer = await send(sb, request(amount));
      expect(answer.json.responseMessage ?? '', `${field} ${amount}`).not.toMatch(/whole cents|must be >/);
    }
  });
});
