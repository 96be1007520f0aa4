// Refusals as the contract documents them: a negative responseCode (-1 credentials, -2 invalid,
// -3 missing, -4 internal) and a message that names the field and the rule, never a value.
import type { ErrorObject } from 'ajv';
import { maskCardNumbers } from '../../runtime/card-numbers.ts';
import type { ErrorCode } from '../../generated/error-codes.ts';
import type { HandlerRefusal } from '../../generated/handlers.ts';
import { refusalCatalogue, refusalFamilies, type RefusalArgs } from '../../generated/refusal-catalogue.ts';
import { expectedValues, type NumberedRefusal } from '../../generated/spec-constants.ts';
import {
  catalogueOf,
  entry,
  refuse,
  type CatalogueEntry as RuntimeCatalogueEntry,
  type Refusal as RuntimeRefusal,
} from '../../runtime/refusal-catalogue.ts';
import type { Protocol } from '../../runtime/protocols/protocol.ts';
import type { RefusalKind } from '../../runtime/refusal-text.ts';
import { protocols } from './contract.ts';
import type { ContractOperation, GatewayResponse } from './types.ts';

/** A refusal: the gateway's negative responseCode and message, and the catalogue entry's code that made it. */
export type Refusal = RuntimeRefusal<ErrorCode>;
/** One entry of a refusal catalogue (spec/refusals.yaml), callable with what varies. */
export type CatalogueEntry<Args extends unknown[] = never[]> = RuntimeCatalogueEntry<Args, ErrorCode>;

// An entry made in code, for a server team's own catalogue; and a refusal without a code.
export { entry, refuse };

// The message forms are the runtime's (runtime/refusal-text.ts), where clients read them back.
export { forms } from '../../runtime/refusal-text.ts';

/**
 * The catalogue of the server's own refusals (Fastify's error-catalogue idea: one place holds each
 * refusal's stable code, responseCode, message and HTTP status; callers name the entry and pass only
 * what varies): spec/refusals.yaml's `refusals`. Validation refusals are `validationRefusals`, chosen
 * by refusalFor from the schema's errors; the sandbox's business rules are sandboxRefusals, below.
 */
export const refusals = catalogueOf<RefusalArgs['refusals'], ErrorCode>(refusalCatalogue.refusals);

/** The numbered refusals' entries, one per name of the spec's x-numbered-refusals, each with its code. */
export const numberedRefusalEntries = catalogueOf<Record<NumberedRefusal, []>, ErrorCode>(
  refusalFamilies.sandboxRefusals.numbered,
);

/**
 * The business rules the sandbox enforces (spec/refusals.yaml's sandboxRefusals, `madeBy: sandbox`):
 * what a valid request may still be refused for, given what is stored, in the real gateway's words
 * where they are known. The contract suite does not ask a server for them; a server team that
 * enforces the same rules makes the same answers with them (refusalFields), instead of retyping them.
 */
export const sandboxRefusals = {
  ...catalogueOf<RefusalArgs['sandboxRefusals'], ErrorCode>(refusalCatalogue.sandboxRefusals),
  /**
   * A refusal the gateway words with its error number (x-numbered-refusals on Refusal), responseCode
   * -2: a family of entries, one code per number (`entries`, which the catalogue page lists).
   */
  numbered: Object.assign((name: NumberedRefusal) => numberedRefusalEntries[name](), {
    entries: numberedRefusalEntries,
  }),
};

/**
 * The validation refusals, made by refusalFor from the schema's errors: a missing field first (-3),
 * else a field not allowed, else the first broken rule (-2), each kind its own code (one per JSON
 * Schema keyword that has one). A parameter's are the same codes, worded "Parameter 'x' …".
 */
export const validationRefusals = catalogueOf<RefusalArgs['validationRefusals'], ErrorCode>(
  refusalCatalogue.validationRefusals,
);

/**
 * The rule of a catalogue message of the form "{kind} '{field}' is invalid: <rule>", in its words;
 * a message of another form is a spec change the caller must follow, so it throws.
 */
export function ruleWords(entry: string, message: string): string {
  const words = /^\{kind\} '\{field\}' is invalid: ([^{}]+)$/.exec(message)?.[1];
  if (!words)
    throw new Error(
      `spec/refusals.yaml: the ${entry} refusal's message no longer reads "{kind} '{field}' is invalid: <rule>": ${message}`,
    );
  return words;
}

/**
 * The rule in the `nul` refusal's own words, after the field it names ("Field 'x' is invalid: holds a
 * NUL character"), for a refusal that names it in its own: a header Node's parser refuses
 * (http/unreadable.ts).
 */
export const NUL_RULE = ruleWords('nul', refusalCatalogue.validationRefusals.nul.message);

/** The entries of validationRefusals that are not a keyword's own. */
const NOT_KEYWORDS = new Set(['required', 'dependentRequired', 'additionalProperties', 'nul', 'other', 'request']);
/** The keywords whose broken rule has a code of its own (type, pattern, maxLength…), by keyword. */
export const INVALID_BY_KEYWORD = Object.fromEntries(
  Object.entries(validationRefusals).filter(([name]) => !NOT_KEYWORDS.has(name)),
) as Readonly<Record<string, typeof validationRefusals.other>>;

/**
 * A refusal's fields, responseCode typed as the refusal schema sends it (ContractOperation.refusalCode):
 * a string on the body APIs, as the gateway sends it in JSON; an integer on the NPP and payout paths.
 */
export function refusalFields<Code extends ContractOperation['refusalCode'] | undefined>(
  refusalCode: Code,
  refusal: Refusal,
): HandlerRefusal<{ responseCode: Code extends 'integer' ? number : string; responseMessage: string }> {
  const responseCode = refusalCode === 'integer' ? refusal.code : String(refusal.code);
  // TypeScript does not narrow a conditional type by the test above; the test is exactly its condition.
  // The mark is a type only (generated/handlers.ts): this is the one place a handler's refusal is made.
  const fields = {
    responseCode: responseCode as Code extends 'integer' ? number : string,
    // A refusal names what was sent (a path, an unknown field's name): never a card number in it.
    responseMessage: maskCardNumbers(refusal.message),
  } as HandlerRefusal<{ responseCode: Code extends 'integer' ? number : string; responseMessage: string }>;
  return coded(fields, refusal);
}

/**
 * The stable code of each refusal answer made here (a handler's fields, a gateway's response), kept
 * beside the object rather than in it: the wire carries responseCode and responseMessage only, and
 * the request log asks for the code by the object (errorCodeOf). A copy of the fields has none.
 */
const codes = new WeakMap<object, ErrorCode>();
const coded = <T extends object>(answer: T, refusal: Refusal): T => {
  if (refusal.errorCode !== undefined) codes.set(answer, refusal.errorCode);
  return answer;
};
/** The code of a refusal answer made by refusalFields or refusalResponse, if it came from a catalogue entry. */
export const errorCodeOf = (answer: unknown): ErrorCode | undefined =>
  typeof answer === 'object' && answer !== null ? codes.get(answer) : undefined;

/**
 * The refusal answer: its status and its body, responseCode typed as the operation's refusal schema
 * sends it, written in the protocol the caller used (the same two fields in every one).
 */
export function refusalResponse(
  op: ContractOperation | undefined,
  refusal: Refusal,
  protocol: Protocol = protocols.canonical,
): GatewayResponse {
  const fields = refusalFields(op?.refusalCode, refusal);
  return coded(
    {
      status: refusal.status ?? op?.status ?? 200,
      headers: { 'content-type': protocol.answerType },
      body: protocol.writeAnswer(fields, op?.shapes.refusal),
    },
    refusal,
  );
}

/** '/payer/account/bsb' → 'payer.account.bsb'; '/transactions/0/bsb' → 'transactions[0].bsb'. */
export function fieldName(instancePath: string, child?: string): string {
  const parts = instancePath
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (child !== undefined) parts.push(child);
  return parts.reduce((name, part) => (/^\d+$/.test(part) ? `${name}[${part}]` : name ? `${name}.${part}` : part), '');
}

/** An enumeration this long or shorter is listed in the refusal; a longer one has its words (x-expected). */
const LISTED_ENUM_MAX = 12;

/** The spec's words for a pattern, a format or a long enumeration (x-expected), if the error is one. */
function expectedFor(error: ErrorObject): string | undefined {
  const p = error.params;
  if (error.keyword === 'pattern') return expectedValues[`pattern:${p.pattern as string}`];
  if (error.keyword === 'format') return expectedValues[`format:${p.format as string}`];
  if (error.keyword === 'enum') return expectedValues[`enum:${(p.allowedValues as unknown[]).map(String).join(',')}`];
  return undefined;
}

/** The rule in words: never a regular expression (the spec words each pattern and format, x-expected), never Ajv's own words. */
export function ruleInWords(error: ErrorObject): string {
  if (error.keyword === 'enum') {
    const allowed = error.params.allowedValues as unknown[];
    if (allowed.length <= LISTED_ENUM_MAX) return `must be one of ${allowed.map(String).join(', ')}`;
  }
  if (error.keyword === 'const') return `must be ${JSON.stringify(error.params.allowedValue)}`;
  const expected = expectedFor(error);
  if (expected) return `must be ${expected}`;
  // Unreachable for the contract's own schemas (the generator wants words for each); never the regex.
  if (error.keyword === 'pattern' || error.keyword === 'enum') return 'must be a value the field documents';
  if (error.keyword === 'format') return `must be a valid ${error.params.format as string}`;
  const words = LIMIT_WORDS[error.keyword];
  // The contract's own keywords (x-decimals…) word their errors themselves.
  return words ? words(error.params) : (error.message ?? `breaks the rule '${error.keyword}'`);
}

const plural = (n: unknown, one: string, many: string) => `${n} ${Number(n) === 1 ? one : many}`;
/** JSON Schema's other keywords as rules in words, in place of Ajv's own ("must NOT have more than 64 characters"). */
const LIMIT_WORDS: Record<string, (p: Record<string, unknown>) => string> = {
  maxLength: (p) => `must be at most ${plural(p.limit, 'character', 'characters')}`,
  minLength: (p) => `must be at least ${plural(p.limit, 'character', 'characters')}`,
  maximum: (p) => `must be at most ${p.limit}`,
  minimum: (p) => `must be at least ${p.limit}`,
  exclusiveMaximum: (p) => `must be less than ${p.limit}`,
  exclusiveMinimum: (p) => `must be more than ${p.limit}`,
  multipleOf: (p) => `must be a multiple of ${p.multipleOf}`,
  maxItems: (p) => `must have at most ${plural(p.limit, 'item', 'items')}`,
  minItems: (p) => `must have at least ${plural(p.limit, 'item', 'items')}`,
  uniqueItems: () => 'must not list an item twice',
  maxProperties: (p) => `must have at most ${plural(p.limit, 'field', 'fields')}`,
  minProperties: (p) => `must have at least ${plural(p.limit, 'field', 'fields')}`,
  type: (p) => `must be ${TYPE_WORDS[String(p.type)] ?? `of type ${p.type}`}`,
};
const TYPE_WORDS: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  integer: 'a whole number',
  boolean: 'true or false',
  object: 'an object',
  array: 'a list',
  null: 'null',
};

/** Keywords that only say that a subschema failed; the subschema's own errors say why. */
const WRAPPERS = new Set(['if', 'then', 'else', 'oneOf', 'anyOf', 'allOf', 'not', '$ref']);

/** The entry of the keyword a rule broke: its own code, else the code of a rule without one. */
const invalidEntry = (keyword: string): typeof validationRefusals.other =>
  Object.hasOwn(INVALID_BY_KEYWORD, keyword) ? INVALID_BY_KEYWORD[keyword]! : validationRefusals.other;
const { required, dependentRequired, additionalProperties } = validationRefusals;

/** The other fields named, as a refusal lists them: 'a', or 'a' or 'b'. */
const either = (names: readonly string[]) => names.map((n) => `'${n}'`).join(' or ');

/**
 * The refusal for a failed validation: a missing field first (-3), else the first invalid one (-2).
 * `unless`: the body's fields required only when none of others is sent (its form's, RequestForm's
 * `unless`), whose refusal names those others too.
 */
export function refusalFor(
  errors: readonly ErrorObject[],
  prefix: RefusalKind = 'Field',
  unless?: Readonly<Record<string, readonly string[]>>,
): Refusal {
  const missing = errors.find((e) => e.keyword === 'required' || e.keyword === 'dependentRequired');
  if (missing) {
    const name = fieldName(missing.instancePath, missing.params.missingProperty as string);
    // Required by the body's own `then` (if none of the others is sent): named with them.
    const others =
      missing.instancePath === '' && missing.schemaPath === '#/then/required' && unless && Object.hasOwn(unless, name)
        ? unless[name]
        : undefined;
    const refusal =
      missing.keyword === 'dependentRequired'
        ? dependentRequired(name, fieldName(missing.instancePath, missing.params.property as string), prefix)
        : required(name, prefix, others?.length ? either(others) : undefined);
    return { ...refusal, field: name, rule: missing.keyword };
  }
  const extra = errors.find((e) => e.keyword === 'additionalProperties');
  if (extra) {
    const name = fieldName(extra.instancePath, extra.params.additionalProperty as string);
    return { ...additionalProperties(name, prefix), field: name, rule: extra.keyword };
  }
  const first = errors.find((e) => !WRAPPERS.has(e.keyword)) ?? errors[0];
  if (!first) return validationRefusals.request();
  // Among a field's alternatives (anyOf: a country code or empty), the one the spec words says most.
  const invalid = errors.find((e) => e.instancePath === first.instancePath && expectedFor(e)) ?? first;
  const name = fieldName(invalid.instancePath);
  return {
    ...invalidEntry(invalid.keyword)(name, ruleInWords(invalid), prefix),
    ...(name ? { field: name } : {}),
    rule: invalid.keyword,
  };
}
