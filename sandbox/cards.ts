// The card engine: Luhn, scheme, expiry, the test cards' outcomes, amount triggers and the blacklist,
// giving the bank's answer to an authorisation. Masking: six digits, XXXXXX, four digits.
import { AMOUNT_TRIGGERS, LOW_FUNDS_LIMIT, TEST_CARDS } from './data.ts';

// The one Luhn check of the package: the server's card-number guard uses it too.
export { luhn } from '../server-stubs/index.ts';

/** The cardType short code by number range. */
export function cardType(pan: string): string {
  if (/^4/.test(pan)) return 'visa';
  if (/^(5[1-5]|2[2-7])/.test(pan)) return 'mc';
  if (/^3[47]/.test(pan)) return 'amex';
  if (/^3(0[0-5]|[689])/.test(pan)) return 'diners';
  if (/^35/.test(pan)) return 'jcb';
  if (/^6(011|5)/.test(pan)) return 'discover';
  if (/^62/.test(pan)) return 'unionpay';
  return 'visa';
}

export const BRAND: Record<string, string> = {
  visa: 'visa',
  mc: 'mastercard',
  amex: 'amex',
  diners: 'diners',
  jcb: 'jcb',
  discover: 'discover',
  unionpay: 'unionpay',
};

export { maskCardNumber as mask } from '../server-stubs/index.ts';

export interface Card {
  number: string;
  expiryMonth: string;
  expiryYear: string;
  csc?: string | undefined;
  name?: string | undefined;
}

export interface BankAnswer {
  code: number;
  message: string;
  authResponseCode: string;
  authMessage: string;
}

const approved: BankAnswer = {
  code: 0,
  message: 'Transaction approved',
  authResponseCode: '00',
  authMessage: 'Approved or completed successfully',
};
const declined = (code: number, message: string, authResponseCode: string, authMessage: string): BankAnswer => ({
  code,
  message,
  authResponseCode,
  authMessage,
});

/** What the sandbox's bank answers to charging `cents` (as a two-decimal string `amount`) to the card. */
export function authorise(card: Card, amount: string, cents: number, blacklisted: boolean): BankAnswer {
  const test = TEST_CARDS[card.number];
  if (!test)
    return declined(
      1,
      'Transaction could not be processed: card not recognised by the sandbox',
      '14',
      'Invalid card number',
    );
  if (blacklisted) return declined(9, 'Transaction declined: card is blacklisted', '62', 'Restricted card');
  const trigger = AMOUNT_TRIGGERS[amount];
  if (trigger) return declined(...trigger);
  // The public test cards keep their historical expiries (5163200000000008 is approved with 08/20):
  // the test bank does not hold an expiry against the calendar. Each card must be sent with its own
  // expiry; the one listed with any expiry takes any, past ones included (the Python client of 2016
  // pays with it expiring 05/17, jimbocoder/merchantwarrior-python@4c96b2782c28b26b7e5ba3d81033ae87fadec43f:test.py).
  // The expired test card answers 'Transaction declined' (ActiveMerchant's remote suite); the amount trigger 102.33 says 'Card has expired'.
  if (test.outcome === 'expired') return declined(4, 'Transaction declined', '54', 'Expired card');
  if (test.expiry !== 'any' && test.expiry !== `${card.expiryMonth}${card.expiryYear}`)
    return declined(2, 'Transaction declined', '54', 'Expiry date does not match');
  if (card.csc !== undefined && card.csc !== test.csc)
    return declined(2, 'Transaction declined', 'N7', 'Security code does not match');
  switch (test.outcome) {
    case 'lowFunds':
      return cents > LOW_FUNDS_LIMIT ? declined(5, 'Insufficient funds', '51', 'Not sufficient funds') : approved;
    case 'stolen':
      return declined(2, 'Transaction declined, contact issuing bank', '43', 'Stolen card, pick up');
    case 'invalidCsc':
      return declined(2, 'Transaction declined', 'N7', 'Security code does not match');
    case 'restricted':
      return declined(9, 'Transaction declined, do not contact bank', '62', 'Restricted card');
    default:
      return approved;
  }
}
