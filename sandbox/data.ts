// The sandbox's domain data: the public sandbox's test cards, amount triggers and payout accounts
// (gateway facts), and its own defaults. The engine reads these; nothing about them is elsewhere.

import type { components } from '../generated/types.ts';
export type CardOutcome = 'approved' | 'expired' | 'lowFunds' | 'stolen' | 'invalidCsc' | 'restricted';

/** Test cards: number → expiry (MMYY, or any), security code, outcome. Other numbers are refused. */
export const TEST_CARDS: Record<string, { expiry: string | 'any'; csc: string; outcome: CardOutcome }> = {
  '4564710000000004': { expiry: '0229', csc: '847', outcome: 'approved' },
  '5163200000000008': { expiry: '0820', csc: '070', outcome: 'approved' },
  '4564710000000012': { expiry: '0205', csc: '963', outcome: 'expired' },
  '4564710000000020': { expiry: '0520', csc: '234', outcome: 'lowFunds' },
  '5163200000000016': { expiry: '1219', csc: '728', outcome: 'stolen' },
  '4564720000000037': { expiry: '0929', csc: '030', outcome: 'invalidCsc' },
  '376000000000006': { expiry: '0620', csc: '2349', outcome: 'approved' },
  '343400000000016': { expiry: '0129', csc: '9023', outcome: 'restricted' },
  '36430000000007': { expiry: '0622', csc: '348', outcome: 'approved' },
  '36430000000015': { expiry: '0821', csc: '988', outcome: 'stolen' },
  '5123456789012346': { expiry: 'any', csc: '123', outcome: 'approved' },
};

/** The card a token stands for when it names none: payframe and wallet tokens, in the sandbox. */
export const DEFAULT_TOKEN_CARD = { number: '4564710000000004', expiry: '0229', name: 'Sandbox Cardholder' };

/** The low-funds card's limit, in cents. */
export const LOW_FUNDS_LIMIT = 1000;

// The amounts that force an outcome whatever the test card are the spec's (x-sandbox-scenarios: the
// card outcomes' `amount`), read by cards.ts.

/** Payout test accounts (BSB 802950): the attempts each one goes through. */
export const PAYOUT_ACCOUNTS: Record<
  string,
  { type: 'NPP' | 'DE'; status: components['schemas']['PayoutAttemptStatus'] }[]
> = {
  '123321': [{ type: 'NPP', status: 'approved' }],
  '11111111': [
    { type: 'NPP', status: 'declined' },
    { type: 'DE', status: 'approved' },
  ],
  '13131313': [
    { type: 'NPP', status: 'declined' },
    { type: 'DE', status: 'returned' },
  ],
  '14141414': [
    { type: 'NPP', status: 'declined' },
    { type: 'DE', status: 'returnDeclined' },
  ],
  '15151515': [
    { type: 'NPP', status: 'declined' },
    { type: 'DE', status: 'returned' },
  ],
  '16161616': [
    { type: 'NPP', status: 'declined' },
    { type: 'DE', status: 'returnDeclined' },
  ],
};

/** A BSB the sandbox banks refuse. */
export const INVALID_BSB = '111111';

/** Surcharge rates of a new merchant, in basis points, by card type. */
export const DEFAULT_SURCHARGE_BP: Record<string, number> = {
  visa: 110,
  mc: 110,
  amex: 250,
  diners: 250,
  jcb: 200,
  discover: 200,
  unionpay: 150,
};

/** Days after a direct debit that it clears. (A card transaction's settlement day is settlementDay() in clock.ts.) */
export const DIRECT_DEBIT_DAYS = 2;
/** A payment received on each new PayID, so that its transactions and refunds can be tried. */
export const PAYID_WELCOME_PAYMENT = { amount: 42, payerName: 'Sandbox Payer', reference: 'SANDBOX-WELCOME' };
