// info.x-sandbox is where the sandbox's account, its approved test card and a customer are written
// once; the sandbox's table of test cards must approve that card as x-sandbox gives it.
import { describe, expect, it } from 'vitest';
import { TEST_CARDS } from '../../sandbox/data.ts';
import { doc } from '../support/contract.ts';

describe('info.x-sandbox', () => {
  it("the test card is one the sandbox approves, with x-sandbox's expiry and security code", () => {
    const { testCard } = doc.info['x-sandbox'];
    expect(TEST_CARDS[testCard.paymentCardNumber]).toEqual({
      expiry: testCard.paymentCardExpiry,
      csc: testCard.paymentCardCSC,
      outcome: 'approved',
    });
  });
});
