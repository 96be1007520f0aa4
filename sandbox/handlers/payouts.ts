// Payouts: each transaction goes through the attempts its account gives in the public sandbox
// (an NPP attempt, then a DE attempt when NPP declines), all settled at once in the sandbox, and a
// payoutTransaction notification per transaction when the payout has a notifyURL.
import type { GatewayHandlers, HandlerContext } from '../../server-stubs/index.ts';
import { ok, type Sandbox } from '../context.ts';
import { refusedInteger, sandboxRefusals as refusals } from '../refusals.ts';
import { INVALID_BSB, PAYOUT_ACCOUNTS } from '../data.ts';
import { reference, transactionId } from '../ids.ts';
import type { Row } from '../store.ts';

type H = GatewayHandlers<HandlerContext>;

export function payoutRecord(row: Row) {
  return { payee: JSON.parse(row.payee), transaction: JSON.parse(row.detail), payouts: JSON.parse(row.attempts) };
}

export function payoutHandlers(
  sb: Sandbox,
): Pick<
  H,
  | 'createPayouts'
  | 'getPayoutStatus'
  | 'resendPayoutNotifications'
  | 'getPayoutTransactionStatus'
  | 'getPayoutTransactionNotify'
> {
  const { store, clock, notifier } = sb;
  const payout = (merchant: string, idOrRef: string) =>
    store.get('SELECT * FROM payouts WHERE merchant_id = ? AND (id = ? OR reference = ?)', merchant, idOrRef, idOrRef);
  const transactions = (payoutId: string) =>
    store.all('SELECT * FROM payout_transactions WHERE payout_id = ? ORDER BY rowid', payoutId);
  const finalStatus = (row: Row) => (JSON.parse(row.attempts) as { status: string }[]).at(-1)!.status;
  const summary = async (p: Row) => ({
    responseCode: 0,
    responseMessage: ok,
    result: {
      payoutId: p.id,
      reference: p.reference,
      status: 'completed' as const,
      transactions: (await transactions(p.id)).map((t) => ({
        transactionId: t.id,
        reference: t.reference,
        status: finalStatus(t),
      })),
    },
  });
  const transactionOf = async (merchant: string, payoutId: string, idOrRef: string) => {
    const p = await payout(merchant, payoutId);
    return (
      p &&
      store.get(
        'SELECT * FROM payout_transactions WHERE payout_id = ? AND (id = ? OR reference = ?)',
        p.id,
        idOrRef,
        idOrRef,
      )
    );
  };
  return {
    createPayouts: async ({ body }, { account }) =>
      store.transaction(async () => {
        const invalidAt = body.transactions.findIndex((t) => t.transaction.bsb === INVALID_BSB);
        if (invalidAt >= 0) return refusedInteger(refusals.unknownBsb(`transactions[${invalidAt}].transaction.bsb`));
        const id = await store.freshId('payouts', 'id', () => reference('PAY'));
        await store.run(
          'INSERT INTO payouts (id, merchant_id, reference, notify_url, created_at) VALUES (?, ?, ?, ?, ?)',
          id,
          account.id,
          body.reference,
          body.notifyURL ?? null,
          clock.timestamp(),
        );
        for (const t of body.transactions) {
          const steps = PAYOUT_ACCOUNTS[t.transaction.accNumber] ?? [{ type: 'NPP' as const, status: 'approved' }];
          const attempts = steps.map((s, i) => ({
            transactionId: transactionId(),
            status: s.status,
            type: s.type,
            // Made and settled in the last seconds, one after the other, none later than now.
            createdAt: clock.payoutTimestamp((i - steps.length) * 2000),
            lastUpdated: clock.payoutTimestamp((i - steps.length) * 2000 + 1000),
          }));
          const txId = await store.freshId('payout_transactions', 'id', () => reference('PTX'));
          await store.run(
            'INSERT INTO payout_transactions (id, payout_id, merchant_id, reference, payee, detail, attempts) VALUES (?, ?, ?, ?, ?, ?, ?)',
            txId,
            id,
            account.id,
            t.transaction.reference,
            JSON.stringify(t.payee),
            JSON.stringify(t.transaction),
            JSON.stringify(attempts),
          );
          if (body.notifyURL)
            await notifier.payoutTransaction(
              account,
              body.notifyURL,
              id,
              txId,
              payoutRecord((await store.get('SELECT * FROM payout_transactions WHERE id = ?', txId))!),
            );
        }
        return summary((await payout(account.id, id))!);
      }),
    getPayoutStatus: async ({ params }, { account }) => {
      const p = await payout(account.id, params.payoutId);
      return p ? summary(p) : refusedInteger(refusals.noSuchPayout());
    },
    resendPayoutNotifications: async ({ params }, { account }) =>
      store.transaction(async () => {
        const p = await payout(account.id, params.payoutId);
        if (!p) return refusedInteger(refusals.noSuchPayout());
        if (!p.notify_url) return refusedInteger(refusals.noNotifyUrl());
        const rows = await transactions(p.id);
        for (const t of rows) await notifier.payoutTransaction(account, p.notify_url, p.id, t.id, payoutRecord(t));
        return { responseCode: 0, responseMessage: ok, result: { payoutId: p.id, queued: rows.length } };
      }),
    getPayoutTransactionStatus: async ({ params }, { account }) => {
      const t = await transactionOf(account.id, params.payoutId, params.transactionId);
      return t
        ? { responseCode: 0, responseMessage: ok, result: payoutRecord(t) }
        : refusedInteger(refusals.noSuchPayoutTransaction('transactionId'));
    },
    getPayoutTransactionNotify: async ({ params }, { account }) => {
      const t = await transactionOf(account.id, params.payoutId, params.transactionId);
      if (!t) return refusedInteger(refusals.noSuchPayoutTransaction('transactionId'));
      const n = await notifier.last('payoutTransaction', t.id);
      if (!n) return refusedInteger(refusals.noNotificationSent());
      return {
        responseCode: 0,
        responseMessage: ok,
        result: {
          url: n.url,
          attempts: n.attempts,
          delivered: Boolean(n.delivered),
          ...(n.last_attempt_at ? { lastAttemptAt: n.last_attempt_at } : {}),
          payload: JSON.parse(n.body).result,
        },
      };
    },
  };
}
