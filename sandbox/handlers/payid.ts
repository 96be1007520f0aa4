// PayIDs and the payments they receive. Each new PayID receives one sandbox payment at once, so that
// its transactions and refunds can be tried (the API has no way to pay into a PayID).
import type { GatewayHandlers, HandlerContext } from '../../server-stubs/index.ts';
import { ok, type Sandbox } from '../context.ts';
import { refusedInteger, sandboxRefusals as refusals } from '../refusals.ts';
import { PAYID_WELCOME_PAYMENT } from '../data.ts';
import { transactionId } from '../ids.ts';
import { centsToNumber, numberToCents } from '../money.ts';
import type { Row } from '../store.ts';

type H = GatewayHandlers<HandlerContext>;

/**
 * A PayID in the form it is compared and stored in: an e-mail PayID is one address whatever its
 * letter case (spec: PayId, x-inferred), so it is kept in lower case. PayIDs are ASCII (format
 * email), where JavaScript's and both stores' lower() agree; rows kept before this rule are found
 * by lower(pay_id).
 */
const payIdKey = (payId: string) => payId.toLowerCase();

const record = (row: Row) => ({ name: row.name, payId: row.pay_id, status: row.status });
const transaction = (row: Row) => ({
  transactionId: row.id,
  payId: row.pay_id,
  amount: centsToNumber(row.amount),
  ...(row.refunded ? { refundedAmount: centsToNumber(row.refunded) } : {}),
  ...(row.payer_name ? { payerName: row.payer_name } : {}),
  ...(row.reference ? { reference: row.reference } : {}),
  status:
    row.refunded === 0
      ? ('received' as const)
      : row.refunded >= row.amount
        ? ('refunded' as const)
        : ('partiallyRefunded' as const),
  createdAt: row.created_at,
});

export function payIdHandlers(sb: Sandbox) {
  const { store, clock } = sb;
  // lock: read to be changed (FOR UPDATE, until the commit).
  const find = (merchant: string, payId: string, lock = false) =>
    store.get(
      `SELECT * FROM payids WHERE merchant_id = ? AND lower(pay_id) = ?${lock ? ' FOR UPDATE' : ''}`,
      merchant,
      payIdKey(payId),
    );
  const answer = (row: Row) => ({ responseCode: 0, responseMessage: ok, result: record(row) });
  return {
    createPayId: async ({ body }, { account }) =>
      store.transaction(async () => {
        const payId = payIdKey(body.payId);
        if (await store.get('SELECT 1 FROM payids WHERE lower(pay_id) = ?', payId))
          return refusedInteger(refusals.payIdTaken());
        await store.run(
          'INSERT INTO payids (pay_id, merchant_id, name, status, reference, created_at) VALUES (?, ?, ?, ?, ?, ?)',
          payId,
          account.id,
          body.name,
          'Enabled',
          body.reference ?? null,
          clock.timestamp(),
        );
        const w = PAYID_WELCOME_PAYMENT;
        await store.run(
          'INSERT INTO payid_transactions (id, merchant_id, pay_id, amount, payer_name, reference, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
          await store.freshId('payid_transactions', 'id', transactionId),
          account.id,
          payId,
          numberToCents(w.amount),
          w.payerName,
          w.reference,
          clock.timestamp(),
        );
        return answer((await find(account.id, payId))!);
      }),
    getPayId: async ({ params }, { account }) => {
      const row = await find(account.id, params.payId);
      return row ? answer(row) : refusedInteger(refusals.noSuchPayId());
    },
    updatePayId: async ({ body, params }, { account }) =>
      store.transaction(async () => {
        const row = await find(account.id, params.payId, true);
        if (!row) return refusedInteger(refusals.noSuchPayId());
        await store.run('UPDATE payids SET name = ? WHERE pay_id = ?', body.name, row.pay_id);
        return answer((await find(account.id, params.payId))!);
      }),
    updatePayIdStatus: async ({ body, params }, { account }) =>
      store.transaction(async () => {
        const row = await find(account.id, params.payId, true);
        if (!row) return refusedInteger(refusals.noSuchPayId());
        await store.run('UPDATE payids SET status = ? WHERE pay_id = ?', body.status, row.pay_id);
        return answer((await find(account.id, params.payId))!);
      }),
    listPayIds: async (_input, { account }) => ({
      responseCode: 0,
      responseMessage: ok,
      result: {
        payIds: (
          await store.all('SELECT * FROM payids WHERE merchant_id = ? ORDER BY created_at, rowid', account.id)
        ).map(record),
      },
    }),
    listPayIdTransactions: async ({ body, params }, { account }) => {
      const payId = await find(account.id, params.payId);
      if (!payId) return refusedInteger(refusals.noSuchPayId());
      const rows = await store.all(
        'SELECT * FROM payid_transactions WHERE merchant_id = ? AND pay_id = ? AND (CAST(? AS TEXT) IS NULL OR substr(created_at, 1, 10) >= ?) AND (CAST(? AS TEXT) IS NULL OR substr(created_at, 1, 10) <= ?) ORDER BY created_at DESC, rowid DESC',
        account.id,
        payId.pay_id,
        body.from ?? null,
        body.from ?? null,
        body.to ?? null,
        body.to ?? null,
      );
      return { responseCode: 0, responseMessage: ok, result: { transactions: rows.map(transaction) } };
    },
    refundPayIdTransaction: async ({ body, params }, { account }) =>
      store.transaction(async () => {
        // Locked until the commit: refunds of one payment take turns, and none passes what it received.
        const row = await store.get(
          'SELECT * FROM payid_transactions WHERE merchant_id = ? AND id = ? FOR UPDATE',
          account.id,
          params.transactionId,
        );
        if (!row) return refusedInteger(refusals.noSuchPayment('transactionId'));
        const cents = numberToCents(body.amount);
        if (cents === undefined) return refusedInteger(refusals.notWholeCents('amount'));
        if (cents <= 0) return refusedInteger(refusals.notPositiveCents('amount'));
        if (row.refunded + cents > row.amount) return refusedInteger(refusals.refundExceedsPayment());
        await store.run('UPDATE payid_transactions SET refunded = refunded + ? WHERE id = ?', cents, row.id);
        return {
          responseCode: 0,
          responseMessage: ok,
          result: {
            refundId: transactionId(),
            transaction: transaction((await store.get('SELECT * FROM payid_transactions WHERE id = ?', row.id))!),
          },
        };
      }),
  } satisfies Partial<H>;
}
