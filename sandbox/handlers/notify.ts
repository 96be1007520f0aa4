// A notification sent now about an object the account already has: simulateNotify (the gateway's
// notification simulator) and the control API's trigger (which may also set fields the spec lets a
// trigger set). Each event names the objects it can be about, found among the caller's own only:
//   directDebitOutcome  a direct debit (processDDebit's transactionID) or an authorisation (its fingerprint)
//   batchNotify         a batch (its batchUUID), or a card purchase made in one (its transactionID)
//   payoutTransaction   a payout transaction (its id or reference), or a payout (its id or reference:
//                       one notification for each of its transactions)
//   merchantCreated     a completed merchant request (its reference) of the caller's partner
import type { GatewayHandlers, HandlerContext, Refusal } from '../../server-stubs/index.ts';
import { customEcho, ok, type Sandbox } from '../context.ts';
import type { Overrides } from '../notification-overrides.ts';
import { refused, sandboxRefusals as refusals } from '../refusals.ts';
import { batchResult } from './batch.ts';
import { directDebitResult } from './direct-debit.ts';
import { payoutRecord } from './payouts.ts';

type H = GatewayHandlers<HandlerContext>;

export type NotifyEvent = 'directDebitOutcome' | 'batchNotify' | 'payoutTransaction' | 'merchantCreated';

export interface NotifyRequest {
  event: NotifyEvent;
  /** The object's identifier, as the caller named it. */
  id: string;
  /** Where to send it; the object's own notification address when not given. */
  url?: string;
  set?: Overrides;
}

/** The caller: a merchant, or a partner (merchantCreated). */
export interface Caller {
  kind: string;
  id: string;
  passphrase?: string;
}

/** LIKE's own characters in a value matched literally (ESCAPE '\'). */
const literal = (value: string) => value.replace(/[\\%_]/g, (c) => `\\${c}`);

const LAST_STATUS = 'result.payouts.-1.status';
const LAST_UPDATED = 'result.payouts.-1.lastUpdated';

/**
 * A payout notification's overrides, with the last attempt dated now (the payout zone's `now`) when
 * they change its status and set no time of their own: a return (trigger payoutReturned --for) happens
 * when it is told, on the account's clock, not when the attempt was paid.
 */
function withStatusDated(set: Overrides, last: { status: string } | undefined, now: string): Overrides {
  if (!Object.hasOwn(set, LAST_STATUS) || Object.hasOwn(set, LAST_UPDATED) || !last) return set;
  return set[LAST_STATUS] === last.status ? set : { ...set, [LAST_UPDATED]: now };
}

/**
 * Queues the notification(s) `request` asks for, inside the caller's transaction, and answers their
 * ids; or the refusal: the object is not the caller's (named by `field`), or it has no address and
 * none was given. An override the body's schema refuses throws OverrideRefused (the transaction rolls back).
 */
export async function queueNotificationFor(
  sb: Sandbox,
  caller: Caller,
  request: NotifyRequest,
  field: string,
): Promise<{ ids: number[] } | { refusal: Refusal }> {
  const { store, notifier } = sb;
  const { id, set } = request;
  const options = set ? { set } : {};
  const address = (own: string | null | undefined) => request.url ?? own ?? undefined;
  const noAddress = (what: string) => ({ refusal: refusals.noNotifyAddress(what) });
  switch (request.event) {
    case 'directDebitOutcome': {
      const debit = await store.get('SELECT * FROM direct_debits WHERE merchant_id = ? AND id = ?', caller.id, id);
      const auth = debit
        ? undefined
        : await store.get('SELECT * FROM dd_authorisations WHERE merchant_id = ? AND fingerprint = ?', caller.id, id);
      if (!debit && !auth) return { refusal: refusals.noSuchDirectDebit(field) };
      const url = address(auth?.notify_url);
      if (!url) return noAddress('direct debit');
      const outcome = debit
        ? directDebitResult(sb, debit)
        : { responseCode: '0', responseMessage: ok, ...customEcho('[]') };
      const status = outcome.responseCode === '0' ? 'approved' : outcome.responseCode === '10' ? 'pending' : 'declined';
      const queued = await notifier.directDebitOutcome(
        caller as never,
        url,
        auth?.hash_salt ?? '',
        {
          transactionID: id,
          status,
          responseCode: outcome.responseCode,
          responseMessage: outcome.responseMessage,
          ...(auth ? { fingerprint: auth.fingerprint } : {}),
          custom1: outcome.custom1,
          custom2: outcome.custom2,
          custom3: outcome.custom3,
        },
        options,
      );
      return { ids: [queued] };
    }
    case 'batchNotify': {
      let batch = await store.get('SELECT * FROM batches WHERE merchant_id = ? AND id = ?', caller.id, id);
      // A card purchase of the caller's made in a batch: its batch's notification.
      if (!batch && (await store.get('SELECT id FROM transactions WHERE merchant_id = ? AND id = ?', caller.id, id))) {
        const line = `%${literal(JSON.stringify({ transactionID: id }).slice(1, -1))}%`;
        batch = await store.get(
          `SELECT * FROM batches b WHERE b.merchant_id = ? AND (b.lines LIKE ? ESCAPE '\\' OR EXISTS (SELECT 1 FROM batch_lines l WHERE l.batch_id = b.id AND l.line LIKE ? ESCAPE '\\')) ORDER BY b.created_at LIMIT 1`,
          caller.id,
          line,
          line,
        );
      }
      if (!batch) return { refusal: refusals.noSuchBatch(field) };
      const url = address(batch.notify_url);
      if (!url) return noAddress('batch');
      return { ids: [await notifier.batchNotify(caller as never, url, await batchResult(store, batch), options)] };
    }
    case 'payoutTransaction': {
      const rows = await store.all(
        `SELECT t.*, p.notify_url FROM payout_transactions t JOIN payouts p ON p.id = t.payout_id
         WHERE t.merchant_id = ? AND (t.id = ? OR t.reference = ? OR p.id = ? OR p.reference = ?) ORDER BY t.rowid`,
        caller.id,
        id,
        id,
        id,
        id,
      );
      if (!rows.length) return { refusal: refusals.noSuchPayoutTransaction(field) };
      const url = address(rows[0]!.notify_url);
      if (!url) return noAddress('payout');
      const ids: number[] = [];
      for (const t of rows) {
        const record = payoutRecord(t, sb.clock);
        ids.push(
          await notifier.payoutTransaction(caller as never, url, t.payout_id, t.id, record, {
            ...options,
            ...(set ? { set: withStatusDated(set, record.payouts.at(-1), sb.clock.payoutTimestamp()) } : {}),
          }),
        );
      }
      return { ids };
    }
    case 'merchantCreated': {
      // The partner's own requests; a merchant's, those of its partner (who is notified, and signs).
      const partnerId =
        caller.kind === 'partner'
          ? caller.id
          : (await store.get('SELECT partner_id FROM accounts WHERE kind = ? AND id = ?', 'merchant', caller.id))
              ?.partner_id;
      const request_ = partnerId
        ? await store.get('SELECT * FROM merchant_requests WHERE partner_id = ? AND reference = ?', partnerId, id)
        : undefined;
      if (!request_?.merchant_id) return { refusal: refusals.noSuchMerchantRequest(field) };
      const partner = (await store.get('SELECT * FROM accounts WHERE kind = ? AND id = ?', 'partner', partnerId))!;
      const url = address(partner.notify_url);
      if (!url) return noAddress('partner account');
      const queued = await notifier.merchantCreated(
        { kind: 'partner', id: partner.id, passphrase: partner.passphrase },
        url,
        { requestReference: request_.reference, status: request_.status, merchantUUID: request_.merchant_id },
        options,
      );
      return { ids: [queued] };
    }
  }
}

export function notifyHandlers(sb: Sandbox) {
  const { store } = sb;
  return {
    simulateNotify: async ({ body }, { account }) =>
      store.transaction(async () => {
        if (!body.transactionID) return refused(refusals.transactionIdRequiredFor(body.event));
        const queued = await queueNotificationFor(
          sb,
          account,
          { event: body.event, id: body.transactionID, url: body.notifyURL },
          'transactionID',
        );
        return 'refusal' in queued ? refused(queued.refusal) : { responseCode: '0', responseMessage: ok };
      }),
  } satisfies Partial<H>;
}
