// The card engine: Luhn, scheme, expiry, the test cards' outcomes, amount triggers and the blacklist,
// giving the bank's answer to an authorisation, in the spec's card outcomes (x-sandbox-scenarios).
// Masking: six digits, XXXXXX, four digits.
import { scenarios } from '../generated/scenarios.ts';
import type { ScenarioOutcome } from '../runtime/scenarios.ts';
import { type CardOutcome, LOW_FUNDS_LIMIT, TEST_CARDS } from './data.ts';

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

/** The card bank's outcomes, by name, as the spec states them (x-sandbox-scenarios.outcomes.card). */
const CARD_OUTCOMES = new Map<string, ScenarioOutcome>(
  scenarios.operations.processCard.outcomes.map((o) => [o.name, o]),
);
/** The amounts that force an outcome whatever the test card (the real service's 102.33, and the spec's others). */
const AMOUNT_TRIGGERS = new Map(
  [...CARD_OUTCOMES.values()].flatMap((o) => (o.amount ? [[o.amount, o.name] as const] : [])),
);

/** The bank's answer of a card outcome the spec names. */
export function bankAnswer(name: string): BankAnswer {
  const outcome = CARD_OUTCOMES.get(name);
  if (!outcome) throw new Error(`The spec names no card outcome '${name}'`);
  return {
    code: outcome.responseCode,
    message: outcome.responseMessage,
    authResponseCode: outcome.set!.authResponseCode!,
    authMessage: outcome.set!.authMessage!,
  };
}

/** The test cards' own outcomes (data.ts), by the spec's names. */
const TEST_CARD_OUTCOMES: Record<Exclude<CardOutcome, 'lowFunds' | 'approved'>, string> = {
  expired: 'expiredCard',
  stolen: 'stolen',
  invalidCsc: 'securityCodeMismatch',
  restricted: 'restricted',
};

/** Which outcome the sandbox's bank gives charging `cents` (as a two-decimal string `amount`) to the card. */
export function outcomeOf(card: Card, amount: string, cents: number, blacklisted: boolean): string {
  const test = TEST_CARDS[card.number];
  if (!test) return 'notRecognised';
  if (blacklisted) return 'blacklisted';
  const trigger = AMOUNT_TRIGGERS.get(amount);
  if (trigger) return trigger;
  // The public test cards keep their historical expiries (5163200000000008 is approved with 08/20):
  // the test bank does not hold an expiry against the calendar. Each card must be sent with its own
  // expiry; the one listed with any expiry takes any, past ones included (the Python client of 2016
  // pays with it expiring 05/17, jimbocoder/merchantwarrior-python@4c96b2782c28b26b7e5ba3d81033ae87fadec43f:test.py).
  // The expired test card answers 'Transaction declined' (ActiveMerchant's remote suite); the amount trigger 102.33 says 'Card has expired'.
  if (test.outcome === 'expired') return TEST_CARD_OUTCOMES.expired;
  if (test.expiry !== 'any' && test.expiry !== `${card.expiryMonth}${card.expiryYear}`) return 'expiryMismatch';
  if (card.csc !== undefined && card.csc !== test.csc) return 'securityCodeMismatch';
  switch (test.outcome) {
    case 'lowFunds':
      return cents > LOW_FUNDS_LIMIT ? 'insufficientFunds' : 'approved';
    case 'approved':
      return 'approved';
    default:
      return TEST_CARD_OUTCOMES[test.outcome];
  }
}

/** What the sandbox's bank answers to charging `cents` (as a two-decimal string `amount`) to the card. */
export function authorise(card: Card, amount: string, cents: number, blacklisted: boolean): BankAnswer {
  return bankAnswer(outcomeOf(card, amount, cents, blacklisted));
}
