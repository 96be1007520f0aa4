// The JSON protocol (x-wire-formats.json; docs/WIRE-FORMATS.md): the spec's own media type, its
// requests read strictly, its answers written with JSON.stringify, and the version header its clients
// send (the JSON mode's mark, and required in it).
//
// Request bodies are held to what JSON.parse lets through silently: a key sent twice (it keeps the
// last value, so a signed field can be shadowed) and a number no double can hold (1e309 parses as
// Infinity, which JSON.stringify then writes as null). Each is refused naming the field.
//
// Both checks cost almost nothing on an ordinary body: one walk counts the parsed keys, a look at
// each `:` counts the key terminators (`"` then `:`) in the text. Every key has one, so equal
// counts prove there is no duplicate; only when the text has more (a duplicate, or a string holding
// `":`) does an exact scan of the text run. The same walk notes a number that parsed as Infinity;
// only then is its path looked for.
import { jsonCannotHoldCardNumber } from '../card-numbers.ts';
import {
  declared,
  MAX_FIELDS,
  mediaType,
  peeker,
  TOO_MANY_FIELDS,
  type Limit,
  type Protocol,
  type Read,
  type WireFormatDeclaration,
} from './protocol.ts';

export type Parsed = { ok: unknown } | { field: string; rule: string } | { body: string };

/** No request of the contract nests deeper than 6 levels; JSON.parse of 16 MiB of `[` takes 1.8 s and 485 MB. */
export const MAX_DEPTH = 32;
/**
 * The fewest brackets a body must hold to nest deeper than MAX_DEPTH. The depth scan runs on every
 * body that holds more, whatever its size: a 40 KB body of `[` is small, and the code after the parse
 * (the card-number guard, the answer's checks) walks what it parsed recursively.
 */
const BRACKETS = /[[{]/g;

/** The index of the quote that closes the string opened at `open`, or -1 when none does. */
function closingQuote(text: string, open: number): number {
  let i = text.indexOf('"', open + 1);
  while (i > 0 && text.charCodeAt(i - 1) === 92 /* \ */) {
    let slashes = 1;
    while (text.charCodeAt(i - 1 - slashes) === 92) slashes++;
    if (slashes % 2 === 0) break;
    i = text.indexOf('"', i + 1);
  }
  return i;
}

/** Whether the text nests deeper than max, strings skipped; it stops at the first level too deep. */
export function nestsDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 34 /* " */) {
      i = closingQuote(text, i);
      if (i < 0) return false;
    } else if (c === 123 || c === 91) {
      if (++depth > max) return true;
    } else if (c === 125 || c === 93) depth--;
  }
  return false;
}

/** Whether a global pattern matches more than max times; it stops counting there. */
function matchesMoreThan(pattern: RegExp, text: string, max: number): boolean {
  pattern.lastIndex = 0;
  let n = 0;
  // test(), not exec(): a global expression's test() advances the same way without making a match array.
  while (pattern.test(text)) if (++n > max) return true;
  return false;
}

/**
 * The key terminators of a text (a `"`, JSON's white space, then `:`), counted up to more than `max`:
 * from each `:`, found by indexOf, back over the white space to a quote. A string holding `":`
 * counts too, which only sends the text to the exact scan.
 */
function keyEndsMoreThan(text: string, max: number): boolean {
  let n = 0;
  for (let i = text.indexOf(':'); i >= 0; i = text.indexOf(':', i + 1)) {
    let j = i - 1;
    let c = text.charCodeAt(j);
    while (c === 32 || c === 10 || c === 13 || c === 9) c = text.charCodeAt(--j);
    if (c === 34 /* " */ && ++n > max) return true;
  }
  return false;
}

/** What stands before every field and list item but the first of its object or list. */
const SEPARATORS = /,/g;

/**
 * Whether the text holds more than `max` fields and list items: more than `max` commas outside
 * strings. Texts too short to hold so many, and those with few commas at all (a long base64 value
 * has none), are passed over without a scan.
 */
export function holdsMoreValuesThan(text: string, max: number): boolean {
  if (text.length <= 2 * max || !matchesMoreThan(SEPARATORS, text, max)) return false;
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 34 /* " */) {
      i = closingQuote(text, i);
      if (i < 0) return false;
    } else if (c === 44 /* , */ && ++n > max) return true;
  }
  return false;
}

/** The index of the first character at or after `i` that is not JSON's white space. */
function skipSpace(text: string, i: number): number {
  let c = text.charCodeAt(i);
  while (c === 32 || c === 10 || c === 13 || c === 9) c = text.charCodeAt(++i);
  return i;
}

/** A string's text from its quotes at open and close; undefined when its escapes are not JSON's. */
function stringAt(text: string, open: number, close: number): string | undefined {
  const raw = text.slice(open + 1, close);
  if (!raw.includes('\\')) return raw;
  try {
    return JSON.parse(text.slice(open, close + 1)) as string;
  } catch {
    return undefined;
  }
}

/** Keys longer than this are none of the names a salvage looks for, and are not decoded. */
const SALVAGED_KEY_CHARS = 256;

/**
 * The named top-level string fields of a body the strict reader refused (a field sent twice, nesting
 * too deep, too many fields), for a request log to find whose request it was: one scan of the text
 * that skips what is nested (strings and brackets counted, never parsed) and decodes only the values
 * of the names looked for. A name's first value is kept, as the form's salvage keeps it. It stops once
 * every name is found. Undefined when the text is not an object at its top.
 */
export function salvageJson(text: string, names: readonly string[]): Record<string, string> | undefined {
  let i = skipSpace(text, 0);
  if (text.charCodeAt(i) !== 123 /* { */) return undefined;
  const wanted = new Set(names);
  const found: Record<string, string> = {};
  let left = wanted.size;
  let depth = 0;
  // The top-level key whose value comes next, once its colon is passed.
  let key: string | undefined;
  for (; i < text.length && left > 0; i++) {
    const c = text.charCodeAt(i);
    if (c === 34 /* " */) {
      const close = closingQuote(text, i);
      if (close < 0) break;
      if (depth === 1) {
        const after = skipSpace(text, close + 1);
        if (text.charCodeAt(after) === 58 /* : */) {
          key = close - i - 1 <= SALVAGED_KEY_CHARS ? stringAt(text, i, close) : undefined;
          i = after;
          continue;
        }
        if (key !== undefined && wanted.has(key) && !Object.hasOwn(found, key)) {
          const value = stringAt(text, i, close);
          if (value !== undefined) {
            found[key] = value;
            left--;
          }
        }
        key = undefined;
      }
      i = close;
    } else if (c === 123 /* { */ || c === 91 /* [ */) depth++;
    else if (c === 125 /* } */ || c === 93 /* ] */) {
      if (--depth === 0) break;
    } else if (depth === 1 && c === 44 /* , */) key = undefined;
  }
  return found;
}

export function parseJson(text: string): Parsed {
  // Before anything is parsed: what a refusal costs is bounded by the body's size and MAX_FIELDS.
  if (holdsMoreValuesThan(text, MAX_FIELDS)) return { body: TOO_MANY_FIELDS };
  if (matchesMoreThan(BRACKETS, text, MAX_DEPTH) && nestsDeeperThan(text, MAX_DEPTH))
    return { body: `nests deeper than ${MAX_DEPTH} levels` };
  const value: unknown = JSON.parse(text);
  if (typeof value !== 'object' || value === null) return { ok: value };
  const { keys, nonFinite } = countKeys(value);
  if (keyEndsMoreThan(text, keys)) {
    const duplicate = findDuplicateKey(text);
    if (duplicate !== undefined) return { field: duplicate, rule: 'is sent more than once' };
  }
  if (nonFinite) {
    const path = findNonFinite(value);
    if (path !== undefined) return { field: path, rule: 'must be a finite number' };
  }
  return { ok: value };
}

/** The parsed keys, counted, and whether any number is not finite (a number JSON.parse made Infinity). */
function countKeys(root: object): { keys: number; nonFinite: boolean } {
  let n = 0;
  let nonFinite = false;
  // No closure for a child's visit: one would be made on every body.
  const stack: object[] = [root];
  while (stack.length) {
    const v = stack.pop()!;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        const child: unknown = v[i];
        if (typeof child === 'object') {
          if (child !== null) stack.push(child);
        } else if (typeof child === 'number' && !Number.isFinite(child)) nonFinite = true;
      }
    } else {
      for (const k in v) {
        n++;
        const child: unknown = (v as Record<string, unknown>)[k];
        if (typeof child === 'object') {
          if (child !== null) stack.push(child);
        } else if (typeof child === 'number' && !Number.isFinite(child)) nonFinite = true;
      }
    }
  }
  return { keys: n, nonFinite };
}

const join = (path: string, key: string | number) =>
  typeof key === 'number' ? `${path}[${key}]` : path ? `${path}.${key}` : key;

function findNonFinite(root: object): string | undefined {
  const stack: [unknown, string][] = [[root, '']];
  while (stack.length) {
    const [v, path] = stack.pop()!;
    if (typeof v === 'number' && !Number.isFinite(v)) return path;
    if (typeof v !== 'object' || v === null) continue;
    if (Array.isArray(v)) for (let i = 0; i < v.length; i++) stack.push([v[i], join(path, i)]);
    else for (const k in v) stack.push([(v as Record<string, unknown>)[k], join(path, k)]);
  }
  return undefined;
}

type Frame = { keys: Set<string>; key: string; expectKey: boolean } | { index: number };

/** The path of the first key sent twice in one object of this (valid) JSON text, if any. */
export function findDuplicateKey(text: string): string | undefined {
  const frames: Frame[] = [];
  const pathOf = (last: string) => {
    let path = '';
    for (const f of frames.slice(0, -1)) path = 'keys' in f ? join(path, f.key) : join(path, f.index);
    return join(path, last);
  };
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 34 /* " */) {
      let end = text.indexOf('"', i + 1);
      for (;;) {
        let slashes = 0;
        while (text.charCodeAt(end - 1 - slashes) === 92 /* \ */) slashes++;
        if (slashes % 2 === 0) break;
        end = text.indexOf('"', end + 1);
      }
      const top = frames.at(-1);
      if (top && 'keys' in top && top.expectKey) {
        const key = JSON.parse(text.slice(i, end + 1)) as string;
        if (top.keys.has(key)) return pathOf(key);
        top.keys.add(key);
        top.key = key;
        top.expectKey = false;
      }
      i = end;
    } else if (c === 123 /* { */) frames.push({ keys: new Set(), key: '', expectKey: true });
    else if (c === 91 /* [ */) frames.push({ index: 0 });
    else if (c === 125 /* } */ || c === 93 /* ] */) frames.pop();
    else if (c === 44 /* , */) {
      const top = frames.at(-1);
      if (top && 'keys' in top) top.expectKey = true;
      else if (top) top.index++;
    }
  }
  return undefined;
}

const decoder = new TextDecoder('utf-8', { fatal: true });

/** The largest integer a double holds exactly: JSON carries numbers as doubles (RFC 8259 §6). */
const EXACT = Number.MAX_SAFE_INTEGER;

const bound = (s: Record<string, any>) =>
  Math.max(
    ...[s.maximum, s.exclusiveMaximum, s.minimum, s.exclusiveMinimum]
      .filter((v): v is number => typeof v === 'number')
      .map(Math.abs),
    0,
  );

/** What JSON cannot carry: a number beyond what a double holds exactly, at the precision the schema asks. */
export const limits: Limit[] = [
  {
    id: 'exact-number',
    check({ name, schema }) {
      const types: unknown[] = Array.isArray(schema.type) ? schema.type : [schema.type];
      const largest = bound(schema);
      if (types.includes('integer') && largest > EXACT)
        return {
          message: `\`${name}\` is an integer bounded by ${largest}: JSON numbers are doubles, exact only up to ${EXACT}`,
          fix: `bound it within ${EXACT}, or send it as a string with a pattern`,
        };
      const step = typeof schema.multipleOf === 'number' ? schema.multipleOf : undefined;
      if (types.includes('number') && step !== undefined && largest / step > EXACT)
        return {
          message: `\`${name}\` is a number in steps of ${step} up to ${largest}: a double cannot hold every such value exactly`,
          fix: 'lower its bound or coarsen its step, or send it as a string with a pattern',
        };
      return undefined;
    },
  },
];

/** How much of a body's start tells which format it plainly is. */
const SNIFFED = 256;
/** A body's first characters as text (bytes read as latin1: enough to tell `<` or `name=`). */
const startOf = (body: string | Uint8Array): string =>
  typeof body === 'string'
    ? body.slice(0, SNIFFED)
    : Buffer.from(body.buffer, body.byteOffset, Math.min(body.byteLength, SNIFFED)).toString('latin1');

/**
 * What a body that is not JSON plainly is instead, in a refusal's words: XML, or form fields
 * (`name=value&…`). Only its start is looked at.
 */
function readsAs(text: string): string | undefined {
  const start = text.slice(0, SNIFFED).trimStart();
  if (start.startsWith('<')) return 'it reads as XML';
  if (FORM_START.test(start)) return 'it reads as form fields (name=value&…)';
  return undefined;
}
/**
 * JSON.parse's reason, without the body: V8 quotes the text around an unexpected token (`Unexpected
 * token 's', "{"apiKey": s3cret…" is not valid JSON`), which would send a caller's secret back and
 * into logs; its other reasons name a position only. The token is kept when it is one printable
 * character.
 */
function parserReason(message: string): string {
  const token = /^Unexpected token '(.)', .* is not valid JSON$/su.exec(message);
  if (token) return /^[\x21-\x7e]$/.test(token[1]!) ? `Unexpected token '${token[1]}'` : 'Unexpected character';
  return /^[\x20-\x7e]*$/.test(message) && !message.includes('"') ? message : 'it is not valid JSON';
}
/** A form's first field: a name (no JSON punctuation, no space) and its `=`. */
const FORM_START = /^[^\s=&{}[\]",:]+=/;

/** The JSON settings of x-wire-formats.json: the version header its clients send (the ApiVersion parameter). */
export interface JsonDeclaration extends WireFormatDeclaration {
  header: { name: string; schema: { const: string; [keyword: string]: unknown }; [key: string]: unknown };
}

/** The JSON protocol as x-wire-formats.json declares it. */
export function protocol(id: string, declaration: JsonDeclaration): Protocol {
  const type = declaration.request;
  const version = {
    name: declaration.header.name,
    key: declaration.header.name.toLowerCase(),
    value: declaration.header.schema.const,
  };
  return {
    ...declared(id, declaration),
    label: 'JSON',
    mark: version.key,
    limits,
    takes: (contentType) => contentType !== undefined && (contentType === type || mediaType(contentType) === type),
    checkHeaders(headers, body) {
      const value = headers[version.key];
      if (value !== undefined && value.trim() === version.value) return undefined;
      const other = body === undefined ? undefined : readsAs(startOf(body));
      if (other) return { refusal: 'notJson', args: [other, type] };
      if (value === undefined) return { refusal: 'versionRequired', args: [version.name, version.value] };
      return { refusal: 'versionInvalid', args: [version.name, version.value] };
    },
    read(body): Read {
      let text = '';
      try {
        text = typeof body === 'string' ? body : decoder.decode(body);
        const parsed = parseJson(text);
        // JSON can carry a NUL only escaped (a raw control character does not parse): a text without
        // the escape holds none, and the core skips its walk of the body for one.
        if ('ok' in parsed) return text.includes('\\u0000') ? parsed : { ok: parsed.ok, nulFree: true };
        return 'body' in parsed
          ? { unreadable: { refusal: 'bodyInvalid', args: [parsed.body] } }
          : { unreadable: { refusal: 'fieldUnreadable', args: [parsed.field, parsed.rule] } };
      } catch (error) {
        // Read only because its Content-Type is this protocol's: the refusal names that type, and
        // what a body of another format reads as (a form client's fields sent labelled JSON).
        const why = error instanceof SyntaxError ? (readsAs(text) ?? parserReason(error.message)) : 'it is not UTF-8';
        return { unreadable: { refusal: 'notJson', args: [why, type] } };
      }
    },
    salvage: salvageJson,
    // JSON carries its own types.
    typed: (value) => value,
    asSent: { emptyIsAbsent: false },
    requestHeaders: (withBody) =>
      withBody ? { [version.name]: version.value, 'content-type': type } : { [version.name]: version.value },
    writeRequest: (value) => JSON.stringify(value),
    writeAnswer: (value) => JSON.stringify(value),
    // What JSON.stringify wrote holds every value whole, each between quotes or separators.
    cannotHoldCardNumber: jsonCannotHoldCardNumber,
    peek: peeker((field) => new RegExp(`"${field}"\\s*:\\s*"([A-Za-z]+)"`)),
    readAnswer(text) {
      try {
        const value: unknown = JSON.parse(text);
        return typeof value === 'object' && value !== null && !Array.isArray(value)
          ? { ok: value as Record<string, unknown> }
          : { error: 'it is not a JSON object' };
      } catch (error) {
        return { error: `it is not JSON: ${(error as Error).message}` };
      }
    },
    responseCode(text) {
      try {
        const code = (JSON.parse(text) as { responseCode?: unknown }).responseCode;
        return typeof code === 'string' || typeof code === 'number' ? code : undefined;
      } catch {
        return undefined;
      }
    },
  };
}
