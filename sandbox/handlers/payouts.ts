// Payouts: each transaction goes through the attempts its account gives in the public sandbox (an NPP
// attempt, then a DE attempt when NPP declines), each pending until the sandbox clock passes its end
// (payout-attempts.ts), and a payoutTransaction notification per transaction, once its last attempt
// has ended, when the payout has a notifyURL (payoutsDue, run before each delivery run).
import type { GatewayHandlers, HandlerContext } from '../../server-stubs/index.ts';
import { ok, type Sandbox } from '../context.ts';
import { refusedInteger, sandboxRefusals as refusals } from '../refusals.ts';
import { INVALID_BSB, PAYOUT_ACCOUNTS } from '../data.ts';
import { reference, transactionId } from '../ids.ts';
import type { Row } from '../store.ts';
import type { Clock } from '../clock.ts';
import { clockOf, onAccountTime, shifted } from '../clock-store.ts';
import { attemptsAt, endsAt, plan, RAIL_MS } from '../payout-attempts.ts';

type H = GatewayHandlers<HandlerContext>;

/** A payout transaction as it stands at the clock's now. */
export function payoutRecord(row: Row, clock: Clock) {
  return {
    payee: JSON.parse(row.payee),
    transaction: JSON.parse(row.detail),
    payouts: attemptsAt(JSON.parse(row.attempts), clock),
  };
}

/**
 * Queues the notification of each payout transaction whose last attempt has ended (notify_at passed),
 * once: the row is read FOR UPDATE and its notify_at cleared in the same transaction. Each merchant's
 * rows are judged on that merchant's own clock (clock-store.ts), the one its attempts were planned on;
 * each notification falls due at its notify_at.
 */
export async function payoutsDue(sb: Sandbox): Promise<number> {
  const { store, clock, notifier } = sb;
  const merchants = await store.all(
    'SELECT DISTINCT merchant_id FROM payout_transactions WHERE notify_at IS NOT NULL ORDER BY merchant_id',
  );
  let queued = 0;
  for (const { merchant_id } of merchants) {
    const account = { kind: 'merchant', id: String(merchant_id) };
    queued += await onAccountTime(store, clock, account, () =>
      store.transaction(async () => {
        const due = await store.all(
          'SELECT t.*, p.notify_url FROM payout_transactions t JOIN payouts p ON p.id = t.payout_id WHERE t.merchant_id = ? AND t.notify_at IS NOT NULL AND t.notify_at <= ? FOR UPDATE',
          merchant_id,
          clock.timestamp(),
        );
        // Due when its last attempt ended (in the queue's base time): when the clock was advanced past
        // that, its attempts run from then (notifier.ts), not from the advance.
        const offset = clock.offsetOf(clockOf(account));
        for (const t of due) {
          await notifier.payoutTransaction(account as never, t.notify_url, t.payout_id, t.id, payoutRecord(t, clock), {
            dueAt: shifted(String(t.notify_at), -offset),
          });
          await store.run('UPDATE payout_transactions SET notify_at = NULL WHERE id = ?', t.id);
        }
        return due.length;
      }),
    );
  }
  return queued;
}

export function payoutHandlers(sb: Sandbox) {
  const { store, clock, notifier } = sb;
  const payout = (merchant: string, idOrRef: string) =>
    store.get('SELECT * FROM payouts WHERE merchant_id = ? AND (id = ? OR reference = ?)', merchant, idOrRef, idOrRef);
  const transactions = (payoutId: string) =>
    store.all('SELECT * FROM payout_transactions WHERE payout_id = ? ORDER BY rowid', payoutId);
  const statusNow = (row: Row) => payoutRecord(row, clock).payouts.at(-1)?.status ?? 'pending';
  const summary = async (p: Row) => {
    const rows = (await transactions(p.id)).map((t) => ({
      transactionId: t.id,
      reference: t.reference,
      status: statusNow(t) as never,
    }));
    return {
      responseCode: 0,
      responseMessage: ok,
      result: {
        payoutId: p.id,
        reference: p.reference,
        // x-rollup: completed once no transaction has an attempt still pending.
        status: rows.every((t) => t.status !== 'pending') ? ('completed' as const) : ('pending' as const),
        transactions: rows,
      },
    };
  };
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
          const steps: (typeof PAYOUT_ACCOUNTS)[string] = PAYOUT_ACCOUNTS[t.transaction.accNumber] ?? [
            { type: 'NPP', status: 'approved' },
          ];
          const now = clock.now().getTime();
          const attempts = plan(steps, transactionId, now, { ...RAIL_MS, NPP: sb.waits.nppMs });
          const txId = await store.freshId('payout_transactions', 'id', () => reference('PTX'));
          await store.run(
            'INSERT INTO payout_transactions (id, payout_id, merchant_id, reference, payee, detail, attempts, notify_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
            txId,
            id,
            account.id,
            t.transaction.reference,
            JSON.stringify(t.payee),
            JSON.stringify(t.transaction),
            JSON.stringify(attempts),
            body.notifyURL ? clock.timestamp(endsAt(attempts)! - now) : null,
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
        for (const t of rows)
          await notifier.payoutTransaction(account, p.notify_url, p.id, t.id, payoutRecord(t, clock));
        return { responseCode: 0, responseMessage: ok, result: { payoutId: p.id, queued: rows.length } };
      }),
    getPayoutTransactionStatus: async ({ params }, { account }) => {
      const t = await transactionOf(account.id, params.payoutId, params.transactionId);
      return t
        ? { responseCode: 0, responseMessage: ok, result: payoutRecord(t, clock) }
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
  } satisfies Partial<H>;
}
