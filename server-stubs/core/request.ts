// Reading and validating a request against its operation: headers, body, parameters. Each check
// answers the refusal the contract documents; nothing here throws for bad input.
import type { ErrorObject, ValidateFunction } from 'ajv';
import { chooseForm } from '../../runtime/forms.ts';
import { holdsNul, nulField } from '../../runtime/nul-text.ts';
import type { Protocol, Unreadable } from '../../runtime/protocols/protocol.ts';
import type { EntryText } from '../../runtime/refusal-catalogue.ts';
import { refusalCatalogue } from '../../generated/refusal-catalogue.ts';
import { protocols, requestValidators } from './contract.ts';
import { refusals, refusalFor, validationRefusals, type Refusal } from './refusals.ts';
import type { ContractOperation, GatewayRequest } from './types.ts';

export type Checked<T> = { ok: T } | { refusal: Refusal };

/** A request target split at its first `?`: the path, and the query string without the `?`. */
export function splitUrl(url: string): { pathname: string; search: string } {
  const mark = url.indexOf('?');
  return mark < 0 ? { pathname: url, search: '' } : { pathname: url.slice(0, mark), search: url.slice(mark + 1) };
}

/** The refusal a protocol names for what it cannot read (an entry of the catalogue, with its arguments). */
export function refusalOf(unreadable: Unreadable): Refusal {
  const make = (refusals as unknown as Record<string, (...args: readonly unknown[]) => Refusal>)[unreadable.refusal];
  if (!make) throw new TypeError(`No refusal ${unreadable.refusal} in the catalogue`);
  const refusal = make(...unreadable.args);
  // The field it names and why, for the request log and the logger (`Field 'x' is sent more than once`).
  const names = (refusalCatalogue.refusals as Record<string, EntryText | undefined>)[unreadable.refusal]?.args ?? [];
  const at = (name: string) => names.findIndex(([n]) => n === name);
  const field = unreadable.args[at('field')];
  if (typeof field !== 'string') return refusal;
  const why = unreadable.args[at('why')];
  return { ...refusal, field, rule: typeof why === 'string' ? why : unreadable.refusal };
}

export const byteLength = (body: GatewayRequest['body']) =>
  body === undefined ? 0 : typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength;

/** A body's first `bytes` as latin1 text (a string body: its first `bytes` characters), for a look at its method. */
export const headOf = (body: GatewayRequest['body'], bytes: number): string =>
  body === undefined
    ? ''
    : typeof body === 'string'
      ? body.slice(0, bytes)
      : Buffer.from(body.buffer, body.byteOffset, Math.min(bytes, body.byteLength)).toString('latin1');

/**
 * The body: absent, or read by the protocol the request is in (`protocol`, one of those that serve
 * the path: `served`), when it is sent as that protocol's media type. What it reads is untyped where
 * the protocol carries only text: the operation's shape types it once the operation is known
 * (Protocol.typed).
 */
export function parseBody(
  request: GatewayRequest,
  limit: number,
  protocol: Protocol,
  served: readonly Protocol[],
): { ok: unknown; nulFree?: boolean } | { refusal: Refusal } {
  const size = byteLength(request.body);
  if (size > limit) return { refusal: refusals.bodyTooLarge(limit) };
  if (size === 0) return { ok: undefined };
  const type = request.headers['content-type'];
  if (!protocol.takes(type)) {
    // A form's media type in another charset than the one it is read in: the charset is what is wrong.
    const wrong = protocols.wrongCharset(type, served);
    const accepted = protocols.acceptedTypes(served);
    return {
      refusal: wrong
        ? refusals.contentType(accepted, wrong.type, wrong.charset, wrong.reads)
        : refusals.contentType(accepted),
    };
  }
  const read = protocol.read(request.body!);
  return 'ok' in read ? read : { refusal: refusalOf(read.unreadable) };
}

/**
 * The errors of a request body against the operation's schema, or undefined when it is valid. Of a
 * method with several forms, the errors of the form the one form chooser (runtime/forms.ts
 * chooseForm, blameForm) reads it as, the form the client and the contract suite sign it as: the one
 * it fits, else the one whose own fields it holds (a payframe token), else the first it stays within,
 * else the first. So a purchase sent without any card fields is told the card number is required
 * (the card form), not the payframe token, although the payframe form lacks fewer fields.
 */
export function bodyErrors(op: ContractOperation, body: unknown): { form: string; errors: ErrorObject[] } | undefined {
  if (!op.forms) {
    // One form (most methods): its errors, with no lists made.
    const validate = requestValidators[op.request!]!;
    return validate(body) ? undefined : { form: op.request!, errors: validate.errors ?? [] };
  }
  const forms = op.forms;
  const failed: ErrorObject[][] = [];
  for (const form of forms) {
    const validate = requestValidators[form]!;
    if (validate(body)) return undefined;
    failed.push(validate.errors ?? []);
  }
  const fields =
    typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
  const chosen = forms.length > 1 ? chooseForm(op.requestForms!, fields).schema : forms[0]!;
  return { form: chosen, errors: failed[forms.indexOf(chosen)]! };
}

/** The request body against the operation's schema, as the refusal the contract documents. */
export function checkBody(op: ContractOperation, body: unknown): Refusal | undefined {
  if (!op.request) {
    // Get PayID sends {} on a GET (seed §4.6): an empty object is no body.
    const empty =
      body === undefined ||
      (typeof body === 'object' && body !== null && !Array.isArray(body) && Object.keys(body).length === 0);
    return empty ? undefined : refusals.noBodyTaken(op.operationId);
  }
  if (body === undefined) return refusals.bodyRequired();
  const failed = bodyErrors(op, body);
  return failed && refusalFor(failed.errors, 'Field', op.requestForms?.find((f) => f.schema === failed.form)?.unless);
}

/**
 * The body without the fields no form of the operation declares (x-unknown-fields: ignore), their
 * names (`unknown`) and those fields as sent (`ignored`, undefined when there are none). The body
 * itself is returned when it has none, so a clean request costs one pass over its keys.
 */
export function withoutUnknownFields(
  op: ContractOperation,
  body: unknown,
): { body: unknown; unknown: string[]; ignored: Record<string, unknown> | undefined } {
  if (!op.fields || typeof body !== 'object' || body === null || Array.isArray(body))
    return { body, unknown: [], ignored: undefined };
  const fields = fieldsOf(op);
  let unknown: string[] | undefined;
  for (const name in body) {
    if (fields.has(name)) continue;
    unknown ??= [];
    unknown.push(name);
  }
  if (!unknown) return { body, unknown: [], ignored: undefined };
  // Object.fromEntries defines each key as its own (a field named __proto__ stays a field).
  const known = Object.fromEntries(Object.entries(body).filter(([name]) => fields.has(name)));
  const ignored = Object.fromEntries(unknown.map((name) => [name, (body as Record<string, unknown>)[name]]));
  return { body: known, unknown, ignored };
}

// A set, not the list: processCard declares 37 fields, and a body's every key is looked up.
const fieldSets = new WeakMap<ContractOperation, ReadonlySet<string>>();
function fieldsOf(op: ContractOperation): ReadonlySet<string> {
  let fields = fieldSets.get(op);
  if (!fields) {
    fields = new Set(op.fields);
    fieldSets.set(op, fields);
  }
  return fields;
}

/** The body with the fields the contract reads upper-cased (x-normalise) upper-cased; itself when none changes. */
export function normalised(op: ContractOperation, body: unknown): unknown {
  if (!op.normalise || typeof body !== 'object' || body === null || Array.isArray(body)) return body;
  let copy: Record<string, unknown> | undefined;
  for (const field in op.normalise) {
    const value = (body as Record<string, unknown>)[field];
    if (typeof value === 'string' && value !== value.toUpperCase()) {
      copy ??= { ...body };
      copy[field] = value.toUpperCase();
    }
  }
  return copy ?? body;
}

/**
 * A NUL character (U+0000) in anything of the request the operation reads: a path or query parameter,
 * a credential header, a body field at any depth (runtime/nul-text.ts). Checked before the schema, so
 * that the refusal is the same whatever else the field breaks, and nothing is looked up with it.
 */
export function checkNul(
  op: ContractOperation,
  params: Record<string, string>,
  query: Record<string, string>,
  body: unknown,
  headers: GatewayRequest['headers'],
): Refusal | undefined {
  for (const name in params) if (holdsNul(params[name]!)) return nulRefusal(name, 'Parameter');
  for (const name in query) if (holdsNul(query[name]!)) return nulRefusal(name, 'Parameter');
  if (op.headers)
    for (const { name, key } of credentialHeadersOf(op)) {
      const value = headers[key];
      if (typeof value === 'string' && holdsNul(value)) return nulRefusal(name, 'Header');
    }
  const field = nulField(body);
  return field === undefined ? undefined : nulRefusal(field, 'Field');
}

// The credential headers' names, and their keys as adapters write them (lower-cased), made once per
// operation: a name lower-cased per request is a new string, and a lookup by it costs a string-table
// lookup each time.
const credentialHeaders = new WeakMap<ContractOperation, readonly { name: string; key: string }[]>();
function credentialHeadersOf(op: ContractOperation): readonly { name: string; key: string }[] {
  let list = credentialHeaders.get(op);
  if (!list) {
    list = Object.values(op.headers ?? {})
      .filter((name): name is string => name !== undefined)
      .map((name) => ({ name, key: name.toLowerCase() }));
    credentialHeaders.set(op, list);
  }
  return list;
}

const nulRefusal = (field: string, kind: 'Field' | 'Header' | 'Parameter'): Refusal => ({
  ...validationRefusals.nul(field, kind),
  field,
  rule: 'nul',
});

/** Path and query parameters against their schemas. */
export function checkParameters(
  op: ContractOperation,
  params: Record<string, string>,
  query: Record<string, string>,
): Refusal | undefined {
  if (!op.parameters.length) return undefined;
  const validate = parametersValidatorOf(op);
  return validate(hasNames(query) ? { ...query, ...params } : params)
    ? undefined
    : refusalFor(validate.errors ?? [], 'Parameter');
}

// The validator's name is made once per operation: a name made per request is looked up anew each time.
const parametersValidators = new WeakMap<ContractOperation, ValidateFunction>();
function parametersValidatorOf(op: ContractOperation): ValidateFunction {
  let validate = parametersValidators.get(op);
  if (!validate) {
    validate = requestValidators[`${op.operationId}Parameters`]!;
    parametersValidators.set(op, validate);
  }
  return validate;
}

function hasNames(record: Record<string, string>): boolean {
  for (const _ in record) return true;
  return false;
}

const queryNames = new WeakMap<ContractOperation, Set<string>>();
function queryNamesOf(op: ContractOperation): Set<string> {
  let names = queryNames.get(op);
  if (!names) {
    names = new Set(op.parameters.filter((p) => p.in === 'query').map((p) => p.name));
    queryNames.set(op, names);
  }
  return names;
}

/** The query string as an object (a repeated name keeps its last value), without unknown names. */
export function queryOf(op: ContractOperation, search: string): Checked<Record<string, string>> {
  const query: Record<string, string> = {};
  if (!search) return { ok: query };
  const known = queryNamesOf(op);
  if (PLAIN_QUERY.test(search)) {
    // Nothing to decode: the pairs as URLSearchParams reads them, without its object and its copy.
    for (const pair of search.split('&')) {
      if (!pair) continue;
      const equals = pair.indexOf('=');
      const name = equals < 0 ? pair : pair.slice(0, equals);
      if (!known.has(name)) return { refusal: refusals.parameterNotAllowed(name) };
      query[name] = equals < 0 ? '' : pair.slice(equals + 1);
    }
    return { ok: query };
  }
  for (const [name, value] of new URLSearchParams(search)) {
    if (!known.has(name)) return { refusal: refusals.parameterNotAllowed(name) };
    query[name] = value;
  }
  return { ok: query };
}

/** A query string with nothing URLSearchParams would decode or replace: printable ASCII, no `%`, no `+`, no leading `?`. */
const PLAIN_QUERY = /^(?!\?)[\x20-\x24\x26-\x2a\x2c-\x7e]*$/;
