// A card number may be sent only in a field whose schema is the contract's CardNumber: in any other
// (custom1, transactionProduct, customerName, a PayTo reference...) it is refused -2 naming the field
// (the sandbox's cardNumberInField), by the sandbox before any handler stores it and by the mock
// before it answers. One reading of the rule for both. A field the operation does not declare, which
// the stubs drop as the gateway ignores it, is read too, whatever its name: a token purchase that also
// carries paymentCardNumber is refused, not charged to the stored card with the number dropped.
import { cardNumberPath, maskCardNumbers } from './card-numbers.ts';

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

/**
 * The path of the first value holding a card number outside the card-number fields, each field read
 * on its own; `hashes` are the request's own body hashes (hex a client computed over the rest).
 */
export function cardNumberOutsideCardFields(
  value: unknown,
  cardFields: Set<string>,
  hashes: ReadonlySet<string> = new Set(),
): string | undefined {
  return cardNumberPath(value, (name) => cardFields.has(name) || SANDBOX_TOKENS.has(name) || hashes.has(name));
}

/** What a handler is given of a request: its body, parameters, query, and the fields the stubs dropped. */
export interface SentFields {
  body?: unknown;
  params?: unknown;
  query?: unknown;
  /** The body's fields no form of the operation declares (HandlerContext.ignoredFields). */
  ignored?: unknown;
}

/**
 * The path of the first value of a request holding a card number where none may be sent: a body
 * field, a parameter or a query value outside the card-number fields (`hashes`: the request's own
 * body hashes), or any field the operation does not declare. A name that is itself a card number (a
 * field the operation does not declare may be named anything) comes masked: the refusal names it.
 */
export function cardNumberSentOutsideCardFields(
  sent: SentFields,
  cardFields: Set<string>,
  hashes: ReadonlySet<string>,
): string | undefined {
  const at =
    cardNumberOutsideCardFields(sent.body, cardFields, hashes) ??
    cardNumberOutsideCardFields(sent.params, cardFields) ??
    cardNumberOutsideCardFields(sent.query, cardFields) ??
    cardNumberPath(sent.ignored);
  return at === undefined ? undefined : maskCardNumbers(at);
}
