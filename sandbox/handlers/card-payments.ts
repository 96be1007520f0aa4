// Card payments: purchases and authorisations from every card source, captures, refunds, voids,
// queries and verifications. Each handler's writes happen in one transaction; a refusal writes nothing.
import type { GatewayHandlers, HandlerContext } from '../../server-stubs/index.ts';
import { authorise, bankAnswer, cardType, luhn, mask, type Card } from '../cards.ts';
import { askedOutcome } from '../scenarios.ts';
import { customEcho, customOf, findByIdOrReference, ok, type Sandbox } from '../context.ts';
import { refused, sandboxRefusals as refusals } from '../refusals.ts';
import { DEFAULT_TOKEN_CARD } from '../data.ts';
import { digits, transactionId } from '../ids.ts';
import { fromCents, toCents } from '../money.ts';
import { lastWrite, plannedOnce, type Row } from '../store.ts';
import { storeCard } from './vault.ts';
import { insertFresh } from '../fresh-id.ts';
import { cardFingerprint } from '../card-fingerprint.ts';

type H = GatewayHandlers<HandlerContext>;
type Body = Record<string, any>;

/** The card a request pays with, from whichever source its form carries; or a refusal. */
export async function cardOf(
  sb: Sandbox,
  merchantId: string,
  body: Body,
): Promise<{ card: Card; field: string } | { refusal: ReturnType<typeof refused> }> {
  const fromExpiry = (mmyy: string) => ({ expiryMonth: mmyy.slice(0, 2), expiryYear: mmyy.slice(2, 4) });
  if (body.paymentCardNumber) {
    return {
      field: 'paymentCardNumber',
      card: {
        number: body.paymentCardNumber,
        ...fromExpiry(body.paymentCardExpiry ?? '0000'),
        csc: body.paymentCardCSC,
        name: body.paymentCardName,
      },
    };
  }
  if (body.cardID) {
    const row = await sb.store.get(
      'SELECT * FROM cards WHERE merchant_id = ? AND card_id = ?',
      merchantId,
      body.cardID,
    );
    if (!row) return { refusal: refused(refusals.noSuchCard()) };
    return {
      field: 'cardID',
      card: {
        number: sb.vault.decrypt(row.pan_encrypted),
        expiryMonth: row.expiry_month,
        expiryYear: row.expiry_year,
        csc: body.paymentCardCSC,
        name: row.name,
      },
    };
  }
  if (body.walletAApplicationPrimaryAccountNumber) {
    const yymmdd = String(body.walletAApplicationExpirationDate);
    return {
      field: 'walletAApplicationPrimaryAccountNumber',
      card: {
        number: body.walletAApplicationPrimaryAccountNumber,
        expiryMonth: yymmdd.slice(2, 4),
        expiryYear: yymmdd.slice(0, 2),
      },
    };
  }
  if (body.walletBPan) {
    return {
      field: 'walletBPan',
      card: {
        number: body.walletBPan,
        expiryMonth: body.walletBExpirationMonth,
        expiryYear: String(body.walletBExpirationYear).slice(2),
      },
    };
  }
  // Payframe and wallet tokens: the sandbox's hosted payframe and wallets issue tokens for its
  // default test card, or for the card a token names as pf-<number>.
  const token: string | undefined = body.payframeToken ?? body.digitalWalletToken;
  if (token) {
    const named = /^pf-(\d{12,19})$/.exec(token)?.[1];
    const number = named ?? DEFAULT_TOKEN_CARD.number;
    const expiry = named ? '1230' : DEFAULT_TOKEN_CARD.expiry;
    return {
      field: body.payframeToken ? 'payframeToken' : 'digitalWalletToken',
      card: { number, ...fromExpiry(expiry), name: DEFAULT_TOKEN_CARD.name },
    };
  }
  return { refusal: refused(refusals.cardNumberRequired()) };
}

/** A transaction's result; `answeredDay`: the settlement day a decline answers without storing it. */
export function transactionResult(row: Row, answeredDay?: string) {
  const settled = row.settled_date ?? answeredDay;
  return {
    responseCode: String(row.response_code),
    responseMessage: row.response_message,
    transactionID: row.id,
    ...(row.reference ? { transactionReferenceID: row.reference } : {}),
    transactionAmount: fromCents(row.amount),
    authCode: row.auth_code,
    authResponseCode: row.auth_response_code,
    authMessage: row.auth_message,
    ...(settled ? { authSettledDate: settled } : {}),
    receiptNo: row.receipt_no,
    cardType: row.card_type,
    cardExpiryMonth: row.expiry_month,
    cardExpiryYear: row.expiry_year,
    paymentCardNumber: row.masked_pan,
    ...customEcho(row.custom),
  };
}

export interface ChargeInput {
  kind: 'purchase' | 'auth' | 'verify';
  card: Card;
  cardField: string;
  body: Body;
  /** 3D Secure refused by the cardholder's issuer (external or 3DS 2.0 forms). */
  threeDSFailed?: boolean;
}

/** The columns a charge writes, in its INSERT's order. */
const CHARGE_COLUMNS = [
  'id',
  'merchant_id',
  'kind',
  'status',
  'response_code',
  'response_message',
  'amount',
  'captured',
  'currency',
  'reference',
  'product',
  'card_type',
  'masked_pan',
  'expiry_month',
  'expiry_year',
  'auth_code',
  'auth_response_code',
  'auth_message',
  'receipt_no',
  'settled_date',
  'custom',
  'created_at',
] as const;
type ChargeRow = Record<(typeof CHARGE_COLUMNS)[number], unknown>;

/**
 * The charge's row, inserted under a new identifier when the card's blacklist entry is there (`EXISTS`)
 * or is not (`NOT EXISTS`), read back (RETURNING): the blacklist read, the identifier checked free and
 * the insert in one statement. Nothing is inserted when the identifier is taken or the blacklist says
 * otherwise. Planned once (store.ts): the blacklist by its unique key, the conflict by the primary key.
 */
const insertCharge = (blacklist: 'EXISTS' | 'NOT EXISTS') =>
  plannedOnce(`INSERT INTO transactions (${CHARGE_COLUMNS.join(', ')})
   SELECT ${CHARGE_COLUMNS.map(() => '?').join(', ')}
   WHERE ${blacklist} (SELECT 1 FROM blacklist WHERE merchant_id = ? AND fingerprint = ?)
   ON CONFLICT (id) DO NOTHING RETURNING *`);
const INSERT_UNLISTED = insertCharge('NOT EXISTS');
const INSERT_BLACKLISTED = insertCharge('EXISTS');

/**
 * Authorises against the sandbox bank and records the transaction; a refusal records nothing. The
 * insert is its unit of work's last write as a rule (a purchase's only one): PostgreSQL runs it once
 * the answer, made from the row it stores, is checked, and alone when nothing follows it
 * (Store.lastWrite); a statement that follows it runs it first, in the unit's transaction.
 */
export async function charge(sb: Sandbox, merchantId: string, input: ChargeInput) {
  const { card, body } = input;
  if (!luhn(card.number)) return refused(refusals.failsLuhn(input.cardField));
  const amount: string = body.transactionAmount;
  const cents = toCents(amount);
  if (cents <= 0 && input.kind !== 'verify') return refused(refusals.notPositive('transactionAmount'));
  const fingerprint = await cardFingerprint(sb, merchantId, card.number);
  // The day the transaction settles: stored for what settles (an approved purchase, which the
  // settlement file lists; an approved authorisation, whose captures list themselves) and answered
  // on every outcome, as the real service answers even a decline (ActiveMerchant's recorded
  // failed_purchase_response carries authSettledDate).
  const settlementDay = sb.clock.settlementDay();
  // The bank's answer either way; the insert's own read of the blacklist chooses which is stored.
  // The outcome the request asked for (a scenario), whatever the card: stored as it is answered.
  const asked = askedOutcome('card');
  const chargeRow = (id: string, blacklisted: boolean): ChargeRow => {
    let answer = asked ? bankAnswer(asked.name) : authorise(card, amount, cents, blacklisted);
    if (!asked && input.threeDSFailed && answer.code === 0) answer = bankAnswer('threeDSFailed');
    const approved = answer.code === 0;
    return {
      id,
      merchant_id: merchantId,
      kind: input.kind,
      status: !approved ? 'declined' : input.kind === 'auth' ? 'preauth' : 'approved',
      response_code: answer.code,
      response_message: answer.message,
      amount: cents,
      captured: approved && input.kind === 'purchase' ? cents : 0,
      currency: body.transactionCurrency,
      reference: body.transactionReferenceID ?? null,
      product: body.transactionProduct ?? null,
      card_type: cardType(card.number),
      masked_pan: mask(card.number),
      expiry_month: card.expiryMonth,
      expiry_year: card.expiryYear,
      auth_code: approved ? digits(9) : '',
      auth_response_code: answer.authResponseCode,
      auth_message: answer.authMessage,
      receipt_no: digits(9),
      settled_date: approved && input.kind !== 'verify' ? settlementDay : null,
      custom: customOf(body),
      created_at: sb.clock.timestamp(),
    };
  };
  const insert = (row: ChargeRow, sql: string) =>
    lastWrite(sb.store, row, sql, ...CHARGE_COLUMNS.map((column) => row[column]), merchantId, fingerprint);
  // The second insert runs only when the first inserted nothing: a blacklisted card, or (one in 90
  // million) an identifier taken, when neither inserts and another identifier is drawn.
  const row = await insertFresh(
    transactionId,
    async (id) =>
      (await insert(chargeRow(id, false), INSERT_UNLISTED)) ?? insert(chargeRow(id, true), INSERT_BLACKLISTED),
  );
  return transactionResult(row, settlementDay);
}

const threeDSFailed = (body: Body) => body.threeDSStatus === 'N' || body.threeDSStatus === 'R';

/** Purchase or authorisation from the body's card source. */
async function pay(sb: Sandbox, kind: 'purchase' | 'auth', merchantId: string, body: Body) {
  const source = await cardOf(sb, merchantId, body);
  if ('refusal' in source) return source.refusal;
  // addCard=1 (or the payframe's options.storeInVaultOnSuccess): an approved payment also stores the card.
  const storeIt = body.addCard === '1' || body.options?.storeInVaultOnSuccess === true;
  return sb.store.transaction(async () => {
    const result = await charge(sb, merchantId, {
      kind,
      card: source.card,
      cardField: source.field,
      body,
      threeDSFailed: threeDSFailed(body),
    });
    if (!storeIt || String(result.responseCode) !== '0') return result;
    return {
      ...result,
      ...(await storeCard(sb, merchantId, { ...source.card, name: source.card.name ?? body.customerName ?? '' })),
    };
  });
}

/** A stored-card payment: cardKey checked, and replaced by cardKeyReplace in the same transaction when processed. */
function payWithToken(sb: Sandbox, kind: 'purchase' | 'auth', merchantId: string, body: Body) {
  return sb.store.transaction(async () => {
    // Locked until the commit: two payments rotating one key take turns, and the second sees the new key.
    const row = await sb.store.get(
      'SELECT * FROM cards WHERE merchant_id = ? AND card_id = ? FOR UPDATE',
      merchantId,
      body.cardID,
    );
    if (!row) return refused(refusals.noSuchCard());
    // cardKey and cardKeyReplace are optional (public clients send cardID alone); a key sent must match.
    if (body.cardKey !== undefined && row.card_key !== body.cardKey) return refused(refusals.cardKeyMismatch());
    const card = {
      number: sb.vault.decrypt(row.pan_encrypted),
      expiryMonth: row.expiry_month,
      expiryYear: row.expiry_year,
      csc: body.paymentCardCSC,
      name: row.name,
    };
    const result = await charge(sb, merchantId, { kind, card, cardField: 'cardID', body });
    // Seed §4.2: responseCode 0 or above replaces the key; below zero leaves it.
    if (body.cardKeyReplace !== undefined && Number(result.responseCode) >= 0)
      await sb.store.run('UPDATE cards SET card_key = ? WHERE card_id = ?', body.cardKeyReplace, body.cardID);
    return result;
  });
}

function authorisationOf(sb: Sandbox, merchantId: string, id: string, lock = false): Promise<Row | undefined> {
  return sb.store.get(
    `SELECT * FROM transactions WHERE merchant_id = ? AND id = ?${lock ? ' FOR UPDATE' : ''}`,
    merchantId,
    id,
  );
}

export function cardPaymentHandlers(sb: Sandbox) {
  const { store, clock } = sb;
  return {
    processCard: ({ body }, { account }) => pay(sb, 'purchase', account.id, body),
    processAuth: ({ body }, { account }) => pay(sb, 'auth', account.id, body),
    walletProcessCard: ({ body }, { account }) => pay(sb, 'purchase', account.id, body),
    tokenProcessCard: ({ body }, { account }) => payWithToken(sb, 'purchase', account.id, body),
    tokenProcessAuth: ({ body }, { account }) => payWithToken(sb, 'auth', account.id, body),

    processCapture: ({ body }, { account }) =>
      store.transaction(async () => {
        // Locked until the commit: captures against one authorisation take turns (none passes its amount).
        const auth = await authorisationOf(sb, account.id, body.transactionID, true);
        if (auth?.kind !== 'auth') return refused(refusals.numbered('invalidTransactionID'));
        // transactionAmount is what the hash signs: clients send the capture's amount (ActiveMerchant) or the order's.
        if (auth.status === 'void') return refused(refusals.numbered('alreadyReversed'));
        if (auth.status === 'declined') return refused(refusals.authorisationDeclined());
        const cents = toCents(body.captureAmount);
        if (cents <= 0) return refused(refusals.notPositive('captureAmount'));
        if (auth.captured + cents > auth.amount) return refused(refusals.captureExceedsAuthorised());
        const id = await store.freshId('transactions', 'id', transactionId);
        const settled = clock.settlementDay();
        await store.run(
          `INSERT INTO transactions (id, merchant_id, kind, status, response_code, response_message, amount, captured, currency, reference, product, card_type,
             masked_pan, expiry_month, expiry_year, auth_code, auth_response_code, auth_message, receipt_no, settled_date, parent_id, custom, created_at)
           VALUES (?, ?, 'capture', 'approved', 0, 'Transaction approved', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, '00', 'Approved or completed successfully', ?, ?, ?, ?, ?)`,
          id,
          account.id,
          cents,
          cents,
          auth.currency,
          body.transactionReferenceID ?? auth.reference,
          auth.product,
          auth.card_type,
          auth.masked_pan,
          auth.expiry_month,
          auth.expiry_year,
          auth.auth_code,
          digits(9),
          settled,
          auth.id,
          auth.custom,
          clock.timestamp(),
        );
        await store.run(
          "UPDATE transactions SET captured = captured + ?, status = 'captured' WHERE id = ?",
          cents,
          auth.id,
        );
        const capture = (await store.get('SELECT * FROM transactions WHERE id = ?', id))!;
        return {
          responseCode: '0',
          responseMessage: 'Transaction approved',
          transactionID: id,
          authCode: capture.auth_code,
          authResponseCode: capture.auth_response_code,
          authMessage: capture.auth_message,
          receiptNo: capture.receipt_no,
          authSettledDate: settled,
          ...customEcho(capture.custom),
        };
      }),

    refundCard: ({ body }, { account }) =>
      store.transaction(async () => {
        const original = await authorisationOf(sb, account.id, body.transactionID, true);
        if (!original || original.kind === 'refund' || original.kind === 'verify')
          return refused(refusals.numbered('invalidTransactionID'));
        // transactionAmount is what the hash signs: clients send the refund's amount, not the original's.
        if (original.status === 'void') return refused(refusals.numbered('alreadyReversed'));
        // Nothing of a declined one was captured: saying so, not that the refund is larger than that.
        if (original.status === 'declined') return refused(refusals.transactionDeclined());
        const cents = toCents(body.refundAmount);
        if (cents <= 0) return refused(refusals.notPositive('refundAmount'));
        if (original.refunded + cents > original.captured) return refused(refusals.refundExceedsCaptured());
        const id = await store.freshId('transactions', 'id', transactionId);
        const settled = clock.settlementDay();
        await store.run(
          `INSERT INTO transactions (id, merchant_id, kind, status, response_code, response_message, amount, currency, reference, card_type, masked_pan,
             expiry_month, expiry_year, auth_code, auth_response_code, auth_message, receipt_no, settled_date, parent_id, custom, created_at)
           VALUES (?, ?, 'refund', 'approved', 0, 'Transaction approved', ?, ?, ?, ?, ?, ?, ?, ?, '00', 'Approved or completed successfully', ?, ?, ?, ?, ?)`,
          id,
          account.id,
          cents,
          original.currency,
          original.reference,
          original.card_type,
          original.masked_pan,
          original.expiry_month,
          original.expiry_year,
          digits(9),
          digits(9),
          settled,
          original.id,
          original.custom,
          clock.timestamp(),
        );
        await store.run(
          "UPDATE transactions SET refunded = refunded + ?, status = 'refunded' WHERE id = ?",
          cents,
          original.id,
        );
        const refund = (await store.get('SELECT * FROM transactions WHERE id = ?', id))!;
        return {
          responseCode: '0',
          responseMessage: 'Transaction approved',
          transactionID: id,
          authCode: refund.auth_code,
          authResponseCode: '00',
          authMessage: refund.auth_message,
          receiptNo: refund.receipt_no,
          authSettledDate: settled,
        };
      }),

    processVoid: ({ body }, { account }) =>
      store.transaction(async () => {
        // An uncaptured authorisation, or a purchase not refunded yet (ActiveMerchant's remote suite voids a purchase).
        const auth = await authorisationOf(sb, account.id, body.transactionID, true);
        if (!auth || (auth.kind !== 'auth' && auth.kind !== 'purchase'))
          return refused(refusals.numbered('invalidTransactionID'));
        if (auth.status === 'void') return refused(refusals.numbered('alreadyReversed'));
        if (auth.status === 'declined') return refused(refusals.transactionDeclined());
        if (auth.kind === 'auth' && auth.captured > 0) return refused(refusals.authorisationCaptured());
        if (auth.refunded > 0) return refused(refusals.numbered('alreadyReversed'));
        await store.run("UPDATE transactions SET status = 'void' WHERE id = ?", auth.id);
        return {
          responseCode: '0',
          responseMessage: 'Transaction approved',
          transactionID: auth.id,
          authCode: auth.auth_code,
          authResponseCode: '00',
          authMessage: 'Approved or completed successfully',
          receiptNo: digits(9),
          authSettledDate: clock.settlementDay(),
        };
      }),

    queryCard: async ({ body }, { account }) => {
      let row = await findByIdOrReference(
        store,
        'transactions',
        account.id,
        body.transactionID,
        body.transactionReferenceID,
      );
      // A capture or a refund shares its transaction's reference: the query answers the transaction itself.
      if (row?.kind === 'capture' || (row?.kind === 'refund' && !body.transactionID))
        row = await authorisationOf(sb, account.id, row.parent_id);
      if (!row)
        return body.transactionID
          ? refused(refusals.numbered('invalidTransactionID'))
          : refused(refusals.noSuchTransaction());
      const { cardExpiryMonth: _m, cardExpiryYear: _y, ...common } = transactionResult(row);
      return {
        ...common,
        responseCode: '0',
        responseMessage: ok,
        transactionType:
          row.kind === 'purchase'
            ? ('purchase' as const)
            : row.kind === 'refund'
              ? ('refund' as const)
              : ('auth' as const),
        transactionStatus: row.status,
        transactionResponseCode: String(row.response_code),
        transactionResponseMessage: row.response_message,
        capturedAmount: fromCents(row.captured),
        refundedAmount: fromCents(row.refunded),
        refundTotal: fromCents(row.refunded),
        transactionCurrency: row.currency,
      };
    },

    verifyCard: async ({ body }, { account }) => {
      const source = await cardOf(sb, account.id, body);
      if ('refusal' in source) return source.refusal;
      return charge(sb, account.id, { kind: 'verify', card: source.card, cardField: source.field, body });
    },
  } satisfies Partial<H>;
}
