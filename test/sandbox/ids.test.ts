// The identifiers the sandbox makes are sent back to it by merchants (a refund, a void, a query of a
// transaction): none may read as a card number, or the guard that keeps card numbers out of every
// other field refuses the merchant's own call ("Field 'transactionID' is invalid: must not hold a card
// number"), as a reviewer saw for 1336-64347140-2339-5014-56cf-3a1b0a819ebb. The reading now leaves
// UUIDs out (runtime/card-numbers.ts), which that one is; the sandbox still draws again any identifier
// that reads as a card number.
import { describe, expect, it } from 'vitest';
import { holdsCardNumber } from '../../sandbox/guard.ts';
import { batchId, merchantId, reference, token, transactionId } from '../../sandbox/ids.ts';

describe('identifiers the sandbox makes', () => {
  it("the reviewer's transaction ID, a UUID after 1336-, is no card number; its digits without the UUID's form are", () => {
    expect(holdsCardNumber('1336-64347140-2339-5014-56cf-3a1b0a819ebb')).toBe(false);
    expect(holdsCardNumber('1336-64347140-2339-5014-56cf-3a1b0a819eb')).toBe(true);
  });

  // About 2 draws in 10,000 read as one before: 100,000 draws meet ~18 of them.
  it.each([
    ['transactionId', transactionId],
    ['batchId', batchId],
    ['merchantId', merchantId],
    ['reference', () => reference('PTX')],
    ['token', () => token('pf-')],
  ])('%s never holds a card number (100,000 draws)', (_, draw) => {
    const held: string[] = [];
    for (let i = 0; i < 100_000; i++) {
      const id = draw();
      if (holdsCardNumber(id)) held.push(id);
    }
    expect(held).toEqual([]);
  });
});
