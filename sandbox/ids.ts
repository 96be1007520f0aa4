// Identifiers in the forms the public service uses (gateway facts): transaction IDs like
// 1336-20be3569-b600-11e6-b9c3-005056b209e0, card IDs like KOCI10023982, keys like s5KQIxsZuiyvs3Sc.
//
// An identifier the sandbox makes never reads as a card number: the guard refuses any field holding one
// (guard.ts) and the stubs refuse to send an answer holding one, so a transaction ID whose hex groups
// happened to spell a Luhn-valid run of digits would later be refused in the merchant's own refund,
// void or query. Every identifier drawn from randomness with room for 13 digits is drawn again until
// the card-number reading (runtime/card-numbers.ts) finds none: zero false positives by design, at the
// cost of a redraw (test/hardening/card-false-positives.test.ts measures how often).
import { randomBytes, randomInt } from 'node:crypto';
import { findCardNumber as holdsCardNumber } from '../runtime/card-numbers.ts';

/**
 * Random bytes from node:crypto drawn 4 KiB at a time and handed out in order, each byte once: a
 * call into OpenSSL per identifier cost more than the rest of making it (3 % of a purchase's CPU).
 */
const POOL_BYTES = 4096;
let pool = Buffer.alloc(0);
let pooled = 0;
function random(bytes: number): Buffer {
  if (pooled + bytes > pool.length) {
    pool = randomBytes(POOL_BYTES);
    pooled = 0;
  }
  pooled += bytes;
  return pool.subarray(pooled - bytes, pooled);
}

const hex = (bytes: number) => random(bytes).toString('hex');
/** Groups of hex digits of one random draw (one call for the whole identifier). */
const hexGroups = (...bytes: number[]) => {
  const all = hex(bytes.reduce((a, b) => a + b, 0));
  let at = 0;
  return bytes.map((n) => {
    const group = all.slice(at, at + 2 * n);
    at += 2 * n;
    return group;
  });
};
const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** Draws until the identifier holds no card number (see above). */
export function cardFree(draw: () => string): () => string {
  return () => {
    for (;;) {
      const id = draw();
      if (!holdsCardNumber(id)) return id;
    }
  };
}

/**
 * One draw of each identifier drawn from randomness, before the redraw: what the false-positive
 * measurement reads (test/hardening/card-false-positives.test.ts) to say how often a redraw happens.
 */
export const draws = {
  transactionId: () => `1336-${hexGroups(4, 2, 2, 2, 6).join('-')}`,
  cardKey: () => Array.from({ length: 16 }, () => ALNUM[randomInt(ALNUM.length)]).join(''),
  batchId: () => `1336${hex(7)}`.slice(0, 17),
  token: (prefix: string) => `${prefix}${hex(8)}`,
  merchantId: () => hex(7).slice(0, 13),
  reference: (prefix: string) => `${prefix}-${hex(4)}`,
  /** A direct debit authorisation's fingerprint: 32 hex digits. */
  fingerprint: () => hex(16),
  /** A 3-D Secure CAVV: 20 random bytes in base64. */
  cavv: () => random(20).toString('base64'),
  /** A 3-D Secure XID: 16 hex digits. */
  threeDSXid: () => hex(8),
};

export const transactionId = cardFree(draws.transactionId);
/** KOCI and 8 digits: too few digits to read as a card number, whatever they are. */
export const cardId = () => `KOCI${randomInt(10_000_000, 99_999_999)}`;
export const blacklistId = () => `BLCK${randomInt(10_000_000, 99_999_999)}`;
export const cardKey = cardFree(draws.cardKey);
export const batchId = cardFree(draws.batchId);
/** n random decimal digits, the first not 0: one draw below 2^48 (randomInt's range), else digit by digit. */
export const digits = (n: number) =>
  n <= 14
    ? String(randomInt(10 ** (n - 1), 10 ** n))
    : Array.from({ length: n }, (_, i) => (i === 0 ? randomInt(1, 10) : randomInt(10))).join('');
export const token = (prefix: string) => cardFree(() => draws.token(prefix))();
export const merchantId = cardFree(draws.merchantId);
export const reference = (prefix: string) => cardFree(() => draws.reference(prefix))();
export const fingerprint = cardFree(draws.fingerprint);
export const cavv = cardFree(draws.cavv);
export const threeDSXid = cardFree(draws.threeDSXid);
