// What every sandbox handler is wrapped in, before it can store anything:
// - a card number in any field that is not a card-number field (custom1, transactionProduct,
//   customerName, cardName, a PayTo reference...) is refused with -2 naming the field. Refused, not
//   masked: a masked value is not what the merchant sent (a reference searched for later would not
//   match, a hash over it would not hold), and a refusal tells the integration to stop sending card
//   data where it does not belong; either way the number is never stored.
// - a notification URL the URL policy forbids (url-policy.ts) is refused with -2 naming the field;
// - a store constraint failure the handlers did not foresee is answered as a refusal naming the field
//   (its transaction is rolled back by the gateway, as for every refusal), never as a 500.
import type { GatewayHandlers, HandlerContext, Refusal } from '../server-stubs/index.ts';
import { luhn } from './cards.ts';
import { refusedAs, sandboxRefusals as refusals } from './refusals.ts';
import { notifyFieldRefusal, type UrlPolicy } from './url-policy.ts';

type Handler = (
  input: { body?: unknown; params?: Record<string, string>; query?: Record<string, string> },
  context: HandlerContext,
) => unknown;

/**
 * Free text as the card-number check reads it: what a person types or a paste carries between and
 * instead of digits undone. NFKC folds compatibility forms (fullwidth ０, mathematical 𝟎, superscripts);
 * every other decimal digit (Arabic-Indic ٤, Devanagari ४...) becomes its ASCII digit; invisible
 * characters (format characters such as U+200B, U+2060, U+00AD, U+FEFF, and combining marks) go.
 */
export function cardReadable(text: string): string {
  // Printable ASCII is already as read: NFKC leaves it, and it holds no invisible character or other digit.
  if (PRINTABLE_ASCII.test(text)) return text;
  return text
    .normalize('NFKC')
    .replace(INVISIBLE, '')
    .replace(OTHER_DIGIT, (d) => String(digitValue(d.codePointAt(0)!)));
}

const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;
const INVISIBLE = /[\p{Cf}\p{Mn}\p{Me}]/gu;
const OTHER_DIGIT = /(?![0-9])\p{Nd}/gu;
const IS_DIGIT = /^\p{Nd}$/u;

/**
 * A decimal digit's value. Unicode encodes each set of decimal digits as ten consecutive code points,
 * 0 to 9 (a stability guarantee), some sets back to back: the value is the distance from the first
 * digit of the run, modulo ten.
 */
function digitValue(codePoint: number): number {
  let start = codePoint;
  while (IS_DIGIT.test(String.fromCodePoint(start - 1))) start--;
  return (codePoint - start) % 10;
}

/**
 * A card number as people write it in free text: 13 to 19 digits starting 2 to 6, in one run or in
 * groups split by up to three characters that are neither letters nor digits (spaces, dashes, dots,
 * slashes, no-break and thin spaces...), standing alone, passing the Luhn check. Read after
 * cardReadable, so digits of any script and invisible characters between them count too. A colon
 * does not split a card number: it splits the time of a timestamp (2026-11-24 20:26:54 would otherwise
 * be 14 digits starting with 2, a Luhn match one time in ten).
 */
const CARD_IN_TEXT = /(?<![\p{L}\p{N}])[2-6](?:[^\p{L}\p{N}:]{0,3}[0-9]){12,18}(?![\p{L}\p{N}])/gu;

export function holdsCardNumber(text: string): boolean {
  const readable = cardReadable(text);
  CARD_IN_TEXT.lastIndex = 0;
  for (let m = CARD_IN_TEXT.exec(readable); m; m = CARD_IN_TEXT.exec(readable)) {
    const digits = m[0].replace(/[^0-9]/g, '');
    // A run longer than the card (a number written after it): every length from its first digit.
    for (let length = 13; length <= digits.length; length++) if (luhn(digits.slice(0, length))) return true;
  }
  return false;
}

/** The fields whose schema is the contract's CardNumber: the only ones a card number may be sent in. */
export function cardNumberFields(spec: Record<string, any>): Set<string> {
  const names = new Set<string>();
  const walk = (node: unknown): void => {
    if (!node || typeof node !== 'object') return;
    const properties = (node as { properties?: Record<string, { $ref?: string }> }).properties;
    if (properties)
      for (const [name, schema] of Object.entries(properties))
        if (schema?.$ref?.endsWith('/CardNumber')) names.add(name);
    for (const child of Object.values(node)) walk(child);
  };
  walk(spec.components);
  walk(spec.paths);
  return names;
}

/**
 * The sandbox's own payframe and wallet tokens may name a test card (pf-<number>, see cards): they
 * stand for a card the way a real payframe token does, and are never stored.
 */
const SANDBOX_TOKENS = new Set(['payframeToken', 'digitalWalletToken']);

/** The path of the first string holding a card number outside the card-number fields. */
export function cardNumberOutsideCardFields(value: unknown, cardFields: Set<string>, path = ''): string | undefined {
  if (typeof value === 'string') return holdsCardNumber(value) ? path : undefined;
  if (typeof value !== 'object' || value === null) return undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = cardNumberOutsideCardFields(value[i], cardFields, `${path}[${i}]`);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  for (const [key, child] of Object.entries(value)) {
    if (cardFields.has(key) || SANDBOX_TOKENS.has(key)) continue;
    const found = cardNumberOutsideCardFields(child, cardFields, path ? `${path}.${key}` : key);
    if (found !== undefined) return found;
  }
  return undefined;
}

/**
 * Store columns → the refusal a constraint failure on them is. A handler checks first; the constraint
 * still decides when two instances insert at once (on PostgreSQL neither sees the other's row until
 * it commits), and the loser is told what the check tells it.
 */
const COLUMN_REFUSALS: Record<string, () => Refusal> = {
  'payids.pay_id': refusals.payIdTaken,
  'merchant_requests.reference': () => refusals.conflictsWithStored('requestReference'),
  'cards.card_id': () => refusals.conflictsWithStored('cardID'),
  'blacklist.entry_id': () => refusals.conflictsWithStored('cardID'),
  'blacklist.merchant_id, blacklist.fingerprint': () => refusals.conflictsWithStored('cardNumber'),
};

/** The columns a PostgreSQL unique violation names: its table, and the key of its detail ("Key (a, b)=(…) already exists."). */
const postgresColumns = (e: { table?: string; detail?: string }) =>
  (/^Key \(([^)]+)\)=/.exec(e.detail ?? '')?.[1] ?? '')
    .split(', ')
    .map((c) => `${e.table}.${c}`)
    .join(', ');

function constraintRefusal(error: unknown): Refusal | undefined {
  const e = error as { code?: string; errcode?: number; message?: string; table?: string; detail?: string };
  // PostgreSQL's integrity violations (class 23: unique, not null, foreign key...), or SQLite's SQLITE_CONSTRAINT.
  const postgres = typeof e?.code === 'string' && /^23[0-9A-Z]{3}$/.test(e.code) && e.table !== undefined;
  if (!postgres && (e?.code !== 'ERR_SQLITE_ERROR' || ((e.errcode ?? 0) & 0xff) !== 19) /* SQLITE_CONSTRAINT */)
    return undefined;
  const column = postgres ? postgresColumns(e) : (/constraint failed: (.+)$/.exec(e.message ?? '')?.[1]?.trim() ?? '');
  return (COLUMN_REFUSALS[column] ?? refusals.conflictsWithStoredRecord)();
}

export function guarded(
  handlers: GatewayHandlers<HandlerContext>,
  spec: Record<string, any>,
  policy: UrlPolicy,
): GatewayHandlers<HandlerContext> {
  const cardFields = cardNumberFields(spec);
  const wrapped: Record<string, Handler> = {};
  for (const [name, handler] of Object.entries(handlers as unknown as Record<string, Handler>)) {
    wrapped[name] = (input, context) => {
      const field =
        cardNumberOutsideCardFields(input.body, cardFields) ??
        cardNumberOutsideCardFields(input.params, cardFields) ??
        cardNumberOutsideCardFields(input.query, cardFields);
      if (field !== undefined) return refusedAs(context.operation.refusalCode, refusals.cardNumberInField(field));
      const unsafe = notifyFieldRefusal(input.body, policy);
      if (unsafe) return refusedAs(context.operation.refusalCode, refusals.unsafeUrl(unsafe.field, unsafe.why));
      const refused = (error: unknown) => {
        const refusal = constraintRefusal(error);
        if (refusal === undefined) throw error;
        return refusedAs(context.operation.refusalCode, refusal);
      };
      try {
        const answer = handler(input, context);
        return answer instanceof Promise ? answer.catch(refused) : answer;
      } catch (error) {
        return refused(error);
      }
    };
  }
  return wrapped as unknown as GatewayHandlers<HandlerContext>;
}
