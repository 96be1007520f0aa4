// The card vault and the blacklist: cards stored encrypted under a cardID and a rotating cardKey,
// read back truncated; blacklist entries keyed by the card's fingerprint.
import type { GatewayHandlers, HandlerContext } from '../../server-stubs/index.ts';
import { BRAND, cardType, luhn } from '../cards.ts';
import { ok, type Sandbox } from '../context.ts';
import { cardFingerprint, entryFingerprint } from '../card-fingerprint.ts';
import { refused, sandboxRefusals as refusals } from '../refusals.ts';
import { blacklistId, cardId, cardKey, digits } from '../ids.ts';

type H = GatewayHandlers<HandlerContext>;

/** Stores a card in the vault under a new cardID, cardKey and ivrCardID (addCard, and payframe payments sent with addCard=1). */
export async function storeCard(
  sb: Sandbox,
  merchantId: string,
  card: { number: string; name: string; expiryMonth: string; expiryYear: string },
) {
  const id = await sb.store.freshId('cards', 'card_id', cardId);
  const key = cardKey();
  const ivr = digits(8);
  await sb.store.run(
    'INSERT INTO cards (card_id, merchant_id, card_key, ivr_card_id, name, pan_encrypted, bin, last4, fingerprint, card_type, expiry_month, expiry_year, added_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
    id,
    merchantId,
    key,
    ivr,
    card.name,
    sb.vault.encrypt(card.number),
    card.number.slice(0, 6),
    card.number.slice(-4),
    sb.vault.fingerprint(card.number),
    cardType(card.number),
    card.expiryMonth,
    card.expiryYear,
    sb.clock.timestamp(),
  );
  return { cardID: id, cardKey: key, ivrCardID: ivr };
}

export function vaultHandlers(sb: Sandbox) {
  const { store } = sb;
  // key undefined: the operation takes cardKey as optional (removeCard) and the client sent none.
  // lock: the row is read to be changed (FOR UPDATE, until the commit).
  const stored = async (merchantId: string, id: string, key: string | undefined, lock = false) => {
    const row = await store.get(
      `SELECT * FROM cards WHERE merchant_id = ? AND card_id = ?${lock ? ' FOR UPDATE' : ''}`,
      merchantId,
      id,
    );
    if (!row) return { refusal: refused(refusals.noSuchCard()) };
    if (key !== undefined && row.card_key !== key) return { refusal: refused(refusals.cardKeyMismatch()) };
    return { row };
  };
  const entry = (row: Record<string, any>) => ({
    cardID: row.entry_id,
    cardNumberFirst: row.bin,
    cardNumberLast: row.last4,
    cardExpiryMonth: row.expiry_month,
    cardExpiryYear: row.expiry_year,
  });
  return {
    addCard: async ({ body }, { account }) => {
      if (!luhn(body.cardNumber)) return refused(refusals.failsLuhn('cardNumber'));
      const card = {
        number: body.cardNumber,
        name: body.cardName,
        expiryMonth: body.cardExpiryMonth,
        expiryYear: body.cardExpiryYear,
      };
      return {
        responseCode: '0',
        responseMessage: ok,
        ...(await store.transaction(() => storeCard(sb, account.id, card))),
      };
    },
    cardInfo: async ({ body }, { account }) => {
      const found = await stored(account.id, body.cardID, body.cardKey);
      if ('refusal' in found) return found.refusal;
      const row = found.row;
      return {
        responseCode: '0',
        responseMessage: ok,
        cardID: row.card_id,
        cardName: row.name,
        cardBrand: BRAND[row.card_type] as 'visa',
        cardBin: row.bin,
        cardNumberFirst: row.bin.slice(0, 4),
        cardNumberLast: row.last4,
        cardExpiryMonth: row.expiry_month,
        cardExpiryYear: row.expiry_year,
        cardAdded: row.added_at,
        ...(body.paymentFingerprint === '1' ? { paymentFingerprint: await entryFingerprint(sb, row) } : {}),
      };
    },
    removeCard: ({ body }, { account }) =>
      store.transaction(async () => {
        const found = await stored(account.id, body.cardID, body.cardKey, true);
        if ('refusal' in found) return found.refusal;
        await store.run('DELETE FROM cards WHERE card_id = ?', body.cardID);
        return { responseCode: '0', responseMessage: ok };
      }),
    changeExpiry: ({ body }, { account }) =>
      store.transaction(async () => {
        const found = await stored(account.id, body.cardID, body.cardKey, true);
        if ('refusal' in found) return found.refusal;
        await store.run(
          'UPDATE cards SET expiry_month = ?, expiry_year = ? WHERE card_id = ?',
          body.cardExpiryMonth,
          body.cardExpiryYear,
          body.cardID,
        );
        return { responseCode: '0', responseMessage: ok };
      }),
    addBlacklistedCard: ({ body }, { account }) =>
      store.transaction(async () => {
        if (!luhn(body.cardNumber)) return refused(refusals.failsLuhn('cardNumber'));
        const fingerprint = await cardFingerprint(sb, account.id, body.cardNumber);
        // Added once per card and merchant (UNIQUE): a concurrent add of the same card waits on the
        // index, inserts nothing, and reads back the entry the other one made.
        await store.run(
          'INSERT OR IGNORE INTO blacklist (entry_id, merchant_id, fingerprint, bin, last4, expiry_month, expiry_year, name) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
          await store.freshId('blacklist', 'entry_id', blacklistId),
          account.id,
          fingerprint,
          body.cardNumber.slice(0, 6),
          body.cardNumber.slice(-4),
          body.cardExpiryMonth,
          body.cardExpiryYear,
          body.cardName,
        );
        const row = (await store.get(
          'SELECT * FROM blacklist WHERE merchant_id = ? AND fingerprint = ?',
          account.id,
          fingerprint,
        ))!;
        return { responseCode: '0', responseMessage: ok, ...entry(row) };
      }),
    queryBlacklistedCard: async ({ body }, { account }) => {
      const row = await store.get(
        'SELECT * FROM blacklist WHERE merchant_id = ? AND fingerprint = ?',
        account.id,
        await cardFingerprint(sb, account.id, body.cardNumber),
      );
      return row
        ? { responseCode: '0', responseMessage: ok, blacklisted: '1' as const, ...entry(row) }
        : { responseCode: '0', responseMessage: ok, blacklisted: '0' as const };
    },
    removeBlacklistedCard: ({ body }, { account }) =>
      store.transaction(async () => {
        const row = await store.get(
          'SELECT * FROM blacklist WHERE merchant_id = ? AND entry_id = ? FOR UPDATE',
          account.id,
          body.cardID,
        );
        if (!row) return refused(refusals.noSuchBlacklistEntry());
        await store.run('DELETE FROM blacklist WHERE entry_id = ?', body.cardID);
        return { responseCode: '0', responseMessage: ok };
      }),
  } satisfies Partial<H>;
}
