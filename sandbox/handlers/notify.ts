// simulateNotify: makes the sandbox send one of the contract's notifications now, for a subject
// that exists (a direct debit or its authorisation, a batch, a payout transaction, a merchant request).
import type { GatewayHandlers, HandlerContext } from '../../server-stubs/index.ts';
import { customEcho, ok, type Sandbox } from '../context.ts';
import { refused, sandboxRefusals as refusals } from '../refusals.ts';
import { batchResult } from './batch.ts';
import { directDebitResult } from './direct-debit.ts';
import { payoutRecord } from './payouts.ts';

type H = GatewayHandlers<HandlerContext>;

export function notifyHandlers(sb: Sandbox) {
  const { store, notifier } = sb;
  return {
    simulateNotify: async ({ body }, { account }) =>
      store.transaction(async () => {
        const id = body.transactionID;
        if (!id) return refused(refusals.transactionIdRequiredFor(body.event));
        const url = body.notifyURL;
        switch (body.event) {
          case 'directDebitOutcome': {
            const debit = await store.get(
              'SELECT * FROM direct_debits WHERE merchant_id = ? AND id = ?',
              account.id,
              id,
            );
            const auth = debit
              ? undefined
              : await store.get(
                  'SELECT * FROM dd_authorisations WHERE merchant_id = ? AND fingerprint = ?',
                  account.id,
                  id,
                );
            if (!debit && !auth) return refused(refusals.noSuchDirectDebit('transactionID'));
            const outcome = debit
              ? directDebitResult(sb, debit)
              : { responseCode: '0', responseMessage: ok, ...customEcho('[]') };
            const status =
              outcome.responseCode === '0' ? 'approved' : outcome.responseCode === '10' ? 'pending' : 'declined';
            await notifier.directDebitOutcome(account, url, auth?.hash_salt ?? '', {
              transactionID: id,
              status,
              responseCode: outcome.responseCode,
              responseMessage: outcome.responseMessage,
              ...(auth ? { fingerprint: auth.fingerprint } : {}),
              custom1: outcome.custom1,
              custom2: outcome.custom2,
              custom3: outcome.custom3,
            });
            break;
          }
          case 'batchNotify': {
            const batch = await store.get('SELECT * FROM batches WHERE merchant_id = ? AND id = ?', account.id, id);
            if (!batch) return refused(refusals.noSuchBatch('transactionID'));
            await notifier.batchNotify(account, url, await batchResult(store, batch));
            break;
          }
          case 'payoutTransaction': {
            const t = await store.get(
              'SELECT * FROM payout_transactions WHERE merchant_id = ? AND id = ?',
              account.id,
              id,
            );
            if (!t) return refused(refusals.noSuchPayoutTransaction('transactionID'));
            await notifier.payoutTransaction(account, url, t.payout_id, t.id, payoutRecord(t, sb.clock));
            break;
          }
          case 'merchantCreated': {
            const request = await store.get('SELECT * FROM merchant_requests WHERE reference = ?', id);
            if (!request?.merchant_id) return refused(refusals.noSuchMerchantRequest());
            await notifier.merchantCreated(account, url, {
              requestReference: request.reference,
              status: 'approved',
              merchantUUID: request.merchant_id,
            });
            break;
          }
        }
        return { responseCode: '0', responseMessage: ok };
      }),
  } satisfies Partial<H>;
}
