// Refusals as the contract documents them: a negative responseCode (-1 credentials, -2 invalid,
// -3 missing, -4 internal) and a message that names the field and the rule, never a value.
import type { ErrorObject } from 'ajv';
import { forms, type RefusalKind } from '../../runtime/refusal-text.ts';
import type { ErrorCode } from '../../generated/error-codes.ts';
import { expectedValues } from '../../generated/spec-constants.ts';
import type { HandlerRefusal } from '../../generated/handlers.ts';
import type { ContractOperation, GatewayResponse } from './types.ts';
import { XML_TYPE, xmlAnswer, type Wire } from './wire.ts';

export interface Refusal {
  code: -1 | -2 | -3 | -4;
  message: string;
  /**
   * The refusal's stable code (`PGW_BODY_TOO_LARGE`): which catalogue entry made it. Never sent (the
   * gateway's answer is responseCode and responseMessage only): the request log, the generated
   * docs/REFUSALS.md and a server team's tests read it. A server's own refusal (refuse()) has none.
   */
  errorCode?: ErrorCode;
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

/**
 * One entry of a refusal catalogue: called with what varies, it makes the refusal with its code.
 * `when` and `example` are for the generated catalogue page (docs/REFUSALS.md): when the refusal is
 * made, and the arguments its message is shown with (a placeholder such as `{field}` for a name).
 */
export interface CatalogueEntry<Args extends unknown[] = never[]> {
  (...args: Args): Refusal;
  readonly errorCode: ErrorCode;
  readonly when: string;
  readonly example: Args;
}

/** A catalogue entry: its stable code written once, beside the refusal it names (Fastify's createError). */
export function entry<Args extends unknown[]>(
  errorCode: ErrorCode,
  when: string,
  make: (...args: Args) => Refusal,
  ...example: NoInfer<Args>
): CatalogueEntry<Args> {
  const coded = (...args: Args): Refusal => ({ ...make(...args), errorCode });
  return Object.assign(coded, { errorCode, when, example });
}

// The message forms are the runtime's (runtime/refusal-text.ts), where clients read them back.
export { forms } from '../../runtime/refusal-text.ts';

/**
 * The catalogue of the server's own refusals (Fastify's error-catalogue idea: one place holds each
 * refusal's stable code, responseCode, message and HTTP status; callers name the entry and pass only
 * what varies). Validation refusals are `validationRefusals`, chosen by refusalFor from the schema's
 * errors; the sandbox's business rules are named in sandbox/refusals.ts, on the same forms.
 */
export const refusals = {
  internal: entry('PGW_ERR_INTERNAL', 'The server failed (a handler threw, an answer could not be made)', () =>
    refuse(-4, 'Internal gateway error', 500),
  ),
  /** The answer's fault, told to the caller in `violations: 'error'` mode (tests); others get `internal`. */
  contractViolation: entry(
    'PGW_ERR_CONTRACT_VIOLATION',
    "The handler's answer breaks the contract, told to the caller in responseValidation 'error' mode (development, tests)",
    (operationId: string, violation: string) =>
      refuse(-4, `Response of ${operationId} violates the contract: ${violation}`, 500),
    '{operationId}',
    '{violation}',
  ),
  /** The gateway's one answer to every failed credential check; `reason` is for the request log only. */
  credentials: entry(
    'PGW_ERR_CREDENTIALS',
    'A credential check failed: an unknown merchant, a wrong key, a wrong hash, a token not issued (the reason is logged, never answered)',
    (reason?: string): Refusal => ({
      ...refuse(-1, 'Invalid authentication credentials'),
      ...(reason === undefined ? {} : { reason }),
    }),
  ),
  /** A body field the hash recipe decodes that does not decode (the field's fault, not the server's). */
  notHashable: entry(
    'PGW_ERR_NOT_HASHABLE',
    'A field the hash recipe decodes does not decode',
    (field: string | undefined) =>
      refuse(-2, field === undefined ? 'The request cannot be hashed' : forms.invalid(field, 'must be base64')),
    '{field}',
  ),
  /** A body that is JSON but breaks a rule of the whole body (duplicate keys, nesting, size of a value). */
  bodyInvalid: entry(
    'PGW_ERR_BODY_INVALID',
    'The JSON body breaks a rule of the whole body (nested too deep, a value too large)',
    (why: string) => refuse(-2, `The request body ${why}`),
    '{why}',
  ),
  /** A JSON field that cannot be read as sent (a name sent twice, a number no double holds). */
  fieldUnreadable: entry(
    'PGW_ERR_FIELD_UNREADABLE',
    'A JSON field is sent twice, or is a number no double can hold',
    (field: string, why: string) => refuse(-2, forms.invalid(field, why)),
    '{field}',
    'is sent more than once',
  ),
  notImplemented: entry(
    'PGW_ERR_NOT_IMPLEMENTED',
    'The server has no handler for the operation',
    (operationId: string) => refuse(-4, `${operationId} is not implemented by this server`, 500),
    '{operationId}',
  ),
  bodyTooLarge: entry(
    'PGW_ERR_BODY_TOO_LARGE',
    'The body is larger than the operation takes (x-limits)',
    (limit: number) => refuse(-2, `Request body exceeds ${limit} bytes`, 413),
    1048576,
  ),
  contentType: entry(
    'PGW_ERR_CONTENT_TYPE',
    'The body is sent with a Content-Type the path does not take',
    (accepted: string) => refuse(-2, forms.field('Content-Type', `must be ${accepted}`, 'Header'), 415),
    'application/json',
  ),
  /** A form body that cannot be read as one (a malformed escape, bytes that are not UTF-8, a name without a value). */
  formInvalid: entry(
    'PGW_ERR_FORM_INVALID',
    'A form body cannot be read as one (a malformed escape, bytes that are not UTF-8)',
    (why: string, status?: number) => refuse(-2, `The request body ${why}`, status),
    'is not UTF-8',
    400,
  ),
  /** A form field that cannot be read (its value badly escaped, its name sent twice). */
  formFieldInvalid: entry(
    'PGW_ERR_FORM_FIELD_INVALID',
    "A form field's value is badly escaped, or its name is sent twice",
    (field: string, why: string, status?: number) => refuse(-2, forms.field(field, why), status),
    '{field}',
    'is sent more than once',
  ),
  notJson: entry(
    'PGW_ERR_NOT_JSON',
    'The body is not JSON (or not UTF-8)',
    (why: string) => refuse(-2, `Request body is not valid JSON: ${why}`, 400),
    '{why}',
  ),
  noBodyTaken: entry(
    'PGW_ERR_NO_BODY_TAKEN',
    'A body is sent to an operation that takes none',
    (operationId: string) => refuse(-2, `${operationId} takes no request body`),
    '{operationId}',
  ),
  bodyRequired: entry('PGW_ERR_BODY_REQUIRED', 'No body is sent to an operation that needs one', () =>
    refuse(-3, 'The request body is required'),
  ),
  parameterNotAllowed: entry(
    'PGW_ERR_PARAMETER_NOT_ALLOWED',
    'A query parameter the operation does not declare',
    (name: string) => refuse(-2, forms.notAllowed(name, 'Parameter')),
    '{name}',
  ),
  headerRequired: entry(
    'PGW_ERR_HEADER_REQUIRED',
    'A credential header the operation needs is missing',
    (name: string) => refuse(-3, forms.required(name, '', 'Header')),
    '{name}',
  ),
  versionRequired: entry(
    'PGW_ERR_VERSION_REQUIRED',
    'A JSON request without the API version header',
    (name: string, value: string) => refuse(-3, forms.required(name, ` and must be ${value}`, 'Header'), 400),
    '{header}',
    '{version}',
  ),
  versionInvalid: entry(
    'PGW_ERR_VERSION_INVALID',
    'The API version header names another version',
    (name: string, value: string) => refuse(-2, forms.invalid(name, `must be ${value}`, 'Header'), 400),
    '{header}',
    '{version}',
  ),
  noOperation: entry(
    'PGW_ERR_NO_OPERATION',
    'No operation has this path',
    (verb: string, pathname: string) => refuse(-2, `No operation at ${verb.toUpperCase()} ${pathname}`, 404),
    'POST',
    '{path}',
  ),
  verbNotAllowed: entry(
    'PGW_ERR_VERB_NOT_ALLOWED',
    'The path has operations, none with this HTTP verb',
    (verb: string, template: string) => refuse(-2, `${verb.toUpperCase()} is not an operation of ${template}`, 405),
    'GET',
    '{path}',
  ),
  badPathEncoding: entry(
    'PGW_ERR_PATH_ENCODING',
    'The path is not correctly percent-encoded',
    (pathname: string) => refuse(-2, `The path ${pathname} is not correctly encoded`, 400),
    '{path}',
  ),
  methodRequired: entry(
    'PGW_ERR_METHOD_REQUIRED',
    "A shared path's body names no method",
    (allowed: string) => refuse(-3, forms.required('method', `: one of ${allowed}`)),
    '{methods}',
  ),
  methodInvalid: entry(
    'PGW_ERR_METHOD_INVALID',
    "A shared path's body names a method the path does not have",
    (allowed: string) => refuse(-2, forms.invalid('method', `must be one of ${allowed}`)),
    '{methods}',
  ),
  methodNotThePath: entry(
    'PGW_ERR_METHOD_NOT_THE_PATH',
    'The body names another method than the one the path names (/token/processCard)',
    (pathMethod: string) => refuse(-2, forms.invalid('method', `must be ${pathMethod}, the method the path names`)),
    '{method}',
  ),
  // A request's scenario (x-sandbox-scenarios, docs/SCENARIOS.md), as the sandbox and the mock answer it.
  scenarioInvalid: entry(
    'PGW_ERR_SCENARIO_INVALID',
    "A request names a scenario its operation does not have, a fault's value out of its range, or one the server cannot honour (the mock: a fault of the connection)",
    (header: string, why: string) => refuse(-2, forms.invalid(header, why, 'Header')),
    'SVC-SANDBOX-SCENARIO',
    "'x' is neither an outcome of processCard (approved, …) nor a fault (latency, …)",
  ),
  scenarioInternalError: entry(
    'PGW_ERR_SCENARIO_INTERNAL_ERROR',
    'The scenario internalError: the -4 of a gateway that failed, nothing processed',
    () => refuse(-4, 'Internal gateway error (scenario internalError): nothing was processed'),
  ),
};

/** A field's schema rule broken, by JSON Schema keyword: one stable code per keyword (refusalFor chooses). */
const invalidBy = (errorCode: ErrorCode, keyword: string, rule: string) =>
  entry(
    errorCode,
    `A value breaks its schema's \`${keyword}\``,
    (field: string, rule: string, kind: RefusalKind = 'Field') =>
      refuse(-2, field ? forms.invalid(field, rule, kind) : forms.request(rule)),
    '{field}',
    rule,
  );

/** The keywords whose broken rule has a code of its own (type, pattern, maxLength…), by keyword. */
export const INVALID_BY_KEYWORD = {
  type: invalidBy('PGW_ERR_FIELD_INVALID_TYPE', 'type', 'must be a string'),
  pattern: invalidBy('PGW_ERR_FIELD_INVALID_PATTERN', 'pattern', "must be {the pattern's words, x-expected}"),
  format: invalidBy('PGW_ERR_FIELD_INVALID_FORMAT', 'format', "must be {the format's words, x-expected}"),
  enum: invalidBy('PGW_ERR_FIELD_INVALID_ENUM', 'enum', 'must be one of AUD, NZD'),
  const: invalidBy('PGW_ERR_FIELD_INVALID_CONST', 'const', 'must be "processCard"'),
  maxLength: invalidBy('PGW_ERR_FIELD_INVALID_MAX_LENGTH', 'maxLength', 'must be at most 64 characters'),
  minLength: invalidBy('PGW_ERR_FIELD_INVALID_MIN_LENGTH', 'minLength', 'must be at least 1 character'),
  maximum: invalidBy('PGW_ERR_FIELD_INVALID_MAXIMUM', 'maximum', 'must be at most 99999999.99'),
  minimum: invalidBy('PGW_ERR_FIELD_INVALID_MINIMUM', 'minimum', 'must be at least 0'),
  exclusiveMaximum: invalidBy('PGW_ERR_FIELD_INVALID_EXCLUSIVE_MAXIMUM', 'exclusiveMaximum', 'must be less than 100'),
  exclusiveMinimum: invalidBy('PGW_ERR_FIELD_INVALID_EXCLUSIVE_MINIMUM', 'exclusiveMinimum', 'must be more than 0'),
  multipleOf: invalidBy('PGW_ERR_FIELD_INVALID_MULTIPLE_OF', 'multipleOf', 'must be a multiple of 0.01'),
  maxItems: invalidBy('PGW_ERR_FIELD_INVALID_MAX_ITEMS', 'maxItems', 'must have at most 100 items'),
  minItems: invalidBy('PGW_ERR_FIELD_INVALID_MIN_ITEMS', 'minItems', 'must have at least 1 item'),
  uniqueItems: invalidBy('PGW_ERR_FIELD_INVALID_UNIQUE_ITEMS', 'uniqueItems', 'must not list an item twice'),
  maxProperties: invalidBy('PGW_ERR_FIELD_INVALID_MAX_PROPERTIES', 'maxProperties', 'must have at most 10 fields'),
  minProperties: invalidBy('PGW_ERR_FIELD_INVALID_MIN_PROPERTIES', 'minProperties', 'must have at least 1 field'),
  'x-decimals': invalidBy('PGW_ERR_FIELD_INVALID_DECIMALS', 'x-decimals', 'must have at most 2 decimals'),
};

/**
 * The validation refusals, made by refusalFor from the schema's errors: a missing field first (-3),
 * else a field not allowed, else the first broken rule (-2), each kind its own code. A parameter's
 * are the same codes, worded "Parameter 'x' …".
 */
export const validationRefusals = {
  required: entry(
    'PGW_ERR_FIELD_REQUIRED',
    'A required field (or parameter) is missing',
    (field: string, kind: RefusalKind = 'Field') => refuse(-3, forms.required(field, '', kind)),
    '{field}',
  ),
  dependentRequired: entry(
    'PGW_ERR_FIELD_REQUIRED_WITH',
    'A field another field needs is missing (dependentRequired)',
    (field: string, other: string, kind: RefusalKind = 'Field') =>
      refuse(-3, forms.required(field, ` when '${other}' is sent`, kind)),
    '{field}',
    '{other}',
  ),
  additionalProperties: entry(
    'PGW_ERR_FIELD_NOT_ALLOWED',
    "A field the operation's schema does not declare (with unknownFields: 'refuse', or inside a nested object)",
    (field: string, kind: RefusalKind = 'Field') => refuse(-2, forms.notAllowed(field, kind)),
    '{field}',
  ),
  ...INVALID_BY_KEYWORD,
  /** A keyword with no code of its own (only an alternative failed: anyOf, oneOf, if/then). */
  other: entry(
    'PGW_ERR_FIELD_INVALID',
    'A value breaks a rule of its schema that has no code of its own (none of its alternatives fits)',
    (field: string, rule: string, kind: RefusalKind = 'Field') =>
      refuse(-2, field ? forms.invalid(field, rule, kind) : forms.request(rule)),
    '{field}',
    '{rule}',
  ),
  /** A failed validation that reported no error (never seen from Ajv; kept as a refusal, not a 5xx). */
  request: entry('PGW_ERR_REQUEST_INVALID', 'The request breaks its schema and no error says where', () =>
    refuse(-2, forms.request()),
  ),
};

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
    responseMessage: refusal.message,
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
 * sends it, in the caller's wire format (the form mode's XML: the same two fields under the root).
 */
export function refusalResponse(
  op: ContractOperation | undefined,
  refusal: Refusal,
  wire: Wire = 'json',
): GatewayResponse {
  const fields = refusalFields(op?.refusalCode, refusal);
  return coded(
    {
      status: refusal.status ?? op?.status ?? 200,
      headers: { 'content-type': wire === 'form' ? XML_TYPE : 'application/json' },
      body: wire === 'form' ? xmlAnswer(fields) : JSON.stringify(fields),
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
  Object.hasOwn(INVALID_BY_KEYWORD, keyword)
    ? INVALID_BY_KEYWORD[keyword as keyof typeof INVALID_BY_KEYWORD]
    : validationRefusals.other;
const { required, dependentRequired, additionalProperties } = validationRefusals;

/** The refusal for a failed validation: a missing field first (-3), else the first invalid one (-2). */
export function refusalFor(errors: readonly ErrorObject[], prefix: RefusalKind = 'Field'): Refusal {
  const missing = errors.find((e) => e.keyword === 'required' || e.keyword === 'dependentRequired');
  if (missing) {
    const name = fieldName(missing.instancePath, missing.params.missingProperty as string);
    const refusal =
      missing.keyword === 'dependentRequired'
        ? dependentRequired(name, fieldName(missing.instancePath, missing.params.property as string), prefix)
        : required(name, prefix);
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
