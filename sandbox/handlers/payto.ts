// PayTo agreements and payments. The sandbox's payers approve an agreement at once (it is active on
// creation); a payment is approved unless it is above the agreement's maximum (refused) or the
// payer's account is 11111111 (declined by the payer's bank).
import type { GatewayHandlers, HandlerContext } from '../../server-stubs/index.ts';
import { askedOutcome } from '../scenarios.ts';
import { ok, type Sandbox } from '../context.ts';
import { refusedInteger, sandboxRefusals as refusals } from '../refusals.ts';
import { reference, transactionId } from '../ids.ts';
import { centsToNumber, numberToCents } from '../money.ts';
import type { Row } from '../store.ts';

type H = GatewayHandlers<HandlerContext>;

const DECLINING_ACCOUNT = '11111111';

function merge(a: any, b: any): any {
  if (!b || typeof b !== 'object' || Array.isArray(b)) return b;
  const out = { ...(a ?? {}) };
  for (const [k, v] of Object.entries(b)) out[k] = merge(out[k], v);
  return out;
}

export function paytoHandlers(sb: Sandbox) {
  const { store, clock } = sb;
  const agreementResult = (row: Row) => ({
    responseCode: 0,
    responseMessage: ok,
    result: { agreementIdentification: row.id, status: row.status, agreement: JSON.parse(row.terms) },
  });
  // lock: read to be changed (FOR UPDATE, until the commit): amendments and payments of one agreement take turns.
  const agreement = (merchant: string, id: string, lock = false) =>
    store.get(`SELECT * FROM agreements WHERE merchant_id = ? AND id = ?${lock ? ' FOR UPDATE' : ''}`, merchant, id);
  const record = async (row: Row) => {
    const payer = JSON.parse((await store.get('SELECT payer FROM agreements WHERE id = ?', row.agreement_id))!.payer);
    return {
      id: row.id,
      agreementIdentification: row.agreement_id,
      status: row.status,
      reference: row.reference,
      ...(row.product ? { product: row.product } : {}),
      amount: centsToNumber(row.amount),
      ...(row.last_payment === null ? {} : { lastPayment: Boolean(row.last_payment) }),
      createdAt: row.created_at,
      payer: { account: payer.account },
    };
  };
  const payment = (merchant: string, agreementId: string, id: string) =>
    store.get(
      'SELECT * FROM payto_payments WHERE merchant_id = ? AND agreement_id = ? AND id = ?',
      merchant,
      agreementId,
      id,
    );
  return {
    createAgreement: async ({ body }, { account }) =>
      store.transaction(async () => {
        const id = await store.freshId('agreements', 'id', () => reference('AGR'));
        await store.run(
          'INSERT INTO agreements (id, merchant_id, status, payer, terms, created_at) VALUES (?, ?, ?, ?, ?, ?)',
          id,
          account.id,
          'active',
          JSON.stringify(body.payer),
          JSON.stringify(body.agreement),
          clock.timestamp(),
        );
        return agreementResult((await agreement(account.id, id))!);
      }),
    amendAgreement: async ({ body, params }, { account }) =>
      store.transaction(async () => {
        const row = await agreement(account.id, params.agreementIdentification, true);
        if (!row) return refusedInteger(refusals.noSuchAgreement());
        if (row.status === 'cancelled') return refusedInteger(refusals.agreementCancelled());
        await store.run(
          'UPDATE agreements SET terms = ? WHERE id = ?',
          JSON.stringify(merge(JSON.parse(row.terms), body.agreement)),
          row.id,
        );
        return agreementResult((await agreement(account.id, row.id))!);
      }),
    createPayToPayment: async ({ body, params }, { account }) =>
      store.transaction(async () => {
        const row = await agreement(account.id, params.agreementIdentification, true);
        if (!row) return refusedInteger(refusals.noSuchAgreement());
        if (row.status !== 'active') return refusedInteger(refusals.agreementNotActive(row.status));
        const cents = numberToCents(body.transaction.amount);
        if (cents === undefined) return refusedInteger(refusals.notWholeCents('transaction.amount'));
        const maximum: number | undefined = JSON.parse(row.terms).payment?.maximum;
        if (maximum !== undefined && cents > Math.floor(maximum * 100 + 1e-6))
          return refusedInteger(refusals.aboveAgreementMaximum(maximum));
        const payer = JSON.parse(row.payer);
        // A scenario's status (approved, declined, pending) is stored: the payment's queries answer it.
        const asked = askedOutcome('payToPaymentCreated')?.set?.['result.transaction.status'] as
          | 'approved'
          | 'declined'
          | 'pending'
          | undefined;
        const status = asked ?? (payer.account.accountNumber === DECLINING_ACCOUNT ? 'declined' : 'approved');
        const id = await store.freshId('payto_payments', 'id', transactionId);
        const t = body.transaction;
        await store.run(
          'INSERT INTO payto_payments (id, merchant_id, agreement_id, status, reference, product, amount, last_payment, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
          id,
          account.id,
          row.id,
          status,
          t.reference,
          t.product ?? null,
          cents,
          t.lastPayment === undefined ? null : Number(t.lastPayment),
          clock.timestamp(),
        );
        if (t.lastPayment && status === 'approved')
          await store.run("UPDATE agreements SET status = 'cancelled' WHERE id = ?", row.id);
        return {
          responseCode: 0,
          responseMessage: ok,
          result: { payer: { account: payer.account }, transaction: { id, status } },
        };
      }),
    getPayToPayment: async ({ params }, { account }) => {
      const row = await payment(account.id, params.agreementIdentification, params.transactionId);
      return row
        ? { responseCode: 0, responseMessage: ok, result: await record(row) }
        : refusedInteger(refusals.noSuchPayment('transactionId'));
    },
    getPayToPaymentStatus: async ({ params }, { account }) => {
      const row = await payment(account.id, params.agreementIdentification, params.transactionId);
      return row
        ? { responseCode: 0, responseMessage: ok, result: { status: row.status } }
        : refusedInteger(refusals.noSuchPayment('transactionId'));
    },
    searchPayToPayments: async ({ query }, { account }) => {
      const rows = await store.all(
        `SELECT * FROM payto_payments WHERE merchant_id = ? AND (CAST(? AS TEXT) IS NULL OR agreement_id = ?) AND (CAST(? AS TEXT) IS NULL OR status = ?)
           AND (CAST(? AS TEXT) IS NULL OR substr(created_at, 1, 10) >= ?) AND (CAST(? AS TEXT) IS NULL OR substr(created_at, 1, 10) <= ?) ORDER BY created_at DESC, rowid DESC`,
        account.id,
        query.agreementIdentification ?? null,
        query.agreementIdentification ?? null,
        query.status ?? null,
        query.status ?? null,
        query.from ?? null,
        query.from ?? null,
        query.to ?? null,
        query.to ?? null,
      );
      return { responseCode: 0, responseMessage: ok, result: { payments: await Promise.all(rows.map(record)) } };
    },
  } satisfies Partial<H>;
}
