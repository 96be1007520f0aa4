// The form/XML protocol (x-wire-formats.form; docs/WIRE-FORMATS.md): requests form-encoded, read
// strictly and typed by their schema's shape; answers written as XML under one root, and read back as
// the public clients read them. One module for every side: the stubs read forms and write XML with
// it, clients and the contract suite write forms and read XML, the generators write the docs'
// examples with it, and its limits are checked over the spec when it is bundled and linted. No
// validator here: the schemas judge what comes out of it.
//
// Nesting is carried as the public clients carry and read it (the spec's x-wire-formats.form.nesting
// cites them): a form writes an object field as `name[key]=value` and a list as `name[0]=value`,
// `name[0][key]=value` (PHP's http_build_query, which most of them post with); an answer writes an
// object as an element holding its fields' elements and a list as an element holding one element per
// item, named by the items' `xml.name` (`<refunds><refund>…</refund></refunds>`), which SimpleXML,
// xmltodict, Hash.from_xml and Magento's parser read as nested values.
import { createRequire } from 'node:module';
import type { XMLParser, XMLValidator } from 'fast-xml-parser';
import {
  CannotCarry,
  charsetOf,
  declared,
  define,
  MAX_FIELDS,
  mediaType,
  peeker,
  type AnswerRead,
  type JsonType,
  type Limit,
  type Protocol,
  type Read,
  type Shape,
  TOO_MANY_FIELDS,
  type WireFormatDeclaration,
} from './protocol.ts';

/** A form body as sent: a value, or an object field's values (`name[key]=value`, `name[0][key]=value`). */
export interface FormFields {
  [name: string]: string | FormFields;
}

/** What reading a form gives: its fields, or the field and the rule it breaks (`body` when no field can be named). */
export type FormRead =
  | { ok: FormFields }
  | { field: string; rule: string; status?: 400 }
  | { body: string; status?: 400 };

const BAD_ESCAPE = /%(?![0-9A-Fa-f]{2})/;
/** A name with keys in brackets: `options[storeInVaultOnSuccess]`, `refunds[0][amount]` (no empty key: `a[]` is a name of its own). */
const NESTED_NAME = /^([^[\]]+)((?:\[[^[\]]+\])+)$/;
const KEY = /\[([^[\]]+)\]/g;
/** Deeper names are read as the names they are (an unknown field), as before nesting was read. */
export const MAX_FORM_DEPTH = 32;
const INDEX = /^(0|[1-9][0-9]*)$/;

/** The control characters XML 1.0 cannot carry, NUL aside (a class's ranges, for the expressions below). */
const XML_CONTROLS = '\\u0001-\\u0008\\u000B\\u000C\\u000E-\\u001F';
/**
 * A value the XML answer could not give back as sent: a control character but tab, LF, CR (and NUL,
 * which the stubs refuse in every mode, naming it: nul-text.ts), or U+FFFE, U+FFFF. Written back it
 * would be U+FFFD, and the hash a client computes over the echo (customHash) would not match: refused
 * instead, naming it. (A lone surrogate, the writer's other U+FFFD, is no UTF-8: the reader refuses it.)
 */
const XML_CANNOT_CARRY = new RegExp(`[${XML_CONTROLS}\\uFFFE\\uFFFF]`);
const cannotCarryRule = (value: string) => {
  const code = value.match(XML_CANNOT_CARRY)![0].charCodeAt(0);
  return `holds the character U+${code.toString(16).toUpperCase().padStart(4, '0')}, which the XML answer cannot carry`;
};

/** The text, or the rule it breaks (an object only then: most names and values decode). */
type Decoded = string | { rule: string };

/** A name or value as sent: `+` is a space, `%XX` a byte, and the bytes must be UTF-8. */
function decode(raw: string): Decoded {
  const spaced = raw.includes('+') ? raw.replace(/\+/g, ' ') : raw;
  if (!spaced.includes('%')) return spaced;
  // Most escapes are well-formed: decode first, and look for the malformed one only when that fails.
  try {
    return decodeURIComponent(spaced);
  } catch {
    return { rule: BAD_ESCAPE.test(spaced) ? 'is not correctly percent-encoded' : 'is not UTF-8 once percent-decoded' };
  }
}

/** A nested name's field as refusals name it: `refunds[0].amount`, `options.storeInVaultOnSuccess`. */
const fieldPath = (keys: readonly string[]) =>
  keys.reduce((path, key, i) => (i === 0 ? key : INDEX.test(key) ? `${path}[${key}]` : `${path}.${key}`), '');

/** The keys of a name: `a[b][0]` → [a, b, 0]; a plain name (or one nested too deep) is itself. */
function keysOf(name: string): string[] | undefined {
  const nested = NESTED_NAME.exec(name);
  if (!nested) return undefined;
  const keys = [nested[1]!];
  for (const m of nested[2]!.matchAll(KEY)) keys.push(m[1]!);
  return keys.length - 1 > MAX_FORM_DEPTH ? undefined : keys;
}

/**
 * Reads an application/x-www-form-urlencoded body strictly, unlike URLSearchParams (which lets a
 * malformed escape through as text and keeps both values of a repeated name): a malformed escape,
 * bytes that are not UTF-8, a name sent twice (or as a value and as an object) or a value without a
 * name is refused, naming the field where there is one. Empty pairs (`a=1&&b=2`) are skipped.
 */
export function readForm(text: string): FormRead {
  // Before anything is decoded: what a refusal costs is bounded by the body's size and MAX_FIELDS.
  if (holdsMorePairsThan(text, MAX_FIELDS)) return { body: TOO_MANY_FIELDS };
  const fields: FormFields = {};
  let start = 0;
  while (start <= text.length) {
    let end = text.indexOf('&', start);
    if (end < 0) end = text.length;
    const pair = text.slice(start, end);
    start = end + 1;
    if (!pair) continue;
    const eq = pair.indexOf('=');
    const rawName = eq < 0 ? pair : pair.slice(0, eq);
    const name = decode(rawName);
    if (typeof name !== 'string') return { body: `has a field name that ${name.rule}`, status: 400 };
    if (!name) return { body: 'has a value without a name' };
    const value = decode(eq < 0 ? '' : pair.slice(eq + 1));
    const keys = name.includes('[') ? keysOf(name) : undefined;
    if (typeof value !== 'string') return { field: keys ? fieldPath(keys) : name, rule: value.rule, status: 400 };
    if (XML_CANNOT_CARRY.test(value)) return { field: keys ? fieldPath(keys) : name, rule: cannotCarryRule(value) };
    if (!keys) {
      if (Object.hasOwn(fields, name)) return { field: name, rule: 'is sent more than once' };
      define(fields as Record<string, unknown>, name, value);
      continue;
    }
    let into = fields;
    for (let i = 0; i < keys.length - 1; i++) {
      const key = keys[i]!;
      const inner = Object.hasOwn(into, key) ? into[key] : undefined;
      if (typeof inner === 'string') return { field: fieldPath(keys.slice(0, i + 1)), rule: 'is sent more than once' };
      if (inner) into = inner;
      else {
        const object: FormFields = {};
        define(into as Record<string, unknown>, key, object);
        into = object;
      }
    }
    const last = keys.at(-1)!;
    if (Object.hasOwn(into, last)) return { field: fieldPath(keys), rule: 'is sent more than once' };
    define(into as Record<string, unknown>, last, value);
  }
  return { ok: fields };
}

/** Whether the form holds more than `max` pairs (empty ones skipped, as readForm skips them). */
function holdsMorePairsThan(text: string, max: number): boolean {
  if (text.length <= 2 * max) return false;
  let n = 0;
  for (let start = 0; start <= text.length; ) {
    let end = text.indexOf('&', start);
    if (end < 0) end = text.length;
    if (end > start && ++n > max) return true;
    start = end + 1;
  }
  return false;
}

const NUMBER = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?$/;
const INTEGER = /^-?(0|[1-9][0-9]*)$/;

/** A form's text as the shape types it: a boolean, integer or number field's value becomes one when it reads as one. */
function coerce(value: string, types: readonly JsonType[] | undefined): unknown {
  if (types === undefined || types.includes('string')) return value;
  if (types.includes('boolean')) {
    if (value === 'true' || value === '1') return true;
    if (value === 'false' || value === '0') return false;
  }
  if (types.includes('integer') && INTEGER.test(value)) return Number(value);
  if (types.includes('number') && NUMBER.test(value)) return Number(value);
  return value;
}

/** An object's keys as a list's indexes, in order, when they are exactly 0 … n-1. */
function asList(object: FormFields): string[] | undefined {
  const keys = Object.keys(object);
  for (const key of keys) if (!INDEX.test(key) || Number(key) >= keys.length) return undefined;
  return keys.sort((a, b) => Number(a) - Number(b));
}

/**
 * The form's fields as the schema types them (shape, from the operation table): an empty value is
 * the field not sent (x-wire-formats form.empty), a value of a boolean, integer or number field
 * becomes one when it reads as one (else it stays a string and the schema refuses it, naming the
 * field), an object field's values are typed by its own fields, and a list's `[0]`, `[1]` … become
 * its items (an item keeps its place, empty or not). No field is named here.
 */
export function typedForm(fields: FormFields, shape: Shape | null | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const inner = shape?.fields;
  for (const name in fields) {
    const value = fields[name]!;
    const field = inner && Object.hasOwn(inner, name) ? inner[name] : undefined;
    if (typeof value === 'string') {
      if (value === '') continue;
      define(out, name, field === undefined ? value : coerce(value, field.types));
      continue;
    }
    const typed = nested(value, field);
    if (typed !== undefined) define(out, name, typed);
  }
  return out;
}

function nested(value: FormFields, shape: Shape | undefined): unknown {
  const order = shape?.types?.includes('array') ? asList(value) : undefined;
  if (!order) {
    const object = typedForm(value, shape);
    return Object.keys(object).length ? object : undefined;
  }
  return order.map((index) => {
    const item = value[index]!;
    return typeof item === 'string' ? coerce(item, shape!.items?.types) : nested(item, shape!.items);
  });
}

const encode = (text: string) => encodeURIComponent(text).replace(/%20/g, '+');

/** A body as a form: strings as they are, numbers and booleans as text, objects and lists as http_build_query writes them. */
export function writeForm(body: Readonly<Record<string, unknown>>): string {
  const pairs: string[] = [];
  const write = (name: string, value: unknown) => {
    if (value === undefined || value === null) return;
    if (Array.isArray(value)) for (const [i, item] of value.entries()) write(`${name}[${i}]`, item);
    else if (typeof value === 'object')
      for (const [key, inner] of Object.entries(value as Record<string, unknown>)) write(`${name}[${key}]`, inner);
    else pairs.push(`${encode(name)}=${encode(String(value))}`);
  };
  for (const [name, value] of Object.entries(body)) write(name, value);
  return pairs.join('&');
}

// What XML 1.0 character data cannot hold as it is: `&`, `<` and `>` (quotes need no escape outside
// attributes, and clients reading text by pattern would see `&apos;`); CR, which every conforming
// reader turns into LF (XML 1.0 §2.11: libxml2 under SimpleXML, Nokogiri, ElementTree, .NET), so a
// value holding one would come back changed and its hash (customHash) would no longer match: written
// `&#13;`, which a reader gives back as CR; and the characters it cannot carry at all (control
// characters but tab, LF and CR; U+FFFE, U+FFFF; a lone surrogate), not even as a reference.
const UNSAFE = `[&<>\\r\\u0000${XML_CONTROLS}\\uFFFE\\uFFFF]|[\\uD800-\\uDBFF](?![\\uDC00-\\uDFFF])|(?<![\\uD800-\\uDBFF])[\\uDC00-\\uDFFF]`;
const NEEDS_ESCAPE = new RegExp(UNSAFE);
const ESCAPES = new RegExp(UNSAFE, 'g');
const ENTITY: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '\r': '&#13;' };

/** Text as XML 1.0 character data: markup and CR escaped; a character XML cannot carry written as U+FFFD. */
export function xmlText(text: string): string {
  return NEEDS_ESCAPE.test(text) ? text.replace(ESCAPES, (c) => ENTITY[c] ?? '\uFFFD') : text;
}

const XML_NAME = /^[A-Za-z_][A-Za-z0-9_.-]*$/;

/** One element: text, an empty element, an object's fields, or a list's items each named by the shape's itemName. */
function element(name: string, value: unknown, shape: Shape | undefined): string {
  if (!XML_NAME.test(name)) throw new CannotCarry(`Field '${name}' is not an XML element name`);
  if (value === '') return `<${name}/>`;
  if (typeof value === 'string') return `<${name}>${xmlText(value)}</${name}>`;
  if (typeof value === 'number' || typeof value === 'boolean') return `<${name}>${value}</${name}>`;
  if (Array.isArray(value)) {
    if (value.length === 0) return `<${name}/>`;
    const item = shape?.itemName;
    if (item === undefined)
      throw new CannotCarry(`Field '${name}' is a list whose schema names no item element (items.xml.name)`);
    let out = `<${name}>`;
    for (const v of value) if (v !== undefined && v !== null) out += element(item, v, shape!.items);
    return `${out}</${name}>`;
  }
  if (typeof value === 'object' && value !== null) {
    const inner = children(value as Record<string, unknown>, shape);
    return inner ? `<${name}>${inner}</${name}>` : `<${name}/>`;
  }
  throw new CannotCarry(`Field '${name}' is not text`);
}

function children(body: Readonly<Record<string, unknown>>, shape: Shape | null | undefined): string {
  let out = '';
  const fields = shape?.fields;
  for (const name in body) {
    const value = body[name];
    if (value === undefined || value === null) continue;
    out += element(name, value, fields && Object.hasOwn(fields, name) ? fields[name] : undefined);
  }
  return out;
}

/**
 * An answer as XML: the declaration, then the root element with one child per field, by the same
 * name and in the same order. An empty value (the empty string, an empty list such as the `[]` of an
 * unsent custom field) is an empty element; an absent one (undefined, null) is left out; an object is
 * an element holding its fields, a list an element holding one element per item, named by the shape
 * (items.xml.name). What XML cannot carry (a name that is no XML name, a list whose items have no
 * name) is the answer's fault: it throws CannotCarry, and the caller treats it as a broken answer.
 */
export function writeXml(
  body: Readonly<Record<string, unknown>>,
  root: string,
  declaration: string,
  shape?: Shape | null,
): string {
  return `${declaration}\n<${root}>${children(body, shape)}</${root}>`;
}

/**
 * fast-xml-parser, loaded when the first answer is read: a server of the form mode writes XML and
 * never reads it, and the library's ES modules cost every start some 20 ms of CPU (its one CommonJS
 * file, required when needed, 4 ms).
 */
let xml: { parser: XMLParser; validator: typeof XMLValidator } | undefined;
function xmlReader(): { parser: XMLParser; validator: typeof XMLValidator } {
  if (!xml) {
    const library = createRequire(import.meta.url)('fast-xml-parser') as typeof import('fast-xml-parser');
    xml = {
      parser: new library.XMLParser({
        ignoreAttributes: false,
        parseTagValue: false,
        trimValues: false,
        ignoreDeclaration: true,
        // References are decoded below, in one pass over each text: fast-xml-parser's own decoder leaves a
        // character reference (&#13;) as it is, and would expand entities a DOCTYPE declares.
        processEntities: false,
        isArray: () => true,
      }),
      validator: library.XMLValidator,
    };
  }
  return xml;
}

const REFERENCE = /&(?:(amp|lt|gt|quot|apos)|#(\d{1,7})|#x([0-9A-Fa-f]{1,6}));/g;
const PREDEFINED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

/** An element's text with XML's predefined entities and character references read (any other `&` left as it is). */
function decodeReferences(text: string): string {
  if (!text.includes('&')) return text;
  return text.replace(
    REFERENCE,
    (whole, name: string | undefined, decimal: string | undefined, hex: string | undefined) => {
      if (name) return PREDEFINED[name]!;
      const code = decimal !== undefined ? Number(decimal) : Number.parseInt(hex!, 16);
      return code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    },
  );
}

const NUMERIC = /^-?\d+(\.\d+)?$/;

/** An element's text as its shape types it: a number where the schema allows a number and no string, an empty list or object where it allows one. */
function typedText(text: string, shape: Shape | undefined): unknown {
  const types = shape?.types;
  if (!types) return text;
  if (text === '' && types.includes('array')) return [];
  if (text === '' && types.includes('object') && !types.includes('string')) return {};
  if (types.includes('string')) return text;
  if ((types.includes('integer') || types.includes('number')) && NUMERIC.test(text)) return Number(text);
  if (types.includes('boolean') && (text === 'true' || text === 'false')) return text === 'true';
  return text;
}

type XmlNode = string | { [name: string]: unknown[] };

/** An element's content as the value it carries, or why a client could not read it so. */
function readElement(
  name: string,
  node: XmlNode | undefined,
  shape: Shape | undefined,
): { ok: unknown } | { error: string } {
  if (node === undefined || typeof node !== 'object' || node === null)
    return { ok: typedText(node === undefined ? '' : decodeReferences(String(node)), shape) };
  const list = shape?.types?.includes('array') && shape.itemName !== undefined;
  const object = shape?.types?.includes('object');
  if (!list && !object) return { error: `<${name}> is not text` };
  const fields: Record<string, unknown> = {};
  const items: unknown[] = [];
  for (const [child, raw] of Object.entries(node)) {
    const values = Array.isArray(raw) ? raw : [raw];
    if (child === '#text') {
      if (values.some((v) => String(v).trim() !== '')) return { error: `<${name}> holds text beside its elements` };
      continue;
    }
    if (child.startsWith('@_')) return { error: `<${name}> carries an attribute ${child.slice(2)}` };
    if (list) {
      if (child !== shape!.itemName) return { error: `<${name}> holds <${child}>, not its items <${shape!.itemName}>` };
      for (const value of values) {
        const read = readElement(child, value as XmlNode, shape!.items);
        if ('error' in read) return read;
        items.push(read.ok);
      }
      continue;
    }
    if (values.length !== 1) return { error: `<${child}> is written ${values.length} times in <${name}>` };
    const read = readElement(child, values[0] as XmlNode, shape!.fields?.[child]);
    if ('error' in read) return read;
    define(fields, child, read.ok);
  }
  return { ok: list ? items : fields };
}

/**
 * An answer read strictly, as a client's parser reads it: well-formed XML (fast-xml-parser's
 * validator), the declaration, the one root, its children elements named once each, text unless the
 * shape makes them an object or a list (whose items are named as the shape says). The fields come
 * back as the JSON mode would carry them, typed by the answer's shape (an integer responseCode on the
 * partner paths, an empty list for an unsent custom field): the checks then judge both modes alike.
 */
/**
 * An XML declaration of version 1.0 whose encoding, when it names one, is UTF-8: what the gateway
 * writes (x-wire-formats' declaration) and the shorter `<?xml version="1.0"?>` of a recorded answer
 * (digistorm/omnipay-merchant-warrior@adb9d250dbed3ec326275c7043ca4103726bba15:tests/Mock/ProcessCardSuccess.txt),
 * which every client's parser reads alike.
 */
const XML_1_0_UTF8 =
  /^<\?xml\s+version\s*=\s*(["'])1\.0\1(\s+encoding\s*=\s*(["'])utf-8\3)?(\s+standalone\s*=\s*(["'])(yes|no)\5)?\s*\?>/i;

export function readXml(text: string, root: string, declaration: string, shape?: Shape | null): AnswerRead {
  const parsed = parsedRoot(text, root, declaration);
  if ('error' in parsed) return { error: parsed.error };
  const { top } = parsed;
  if (typeof top !== 'object' || top === null) return { ok: {} };
  const read = readElement(root, top as XmlNode, {
    types: ['object'],
    ...(shape?.fields ? { fields: shape.fields } : {}),
  });
  return 'error' in read ? read : { ok: read.ok as Record<string, unknown> };
}

/**
 * The texts read lately, and each one's root element's content as parsed (or why it cannot be read),
 * the most recent last: a refusal is read twice in a row, as the operation's result and then as its
 * refusal (contract/http.ts readAnswer), and a contract run reads the same refusal again and again
 * (818 XML answers parsed in a run against the sandbox, 231 of them different texts). The
 * well-formedness check and the parse are the larger part of reading a text, and depend on nothing
 * else: each is done once for a text while it is among the last READ_KEPT read. readElement only
 * reads the parsed tree. Texts longer than READ_KEPT_CHARS are read afresh (a file's worth is not kept).
 */
const READ_KEPT = 256;
const READ_KEPT_CHARS = 16 * 1024;
const lately = new Map<string, { top: XmlNode } | { error: string }>();

function parsedRoot(text: string, root: string, declaration: string): { top: XmlNode } | { error: string } {
  if (text.length > READ_KEPT_CHARS) return rootOf(text, root, declaration);
  const key = `${root}\u0000${declaration}\u0000${text}`;
  let parsed = lately.get(key);
  if (parsed) lately.delete(key);
  else {
    parsed = rootOf(text, root, declaration);
    if (lately.size >= READ_KEPT) lately.delete(lately.keys().next().value!);
  }
  lately.set(key, parsed);
  return parsed;
}

/** The content of the answer's one root element as parsed, or why a client could not read the text. */
function rootOf(text: string, root: string, declaration: string): { top: XmlNode } | { error: string } {
  if (!XML_1_0_UTF8.test(text))
    return { error: `it does not start with an XML 1.0 declaration in UTF-8, such as ${declaration}` };
  const { parser, validator } = xmlReader();
  const valid = validator.validate(text);
  if (valid !== true) return { error: `it is not well-formed XML: ${valid.err.msg} (line ${valid.err.line})` };
  const parsed = parser.parse(text) as Record<string, unknown[]>;
  const roots = Object.keys(parsed);
  if (roots.length !== 1 || roots[0] !== root || parsed[root]!.length !== 1)
    return { error: `its root is ${roots.join(', ') || 'missing'}, not ${root}` };
  return { top: parsed[root]![0] as XmlNode };
}

/** A body as a server of the form mode reads it once sent as a form (its empty values gone, its types restored). */
export function asReadFromForm(body: Readonly<Record<string, unknown>>, shape: Shape | null): Record<string, unknown> {
  const read = readForm(writeForm(body));
  if (!('ok' in read)) throw new TypeError(`The body cannot be sent as a form: ${JSON.stringify(read)}`);
  return typedForm(read.ok, shape);
}

const types = (schema: Record<string, any>): unknown[] =>
  Array.isArray(schema.type) ? schema.type : schema.type === undefined ? [] : [schema.type];
const canHoldItems = (schema: Record<string, any>) => schema.items !== false && schema.maxItems !== 0;

/**
 * What the form/XML protocol cannot carry, in a schema of an operation it serves. Each is reported
 * when the document is bundled and by the lint, in the method's file, with the fix.
 */
export const limits: Limit[] = [
  {
    id: 'xml-name',
    check: ({ side, name }) =>
      side === 'answer' && !XML_NAME.test(name)
        ? {
            message: `\`${name}\` is not an XML element name, so the XML answer cannot carry it`,
            fix: 'rename it: a letter or _ first, then letters, digits, _, - or .',
          }
        : undefined,
  },
  {
    id: 'list-item-name',
    check: ({ side, name, schema }) =>
      side === 'answer' && types(schema).includes('array') && canHoldItems(schema) && !schema.items?.xml?.name
        ? {
            message: `\`${name}\` is a list: the XML answer writes it as <${name}> holding one element per item, and its items have no element name`,
            fix: `name the item's element under \`items\`: \`xml: {name: ${singular(name)}}\``,
          }
        : undefined,
  },
  {
    id: 'flat-leaf-names',
    check: ({ side, name, within, topLevel, schema }) =>
      side === 'answer' &&
      within.length > 0 &&
      topLevel.has(name) &&
      !types(schema).some((t) => t === 'object' || t === 'array')
        ? {
            message: `\`${within.join('.')}.${name}\` shares its name with the answer's own \`${name}\`: ActiveMerchant reads every leaf of the XML answer by name into one hash, so the nested one would replace it`,
            fix: `give the nested field a name of its own (e.g. \`${within.at(-1) === undefined ? name : singular(within.at(-1)!)}${name[0]!.toUpperCase()}${name.slice(1)}\`)`,
          }
        : undefined,
  },
  {
    id: 'no-null',
    check: ({ name, schema }) =>
      types(schema).includes('null')
        ? {
            message: `\`${name}\` may be null: a form and an XML answer carry text only, and cannot tell null from a field not sent`,
            fix: 'leave the field out of the body instead of sending null (drop `null` from its type)',
          }
        : undefined,
  },
  {
    id: 'named-fields',
    check: ({ name, schema }) =>
      types(schema).includes('object') &&
      (schema.patternProperties || (schema.additionalProperties && typeof schema.additionalProperties === 'object'))
        ? {
            message: `\`${name}\` is an object whose field names are not declared: a form field or an XML element must have a name the schema knows`,
            fix: 'declare its fields under `properties` (or make it a list of name/value items)',
          }
        : undefined,
  },
];

/** A list's name made singular for a suggested item name: refunds → refund, entries → entry. */
function singular(name: string): string {
  if (name.endsWith('ies')) return `${name.slice(0, -3)}y`;
  if (name.endsWith('s') && !name.endsWith('ss')) return name.slice(0, -1);
  return `${name}Item`;
}

/** The form/XML settings of x-wire-formats.form: the XML root and declaration. */
export interface FormDeclaration extends WireFormatDeclaration {
  xml: { name: string; declaration: string };
  empty?: { rule: 'absent' };
}

/** The form/XML protocol as x-wire-formats.form declares it. */
export function protocol(id: string, declaration: FormDeclaration): Protocol {
  const type = declaration.request;
  const { name: root, declaration: xmlDeclaration } = declaration.xml;
  return {
    ...declared(id, declaration),
    label: 'form/XML',
    mark: undefined,
    limits,
    // A form is read as UTF-8 (its percent-escapes are UTF-8 bytes); a charset that says otherwise is not served.
    charset: 'UTF-8',
    takes(contentType) {
      if (contentType === undefined) return false;
      if (mediaType(contentType) !== type) return false;
      const charset = charsetOf(contentType)?.toLowerCase();
      return charset === undefined || charset === 'utf-8' || charset === 'utf8';
    },
    checkHeaders: () => undefined,
    read(body): Read {
      let text: string;
      try {
        text = typeof body === 'string' ? body : decoder.decode(body);
      } catch {
        // Bytes that are not UTF-8 (a client writing Latin-1): the field they are in, where it can be named.
        const field = fieldNotUtf8(body as Uint8Array);
        return {
          unreadable:
            field === undefined
              ? { refusal: 'formInvalid', args: ['is not UTF-8', 400] }
              : 'name' in field
                ? { refusal: 'formInvalid', args: ['has a field name that is not UTF-8', 400] }
                : { refusal: 'formFieldInvalid', args: [field.field, 'is not UTF-8', 400] },
        };
      }
      const read = readForm(text);
      // Its empty values dropped now (an empty value is a field not sent): `method=` names no method.
      if ('ok' in read) return { ok: typedForm(read.ok, null) };
      return {
        unreadable:
          'body' in read
            ? { refusal: 'formInvalid', args: [read.body, read.status] }
            : { refusal: 'formFieldInvalid', args: [read.field, read.rule, read.status] },
      };
    },
    salvage: salvageForm,
    // A body whose fields are all text (most) is already what read() gave.
    typed: (value, shape) =>
      shape?.fields && typeof value === 'object' && value !== null ? typedForm(value as FormFields, shape) : value,
    requestHeaders: (withBody): Record<string, string> => (withBody ? { 'content-type': type } : {}),
    writeRequest: writeForm,
    writeAnswer: (value, shape) => writeXml(value, root, xmlDeclaration, shape),
    readAnswer: (text, shape) => readXml(text, root, xmlDeclaration, shape),
    peek: peeker((field) => new RegExp(`(?:^|&)${field}=([A-Za-z]+)(?:&|$)`)),
    responseCode: (text) => RESPONSE_CODE.exec(text)?.[1],
    // OpenAPI's deepObject is the bracket form of an object field; the answer's schema names its root.
    describeRequest: (schema, nested) => ({
      schema,
      ...(nested.length
        ? { encoding: Object.fromEntries(nested.map((name) => [name, { style: 'deepObject', explode: true }])) }
        : {}),
    }),
    describeAnswer: (schema) => ({ schema: { ...schema, xml: { name: root } } }),
    // An empty value is a field not sent (x-wire-formats form.empty); coerce() reads these texts.
    asSent: {
      emptyIsAbsent: declaration.empty?.rule === 'absent',
      text: {
        boolean: { type: 'string', enum: ['true', 'false', '1', '0'] },
        integer: { type: 'string', pattern: INTEGER.source },
        number: { type: 'string', pattern: NUMBER.source },
      },
    },
    docs: {
      sample: 'curl (form/XML)',
      note: 'The form/XML mode (docs/WIRE-FORMATS.md): the same fields form-encoded, no version header; the answer is XML.',
      // The form clients post to the path with a trailing slash (/post/).
      path: (path) => `${path}/`,
      taken: (method) =>
        `form-encoded (\`method=${method}\`, no version header) and then answered in XML under \`<${root}>\``,
    },
  };
}

const decoder = new TextDecoder('utf-8', { fatal: true });

/**
 * The named fields of a form read refused, each pair read apart (a pair that does not decode is
 * skipped, a name's first value kept): whose request it was, for the request log.
 */
function salvageForm(text: string, names: readonly string[]): Record<string, string> {
  const wanted = new Set(names);
  const found: Record<string, string> = {};
  if (holdsMorePairsThan(text, MAX_FIELDS)) return found;
  for (const pair of text.split('&')) {
    const eq = pair.indexOf('=');
    if (eq < 0) continue;
    const name = decode(pair.slice(0, eq));
    if (typeof name !== 'string' || !wanted.has(name) || Object.hasOwn(found, name)) continue;
    const value = decode(pair.slice(eq + 1));
    if (typeof value === 'string') found[name] = value;
  }
  return found;
}

const AMPERSAND = 0x26;
const EQUALS = 0x3d;

/**
 * Where a form's raw bytes are not UTF-8: the first pair whose value is not, named as refusals name
 * its field (`refunds[0].note`); `name` when a pair's name is not; undefined when no pair can be
 * blamed (the body as a whole is not UTF-8). Read only once the body has been refused.
 */
function fieldNotUtf8(bytes: Uint8Array): { field: string } | { name: true } | undefined {
  for (let start = 0; start <= bytes.length; ) {
    let end = bytes.indexOf(AMPERSAND, start);
    if (end < 0) end = bytes.length;
    const pair = bytes.subarray(start, end);
    start = end + 1;
    const eq = pair.indexOf(EQUALS);
    let name: Decoded;
    try {
      name = decode(decoder.decode(eq < 0 ? pair : pair.subarray(0, eq)));
    } catch {
      return { name: true };
    }
    if (eq < 0) continue;
    try {
      decoder.decode(pair.subarray(eq + 1));
    } catch {
      if (typeof name !== 'string' || !name) return undefined;
      const keys = name.includes('[') ? keysOf(name) : undefined;
      return { field: keys ? fieldPath(keys) : name };
    }
  }
  return undefined;
}
const RESPONSE_CODE = /<responseCode>(-?\d+)<\/responseCode>/;
