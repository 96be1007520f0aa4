// Identifiers in the forms the public service uses (gateway facts): transaction IDs like
// 1336-20be3569-b600-11e6-b9c3-005056b209e0, card IDs like KOCI10023982, keys like s5KQIxsZuiyvs3Sc.
//
// An identifier the sandbox makes never reads as a card number: the guard refuses any field holding one
// (guard.ts), so a transaction ID whose hex groups happened to spell a Luhn-valid run of digits (about
// 2 in 10,000) would later be refused in the merchant's own refund, void or query. Such a draw is
// drawn again.
import { randomBytes, randomInt } from 'node:crypto';
import { holdsCardNumber } from './guard.ts';

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
function cardFree(draw: () => string): () => string {
  return () => {
    for (;;) {
      const id = draw();
      if (!holdsCardNumber(id)) return id;
    }
  };
}

export const transactionId = cardFree(() => `1336-${hexGroups(4, 2, 2, 2, 6).join('-')}`);
export const cardId = () => `KOCI${randomInt(10_000_000, 99_999_999)}`;
export const blacklistId = () => `BLCK${randomInt(10_000_000, 99_999_999)}`;
export const cardKey = () => Array.from({ length: 16 }, () => ALNUM[randomInt(ALNUM.length)]).join('');
export const batchId = cardFree(() => `1336${hex(7)}`.slice(0, 17));
/** n random decimal digits, the first not 0: one draw below 2^48 (randomInt's range), else digit by digit. */
export const digits = (n: number) =>
  n <= 14
    ? String(randomInt(10 ** (n - 1), 10 ** n))
    : Array.from({ length: n }, (_, i) => (i === 0 ? randomInt(1, 10) : randomInt(10))).join('');
export const token = (prefix: string) => cardFree(() => `${prefix}${hex(8)}`)();
export const merchantId = cardFree(() => hex(7).slice(0, 13));
export const reference = (prefix: string) => cardFree(() => `${prefix}-${hex(4)}`)();
