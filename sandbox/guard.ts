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
import { findCardNumber } from '../runtime/card-numbers.ts';
import { cardNumberFields, cardNumberSentOutsideCardFields } from '../runtime/card-fields.ts';
import { refusedAs, sandboxRefusals as refusals } from './refusals.ts';
import { notifyFieldRefusal, type UrlPolicy } from './url-policy.ts';

type Handler = (
  input: { body?: unknown; params?: Record<string, string>; query?: Record<string, string> },
  context: HandlerContext,
) => unknown;

/**
 * Whether free text holds a card number in any spelling: letters glued on, separators of any kind
 * and width between the digits, digits of any script, invisible characters (runtime/card-numbers.ts,
 * the one reading the stubs' answer check, the logs and the reports share).
 */
export const holdsCardNumber = (text: string): boolean => findCardNumber(text);

// Which fields may carry a card number, and the first value outside them that holds one: the rule the
// mock keeps too (runtime/card-fields.ts).
export { cardNumberFields, cardNumberOutsideCardFields } from '../runtime/card-fields.ts';

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

const bodyHashSets = new WeakMap<object, ReadonlySet<string>>();
/** The names of the hashes an operation's request carries in its body. */
function bodyHashes(op: HandlerContext['operation']): ReadonlySet<string> {
  let names = bodyHashSets.get(op);
  if (!names) {
    names = new Set(op.hashes.filter((h) => h.in === 'body').map((h) => h.name));
    bodyHashSets.set(op, names);
  }
  return names;
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
      const field = cardNumberSentOutsideCardFields(
        { ...input, ignored: context.ignoredFields },
        cardFields,
        bodyHashes(context.operation),
      );
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
