// Identifiers in the forms the public service uses (gateway facts): transaction IDs like
// 1336-20be3569-b600-11e6-b9c3-005056b209e0, card IDs like KOCI10023982, keys like s5KQIxsZuiyvs3Sc.
import { randomBytes, randomInt } from 'node:crypto';

const hex = (bytes: number) => randomBytes(bytes).toString('hex');
const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

export const transactionId = () => `1336-${hex(4)}-${hex(2)}-${hex(2)}-${hex(2)}-${hex(6)}`;
export const cardId = () => `KOCI${randomInt(10_000_000, 99_999_999)}`;
export const blacklistId = () => `BLCK${randomInt(10_000_000, 99_999_999)}`;
export const cardKey = () => Array.from({ length: 16 }, () => ALNUM[randomInt(ALNUM.length)]).join('');
export const batchId = () => `1336${hex(7)}`.slice(0, 17);
export const digits = (n: number) =>
  Array.from({ length: n }, (_, i) => (i === 0 ? randomInt(1, 10) : randomInt(10))).join('');
export const token = (prefix: string) => `${prefix}${hex(8)}`;
export const merchantId = () => hex(7).slice(0, 13);
export const reference = (prefix: string) => `${prefix}-${hex(4)}`;
