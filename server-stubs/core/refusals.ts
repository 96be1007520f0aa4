// Refusals as the contract documents them: a negative responseCode (-1 credentials, -2 invalid,
// -3 missing, -4 internal) and a message that names the field and the rule, never a value.
import type { ErrorObject } from 'ajv';
import { forms, type RefusalKind } from '../../runtime/refusal-text.ts';
import { expectedValues } from '../../generated/spec-constants.ts';
import type { HandlerRefusal } from '../../generated/handlers.ts';
import type { ContractOperation, GatewayResponse } from './types.ts';
import { XML_TYPE, xmlAnswer, type Wire } from './wire.ts';

export interface Refusal {
  code: -1 | -2 | -3 | -4;
  message: string;
  /** HTTP status; the operation's success status unless the request could not be read. */
  status?: number;
  /** For the request log only, never the answer: which check failed (a -1 says no more to the caller). */
  reason?: string;
  /** The field (or header, parameter) refused and the rule it broke (a JSON Schema keyword), for logs and tools. */
  field?: string;
  rule?: string;
}

export const refuse = (code: Refusal['code'], message: string, status?: number): Refusal =>
  status === undefined ? { code, message } : { code, message, status };

// The message forms are the runtime's (runtime/refusal-text.ts), where clients read them back.
export { forms } from '../../runtime/refusal-text.ts';

/**
 * The catalogue of the server's own refusals (Fastify's error-catalogue idea: one place holds each
 * refusal's code, message and HTTP status; callers name the entry and pass only what varies).
 * Validation refusals are built by refusalFor from the schema's errors; the sandbox's business rules
 * are named in sandbox/refusals.ts, on the same forms.
 */
export const refusals = {
  internal: () => refuse(-4, 'Internal gateway error', 500),
  /** The answer's fault, told to the caller in `violations: 'error'` mode (tests); others get `internal`. */
  contractViolation: (operationId: string, violation: string) =>
    refuse(-4, `Response of ${operationId} violates the contract: ${violation}`, 500),
  /** The gateway's one answer to every failed credential check; `reason` is for the request log only. */
  credentials: (reason?: string): Refusal => ({
    ...refuse(-1, 'Invalid authentication credentials'),
    ...(reason === undefined ? {} : { reason }),
  }),
  /** A body field the hash recipe decodes that does not decode (the field's fault, not the server's). */
  notHashable: (field: string | undefined) =>
    refuse(-2, field === undefined ? 'The request cannot be hashed' : forms.invalid(field, 'must be base64')),
  /** A body that is JSON but breaks a rule of the whole body (duplicate keys, nesting, size of a value). */
  bodyInvalid: (why: string) => refuse(-2, `The request body ${why}`),
  notImplemented: (operationId: string) => refuse(-4, `${operationId} is not implemented by this server`, 500),
  bodyTooLarge: (limit: number) => refuse(-2, `Request body exceeds ${limit} bytes`, 413),
  contentType: (accepted: string) => refuse(-2, forms.field('Content-Type', `must be ${accepted}`, 'Header'), 415),
  /** A form body that cannot be read as one (a malformed escape, bytes that are not UTF-8, a name without a value). */
  formInvalid: (why: string, status?: number) => refuse(-2, `The request body ${why}`, status),
  notJson: (why: string) => refuse(-2, `Request body is not valid JSON: ${why}`, 400),
  noBodyTaken: (operationId: string) => refuse(-2, `${operationId} takes no request body`),
  bodyRequired: () => refuse(-3, 'The request body is required'),
  fieldInvalid: (field: string, why: string) => refuse(-2, forms.invalid(field, why)),
  parameterNotAllowed: (name: string) => refuse(-2, forms.notAllowed(name, 'Parameter')),
  headerRequired: (name: string) => refuse(-3, forms.required(name, '', 'Header')),
  versionRequired: (name: string, value: string) =>
    refuse(-3, forms.required(name, ` and must be ${value}`, 'Header'), 400),
  versionInvalid: (name: string, value: string) => refuse(-2, forms.invalid(name, `must be ${value}`, 'Header'), 400),
  noOperation: (verb: string, pathname: string) => refuse(-2, `No operation at ${verb.toUpperCase()} ${pathname}`, 404),
  verbNotAllowed: (verb: string, template: string) =>
    refuse(-2, `${verb.toUpperCase()} is not an operation of ${template}`, 405),
  badPathEncoding: (pathname: string) => refuse(-2, `The path ${pathname} is not correctly encoded`, 400),
  methodRequired: (allowed: string) => refuse(-3, forms.required('method', `: one of ${allowed}`)),
  methodInvalid: (allowed: string) => refuse(-2, forms.invalid('method', `must be one of ${allowed}`)),
  methodNotThePath: (pathMethod: string) =>
    refuse(-2, forms.invalid('method', `must be ${pathMethod}, the method the path names`)),
} as const;

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
  return {
    responseCode: responseCode as Code extends 'integer' ? number : string,
    responseMessage: refusal.message,
  } as HandlerRefusal<{ responseCode: Code extends 'integer' ? number : string; responseMessage: string }>;
}

/**
 * The refusal answer: its status and its body, responseCode typed as the operation's refusal schema
 * sends it, in the caller's wire format (the form mode's XML: the same two fields under the root).
 */
export function refusalResponse(
  op: ContractOperation | undefined,
  refusal: Refusal,
  wire: Wire = 'json',
): GatewayResponse {
  const fields = refusalFields(op?.refusalCode, refusal);
  return {
    status: refusal.status ?? op?.status ?? 200,
    headers: { 'content-type': wire === 'form' ? XML_TYPE : 'application/json' },
    body: wire === 'form' ? xmlAnswer(fields) : JSON.stringify(fields),
  };
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

/** The refusal for a failed validation: a missing field first (-3), else the first invalid one (-2). */
export function refusalFor(errors: readonly ErrorObject[], prefix: RefusalKind = 'Field'): Refusal {
  const missing = errors.find((e) => e.keyword === 'required' || e.keyword === 'dependentRequired');
  if (missing) {
    const name = fieldName(missing.instancePath, missing.params.missingProperty as string);
    const because =
      missing.keyword === 'dependentRequired'
        ? ` when '${fieldName(missing.instancePath, missing.params.property as string)}' is sent`
        : '';
    return { ...refuse(-3, forms.required(name, because, prefix)), field: name, rule: missing.keyword };
  }
  const extra = errors.find((e) => e.keyword === 'additionalProperties');
  if (extra) {
    const name = fieldName(extra.instancePath, extra.params.additionalProperty as string);
    return { ...refuse(-2, forms.notAllowed(name, prefix)), field: name, rule: extra.keyword };
  }
  const first = errors.find((e) => !WRAPPERS.has(e.keyword)) ?? errors[0];
  if (!first) return refuse(-2, forms.request());
  // Among a field's alternatives (anyOf: a country code or empty), the one the spec words says most.
  const invalid = errors.find((e) => e.instancePath === first.instancePath && expectedFor(e)) ?? first;
  const name = fieldName(invalid.instancePath);
  const message = name ? forms.invalid(name, ruleInWords(invalid), prefix) : forms.request(ruleInWords(invalid));
  return { ...refuse(-2, message), ...(name ? { field: name } : {}), rule: invalid.keyword };
}
