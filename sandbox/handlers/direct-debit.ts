// Direct debit: authorisations (fingerprint, return and notify URLs), debits that stay pending
// (code 10) until their settlement date on the sandbox clock, and queries.
import type { GatewayHandlers, HandlerContext } from '../../server-stubs/index.ts';
import { customEcho, customOf, findByIdOrReference, ok, type Sandbox } from '../context.ts';
import { refused, sandboxRefusals as refusals } from '../refusals.ts';
import { scenarios } from '../../generated/scenarios.ts';
import { DIRECT_DEBIT_DAYS } from '../data.ts';
import { fingerprint as newFingerprint, transactionId } from '../ids.ts';
import { fromCents, toCents } from '../money.ts';
import type { Row } from '../store.ts';

type H = GatewayHandlers<HandlerContext>;

/** A debit's states as the spec words them (x-sandbox-scenarios.outcomes.directDebitStatus). */
const state = (name: 'pending' | 'approved' | 'dishonoured') =>
  scenarios.operations.queryDD.outcomes.find((o) => o.name === name)!;
const STATES = { pending: state('pending'), approved: state('approved'), dishonoured: state('dishonoured') };

export function directDebitResult(sb: Sandbox, row: Row) {
  const settled = sb.clock.date() >= row.settlement_date;
  const state = STATES[row.dishonoured_at ? 'dishonoured' : settled ? 'approved' : 'pending'];
  return {
    responseCode: String(state.responseCode),
    responseMessage: state.responseMessage,
    transactionID: row.id,
    ...(row.reference ? { transactionReferenceID: row.reference } : {}),
    transactionAmount: fromCents(row.amount),
    settlementDate: row.settlement_date,
    paymentAccountBSB: row.bsb,
    paymentAccountNumber: row.account_number,
    ...customEcho(row.custom),
  };
}

export function directDebitHandlers(sb: Sandbox) {
  const { store, clock, notifier } = sb;
  return {
    processDDebitAuth: async ({ body }, { account }) =>
      store.transaction(async () => {
        const fingerprint = newFingerprint();
        await store.run(
          'INSERT INTO dd_authorisations (fingerprint, merchant_id, bsb, account_number, account_name, email, notify_url, hash_salt, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
          fingerprint,
          account.id,
          body.paymentAccountBSB,
          body.paymentAccountNumber,
          body.paymentAccountName,
          body.customerEmail ?? null,
          body.notifyURL ?? null,
          body.hashSalt ?? '',
          clock.timestamp(),
        );
        if (body.notifyURL) {
          await notifier.directDebitOutcome(account, body.notifyURL, body.hashSalt ?? '', {
            transactionID: fingerprint,
            status: 'approved',
            responseCode: '0',
            responseMessage: ok,
            fingerprint,
            ...customEcho(customOf(body)),
          });
        }
        return {
          responseCode: '0',
          responseMessage: ok,
          fingerprint,
          paymentAccountBSB: body.paymentAccountBSB,
          paymentAccountNumber: body.paymentAccountNumber,
          paymentAccountName: body.paymentAccountName,
          ...(body.customerEmail ? { customerEmail: body.customerEmail } : {}),
          ...customEcho(customOf(body)),
        };
      }),
    processDDebit: async ({ body }, { account }) =>
      store.transaction(async () => {
        let bsb = body.paymentAccountBSB;
        let number = body.paymentAccountNumber;
        if (body.fingerprint) {
          const auth = await store.get(
            'SELECT * FROM dd_authorisations WHERE merchant_id = ? AND fingerprint = ?',
            account.id,
            body.fingerprint,
          );
          if (!auth) return refused(refusals.noSuchDirectDebitAuthorisation());
          bsb = auth.bsb;
          number = auth.account_number;
        }
        const id = await store.freshId('direct_debits', 'id', transactionId);
        await store.run(
          'INSERT INTO direct_debits (id, merchant_id, reference, amount, currency, bsb, account_number, settlement_date, custom, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
          id,
          account.id,
          body.transactionReferenceID ?? null,
          toCents(body.transactionAmount),
          body.transactionCurrency,
          bsb,
          number,
          clock.date(DIRECT_DEBIT_DAYS),
          customOf(body),
          clock.timestamp(),
        );
        return directDebitResult(sb, (await store.get('SELECT * FROM direct_debits WHERE id = ?', id))!);
      }),
    queryDD: async ({ body }, { account }) => {
      const row = await findByIdOrReference(
        store,
        'direct_debits',
        account.id,
        body.transactionID,
        body.transactionReferenceID,
      );
      if (!row)
        return body.transactionID
          ? refused(refusals.directDebitInvalidTransactionID())
          : refused(refusals.noSuchDirectDebit('transactionReferenceID'));
      return directDebitResult(sb, row);
    },
  } satisfies Partial<H>;
}
