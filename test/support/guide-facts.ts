// The sandbox's facts as docs/CLIENT-TEAMS.md states them (the block between `<!-- facts:sandbox -->`
// and `<!-- /facts:sandbox -->`), rendered from where they live, never typed: the accounts from the
// spec's info.x-sandbox, the test cards and the amounts that force an outcome from sandbox/data.ts,
// each outcome as the sandbox's card engine answers it (sandbox/cards.ts), the
// settlement date worded from the spec's own rule (x-settlement-date), the token lifetime from
// x-lifetime-minutes, the surcharge rates, the direct debit's days, the PayID's payment and the
// payout accounts from the sandbox's data. test/docs/guide-facts.test.ts holds the page to it.
import { authorise, cardType, type Card } from '../../sandbox/cards.ts';
import {
  DEFAULT_SURCHARGE_BP,
  DEFAULT_TOKEN_CARD,
  DIRECT_DEBIT_DAYS,
  INVALID_BSB,
  LOW_FUNDS_LIMIT,
  PAYID_WELCOME_PAYMENT,
  PAYOUT_ACCOUNTS,
  TEST_CARDS,
} from '../../sandbox/data.ts';
import { scenarios } from '../../generated/scenarios.ts';
import { accessTokenLifetimeMinutes } from '../../generated/spec-constants.ts';
import type { Doc } from '../../runtime/document.ts';

/** What the facts are made of: the sandbox's data as it is, or changed (a test of the check itself). */
export interface SandboxFacts {
  cards: typeof TEST_CARDS;
  /** The amounts that force a card outcome: amount → [responseCode, message, network code, network text]. */
  triggers: Record<string, [number, string, string, string]>;
  surchargeBp: typeof DEFAULT_SURCHARGE_BP;
  directDebitDays: number;
  payIdPayment: number;
  payoutAccounts: typeof PAYOUT_ACCOUNTS;
  invalidBsb: string;
  tokenCard: string;
  lowFundsCents: number;
  tokenMinutes: number;
}

export const sandboxFacts = (): SandboxFacts => ({
  cards: TEST_CARDS,
  triggers: Object.fromEntries(
    scenarios.operations.processCard.outcomes.flatMap((o) =>
      'amount' in o && o.amount
        ? [[o.amount, [o.responseCode, o.responseMessage, o.set?.authResponseCode, o.set?.authMessage]]]
        : [],
    ),
  ) as SandboxFacts['triggers'],
  surchargeBp: DEFAULT_SURCHARGE_BP,
  directDebitDays: DIRECT_DEBIT_DAYS,
  payIdPayment: PAYID_WELCOME_PAYMENT.amount,
  payoutAccounts: PAYOUT_ACCOUNTS,
  invalidBsb: INVALID_BSB,
  tokenCard: DEFAULT_TOKEN_CARD.number,
  lowFundsCents: LOW_FUNDS_LIMIT,
  tokenMinutes: accessTokenLifetimeMinutes,
});

const SCHEME: Record<string, string> = {
  visa: 'Visa',
  mc: 'Mastercard',
  amex: 'Amex',
  diners: 'Diners',
  jcb: 'JCB',
  discover: 'Discover',
  unionpay: 'UnionPay',
};
const WEEKDAYS = ['', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'];
const money = (cents: number) => (cents / 100).toFixed(2);
const list = (items: string[]) =>
  items.length < 2 ? items.join('') : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`;

/** ISO weekdays as a reader says them: "Monday to Friday", or each one named. */
function weekdays(days: readonly number[]): string {
  const sorted = [...days].sort();
  const run = sorted.every((d, i) => i === 0 || d === sorted[i - 1]! + 1);
  return run && sorted.length > 2
    ? `${WEEKDAYS[sorted[0]!]} to ${WEEKDAYS[sorted.at(-1)!]}`
    : list(sorted.map((d) => WEEKDAYS[d]!));
}

/**
 * When a card transaction settles, in words, from the spec's x-settlement-date rule. A part of the
 * rule these words do not say fails here rather than going unsaid (a cut-off time, say).
 */
export function settlementWords(rule: Record<string, unknown>): string {
  const worded = new Set(['zone', 'businessDays', 'firstOnOrAfter', 'cutOff']);
  const unworded = Object.keys(rule).filter((k) => !worded.has(k));
  if (unworded.length)
    throw new Error(`x-settlement-date has ${unworded.join(', ')}, which the guide's words do not say yet`);
  const days = weekdays(rule.businessDays as number[]);
  if (rule.firstOnOrAfter !== 'answer') return `on a business day (${days}) in ${rule.zone as string} time`;
  const cutOff = rule.cutOff as { sandbox: string } | undefined;
  const until = cutOff ? ` and they are made before ${cutOff.sandbox.replace(/:00$/, '')} there` : '';
  return `on the day they are made in ${rule.zone as string} time when that is a business day (${days})${until}, else on the next business day`;
}

/** What the card engine answers a test card sent with its listed expiry and CSC, for `amount`. */
function answer(number: string, amount: string, facts: SandboxFacts, expiry?: string) {
  const listed = facts.cards[number]!;
  const mmyy = expiry ?? (listed.expiry === 'any' ? '1230' : listed.expiry);
  const card: Card = { number, expiryMonth: mmyy.slice(0, 2), expiryYear: mmyy.slice(2), csc: listed.csc };
  const cents = Math.round(Number(amount) * 100);
  return authorise(card, amount, cents, false);
}

const outcome = (a: { code: number; message: string }) =>
  a.code === 0 ? 'approved' : `declined, code ${a.code} (${a.message})`;

/** The block of docs/CLIENT-TEAMS.md, as the sandbox and the spec make it now. */
export function sandboxFactsBlock(doc: Doc, facts: SandboxFacts = sandboxFacts()): string {
  const sandbox = doc.info['x-sandbox'];
  const rows = Object.entries(facts.cards).map(([number, listed]) => {
    const first = answer(number, '10.00', facts);
    let said = `${SCHEME[cardType(number)]}, ${outcome(first)}`;
    const dearer = answer(number, money(facts.lowFundsCents + 1), facts);
    if (dearer.code !== first.code) said += `; above ${money(facts.lowFundsCents)}: ${outcome(dearer)}`;
    if (listed.expiry === 'any') said += `; a past expiry: ${outcome(answer(number, '10.00', facts, '0120'))}`;
    const expiry = listed.expiry === 'any' ? 'any' : `${listed.expiry.slice(0, 2)}/${listed.expiry.slice(2)}`;
    return `  | ${number} | ${expiry} | ${listed.csc} | ${said} |`;
  });
  const approvedCard = Object.keys(facts.cards).find((n) => answer(n, '10.00', facts).code === 0)!;
  const wrongExpiry = answer(approvedCard, '10.00', facts, '0101');
  const unknown = authorise(
    { number: '4111111111111111', expiryMonth: '12', expiryYear: '30', csc: '123' },
    '10.00',
    1000,
    false,
  );
  const blacklisted = authorise({ number: approvedCard, expiryMonth: '12', expiryYear: '30' }, '10.00', 1000, true);
  const triggers = Object.entries(facts.triggers);
  const byRate = new Map<string, string[]>();
  for (const [scheme, bp] of Object.entries(facts.surchargeBp)) {
    const rate = (bp / 100).toFixed(2);
    byRate.set(rate, [...(byRate.get(rate) ?? []), SCHEME[scheme] ?? scheme]);
  }
  const rates = [...byRate].map(([rate, schemes]) => `${list(schemes)} ${rate} %`);
  const attempts = (account: string) =>
    facts.payoutAccounts[account]!.map((a, i) => `${i ? 'then ' : ''}${a.type} ${a.status}`).join(' ');
  const rule = doc.components.schemas.SettledDate['x-settlement-date'];
  return [
    `- **Accounts:** a merchant and a partner are seeded into a new database: \`PGW_SANDBOX_MERCHANT_UUID\`,`,
    `  \`PGW_SANDBOX_PARTNER_UUID\`, \`PGW_SANDBOX_API_KEY\`, \`PGW_SANDBOX_PASSPHRASE\`, else the spec's`,
    `  \`x-sandbox\` (merchant \`${sandbox.merchantUUID}\`, partner \`${sandbox.partnerUUID}\`, API key \`${sandbox.apiKey}\`, passphrase`,
    `  \`${sandbox.passphrase}\`). \`PGW_SANDBOX_PARTNER_NOTIFY_URL\` is the partner's notification address.`,
    `  A database keeps the accounts it was made with. On a shared sandbox your team gets a merchant of`,
    `  its own from the operator (\`payment-gateway sandbox accounts add\`,`,
    `  [DEPLOY.md](DEPLOY.md#per-team-merchants-and-credentials)): a merchantUUID, an apiKey and a`,
    `  passphrase no other team has, which you use everywhere (your client, the commands' \`--merchant\`,`,
    `  \`--api-key\` and \`--passphrase\`, the control API); the defaults are the operator's. Merchants`,
    `  created through the partner API share the partner's API key and passphrase.`,
    `- **Cards** (\`sandbox/data.ts\`): the public sandbox's test cards, each sent with its listed expiry and`,
    `  CSC, answered (for 10.00) as the sandbox's card engine answers:`,
    '',
    '  | card | expiry | CSC | outcome |',
    '  |---|---|---|---|',
    ...rows,
    '',
    `  A number failing the Luhn check is refused (\`-2\`); another number is ${outcome(unknown)}; a`,
    `  wrong expiry or CSC for a test card is ${outcome(wrongExpiry)}; ${triggers.length} amounts (${triggers
      .slice(0, 3)
      .map(([a]) => a)
      .join(', ')}, … in [SCENARIOS.md](SCENARIOS.md))`,
    `  force codes ${list([...new Set(triggers.map(([, t]) => t[0]))].sort((a, b) => a - b).map(String))} whatever the card; a blacklisted card is ${outcome(blacklisted)}.`,
    `  Payframe and wallet tokens stand for the ${SCHEME[cardType(facts.tokenCard)]} test card ${facts.tokenCard} (\`pf-<number>\` names another).`,
    '- **Payments:** authorise → capture in parts up to the authorisation, never beyond → refund up to',
    '  what was captured → void of an uncaptured authorisation, or of a purchase not refunded (a captured',
    '  authorisation is refunded instead); queryCard shows the state. Token',
    '  purchases check `cardKey` and replace it with `cardKeyReplace` in the same transaction when the',
    '  result is 0 or above, never below (concurrent purchases with one key: exactly one processed).',
    `  Purchases and captures settle ${settlementWords(rule)} (the spec's \`x-settlement-date\`, in`,
    "  `authSettledDate`; the cut-off and the real answers it is read from are in docs/RULES.md); getSettlement answers a real zip holding a CSV whose columns are the spec's",
    `  \`x-csv-columns\` for the \`version\` asked. Surcharges: per-merchant, per-scheme rates of a new`,
    `  merchant (${list(rates)}), rounded half up.`,
    `- **Access tokens** last ${facts.tokenMinutes} minutes (the spec's \`x-lifetime-minutes\`).`,
    `- **Direct debit:** debits are pending (code 10) until their settlement date, ${facts.directDebitDays} days after the day`,
    '  they are made (on the sandbox clock).',
    `- **PayID, payouts:** each new PayID receives one sandbox payment of ${money(facts.payIdPayment * 100)} to try transactions and`,
    `  refunds on; payouts follow the public sandbox accounts (${Object.keys(facts.payoutAccounts)
      .map((a) => `\`${a}\` ${attempts(a)}`)
      .join(', ')}); BSB \`${facts.invalidBsb}\` is refused.`,
  ].join('\n');
}
