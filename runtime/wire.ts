// The form/XML wire format (x-wire-formats.form; docs/WIRE-FORMATS.md): form bodies read strictly
// and written, their string values turned into the schema's types, and answers written as XML. One
// module for every side: the stubs read forms and write XML with it, clients and the contract
// suite write forms, the generator writes the docs' examples. No validator here: the schemas judge
// what comes out of it.

/**
 * A field's type where it is not a string, as the operation table lists it (formTypes): the form
 * carries every value as a string, and these are turned into the schema's type. An object field
 * (OpenAPI `deepObject`: `options[storeInVaultOnSuccess]=true`) lists its own non-string fields.
 */
export type FormType = 'boolean' | 'integer' | 'number' | { readonly [field: string]: FormType };
export type FormTypes = { readonly [field: string]: FormType };

/** A form body as sent: a value, or an object field's values (`name[key]=value`). */
export type FormFields = Record<string, string | Record<string, string>>;

/** What reading a form gives: its fields, or the field and the rule it breaks (`body` when no field can be named). */
export type FormRead =
  | { ok: FormFields }
  | { field: string; rule: string; status?: 400 }
  | { body: string; status?: 400 };

const BAD_ESCAPE = /%(?![0-9A-Fa-f]{2})/;
const OBJECT_FIELD = /^([^[\]]+)\[([^[\]]+)\]$/;

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

/**
 * Reads an application/x-www-form-urlencoded body strictly, unlike URLSearchParams (which lets a
 * malformed escape through as text and keeps both values of a repeated name): a malformed escape,
 * bytes that are not UTF-8, a name sent twice or a value without a name is refused, naming the
 * field where there is one. Empty pairs (`a=1&&b=2`) are skipped.
 */
export function readForm(text: string): FormRead {
  const fields: FormFields = {};
  const objects = new Map<string, Record<string, string>>();
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
    const nested = name.includes('[') ? OBJECT_FIELD.exec(name) : null;
    const field = nested ? `${nested[1]}.${nested[2]}` : name;
    if (typeof value !== 'string') return { field, rule: value.rule, status: 400 };
    if (!nested) {
      if (Object.hasOwn(fields, name)) return { field, rule: 'is sent more than once' };
      define(fields, name, value);
      continue;
    }
    const [, parent, key] = nested as unknown as [string, string, string];
    let object = objects.get(parent);
    if (!object) {
      if (Object.hasOwn(fields, parent)) return { field: parent, rule: 'is sent more than once' };
      object = {};
      objects.set(parent, object);
      define(fields, parent, object);
    }
    if (Object.hasOwn(object, key)) return { field, rule: 'is sent more than once' };
    define(object, key, value);
  }
  return { ok: fields };
}

const NUMBER = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?$/;
const INTEGER = /^-?(0|[1-9][0-9]*)$/;

function coerce(value: string, type: FormType): unknown {
  if (type === 'boolean')
    return value === 'true' || value === '1' ? true : value === 'false' || value === '0' ? false : value;
  if (type === 'integer') return INTEGER.test(value) ? Number(value) : value;
  if (type === 'number') return NUMBER.test(value) ? Number(value) : value;
  return value;
}

/**
 * The form's fields as the schema types them: an empty value is the field not sent (x-wire-formats
 * form.empty), a value of a boolean, integer or number field becomes one when it reads as one (else
 * it stays a string and the schema refuses it, naming the field). Types come from the operation
 * table (formTypes, generated from the schema): no field is named here.
 */
export function typedForm(fields: FormFields, types: FormTypes): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const name in fields) {
    const value = fields[name]!;
    const type = Object.hasOwn(types, name) ? types[name] : undefined;
    if (typeof value === 'string') {
      if (value === '') continue;
      define(out, name, type === undefined || typeof type === 'object' ? value : coerce(value, type));
    } else {
      const inner = typeof type === 'object' ? type : {};
      const object = typedForm(value, inner);
      if (Object.keys(object).length) define(out, name, object);
    }
  }
  return out;
}

/**
 * A name defined as the object's own field, as JSON.parse defines it: `__proto__` too, which an
 * assignment would take for the prototype (so only it pays for defineProperty).
 */
const define = (object: Record<string, unknown>, name: string, value: unknown) => {
  if (name === '__proto__')
    Object.defineProperty(object, name, { value, enumerable: true, writable: true, configurable: true });
  else object[name] = value;
};

const encode = (text: string) => encodeURIComponent(text).replace(/%20/g, '+');

/** A body as a form: strings as they are, numbers and booleans as text, an object field as `name[key]=value`. */
export function writeForm(body: Readonly<Record<string, unknown>>): string {
  const pairs: string[] = [];
  for (const [name, value] of Object.entries(body)) {
    if (value === undefined || value === null) continue;
    if (typeof value === 'object' && !Array.isArray(value)) {
      for (const [key, inner] of Object.entries(value as Record<string, unknown>))
        if (inner !== undefined && inner !== null) pairs.push(`${encode(`${name}[${key}]`)}=${encode(String(inner))}`);
    } else pairs.push(`${encode(name)}=${encode(String(value))}`);
  }
  return pairs.join('&');
}

// What XML 1.0 character data cannot hold as it is: `&`, `<` and `>` (quotes need no escape outside
// attributes, and clients reading text by pattern would see `&apos;`), and the characters it cannot
// carry at all (control characters but tab, LF and CR; U+FFFE, U+FFFF; a lone surrogate).
const UNSAFE =
  '[&<>\\u0000-\\u0008\\u000B\\u000C\\u000E-\\u001F\\uFFFE\\uFFFF]|[\\uD800-\\uDBFF](?![\\uDC00-\\uDFFF])|(?<![\\uD800-\\uDBFF])[\\uDC00-\\uDFFF]';
const NEEDS_ESCAPE = new RegExp(UNSAFE);
const ESCAPES = new RegExp(UNSAFE, 'g');
const ENTITY: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;' };

/** Text as XML 1.0 character data: markup escaped; a character XML cannot carry written as U+FFFD. */
export function xmlText(text: string): string {
  return NEEDS_ESCAPE.test(text) ? text.replace(ESCAPES, (c) => ENTITY[c] ?? '\uFFFD') : text;
}

const XML_NAME = /^[A-Za-z_][A-Za-z0-9_.-]*$/;

/**
 * An answer as XML: the declaration, then the root element with one child per field, by the same
 * name and in the same order, text only. An empty value (the empty string, or the `[]` of an
 * unsent custom field) is an empty element; an absent one (undefined, null) is left out. A field
 * that is not text (an object, a non-empty list) or whose name is not an XML name is the answer's
 * fault: it throws, and the caller treats it as a broken answer.
 */
export function writeXml(body: Readonly<Record<string, unknown>>, root: string, declaration: string): string {
  let out = `${declaration}\n<${root}>`;
  for (const name in body) {
    const value = body[name];
    if (value === undefined || value === null) continue;
    if (!XML_NAME.test(name)) throw new TypeError(`Field '${name}' is not an XML element name`);
    if (value === '' || (Array.isArray(value) && value.length === 0)) out += `<${name}/>`;
    else if (typeof value === 'string') out += `<${name}>${xmlText(value)}</${name}>`;
    else if (typeof value === 'number' || typeof value === 'boolean') out += `<${name}>${value}</${name}>`;
    else throw new TypeError(`Field '${name}' is not text`);
  }
  return `${out}</${root}>`;
}

/** A body as a server of the form mode reads it once sent as a form (its empty values gone, its types restored). */
export function asReadFromForm(body: Readonly<Record<string, unknown>>, types: FormTypes): Record<string, unknown> {
  const read = readForm(writeForm(body));
  if (!('ok' in read)) throw new TypeError(`The body cannot be sent as a form: ${JSON.stringify(read)}`);
  return typedForm(read.ok, types);
}
