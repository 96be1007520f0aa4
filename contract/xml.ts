// Reading an answer of the form/XML mode as a client's parser does, strictly (docs/WIRE-FORMATS.md):
// well-formed XML (fast-xml-parser's validator), the declaration, the mwResponse root, its children
// text only and each named once. The fields come back as the JSON mode would carry them, typed by
// the answer's own schema (an integer responseCode on the partner paths): the checks then judge
// both modes alike.
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { deref, type Doc } from '../runtime/document.ts';
import { formWire } from '../generated/operations.ts';

export type XmlRead = { ok: Record<string, string> } | { error: string };

const parser = new XMLParser({
  ignoreAttributes: false,
  parseTagValue: false,
  trimValues: false,
  ignoreDeclaration: true,
  processEntities: true,
  isArray: () => true,
});

/**
 * An XML declaration of version 1.0 whose encoding, when it names one, is UTF-8: what the gateway
 * writes (formWire.declaration) and the shorter `<?xml version="1.0"?>` of a recorded answer
 * (digistorm/omnipay-merchant-warrior@adb9d250dbed3ec326275c7043ca4103726bba15:tests/Mock/ProcessCardSuccess.txt),
 * which every client's parser reads alike.
 */
const DECLARATION =
  /^<\?xml\s+version\s*=\s*(["'])1\.0\1(\s+encoding\s*=\s*(["'])utf-8\3)?(\s+standalone\s*=\s*(["'])(yes|no)\5)?\s*\?>/i;

/** The root's children as text, or why the text is not an answer of the form/XML mode. */
export function readXmlAnswer(text: string): XmlRead {
  if (!DECLARATION.test(text))
    return { error: `it does not start with an XML 1.0 declaration in UTF-8, such as ${formWire.declaration}` };
  const valid = XMLValidator.validate(text);
  if (valid !== true) return { error: `it is not well-formed XML: ${valid.err.msg} (line ${valid.err.line})` };
  const parsed = parser.parse(text) as Record<string, unknown[]>;
  const roots = Object.keys(parsed);
  if (roots.length !== 1 || roots[0] !== formWire.root || parsed[formWire.root]!.length !== 1)
    return { error: `its root is ${roots.join(', ') || 'missing'}, not ${formWire.root}` };
  const root = parsed[formWire.root]![0];
  if (typeof root !== 'object' || root === null) return { ok: {} };
  const fields: Record<string, string> = {};
  for (const [name, raw] of Object.entries(root as Record<string, unknown>)) {
    const values = Array.isArray(raw) ? raw : [raw];
    if (name === '#text') {
      if (values.some((v) => String(v).trim() !== ''))
        return { error: `${formWire.root} holds text outside its children` };
      continue;
    }
    if (name.startsWith('@_')) return { error: `${formWire.root} carries an attribute ${name.slice(2)}` };
    if (values.length !== 1) return { error: `<${name}> is written ${values.length} times` };
    const value = values[0];
    if (typeof value === 'object' && value !== null) return { error: `<${name}> is not text` };
    Object.defineProperty(fields, name, { value: value === undefined ? '' : String(value), enumerable: true });
  }
  return { ok: fields };
}

/**
 * An XML answer's fields as the JSON mode carries them: a text whose field the schema types as an
 * integer or a number (and not as a string) becomes that number; an empty element of a field the
 * schema lets be a list (the `[]` of an unsent custom field) is that empty list, as a form's empty
 * value is a field not sent; every other text stays a string.
 */
export function typedAnswer(doc: Doc, schema: string, fields: Record<string, string>): Record<string, unknown> {
  const properties = doc.components.schemas[schema]?.properties ?? {};
  const out: Record<string, unknown> = {};
  for (const [name, text] of Object.entries(fields)) {
    const property = Object.hasOwn(properties, name) ? deref(doc, properties[name]) : undefined;
    const types: unknown[] = Array.isArray(property?.type) ? property.type : [property?.type];
    for (const branch of [...(property?.oneOf ?? []), ...(property?.anyOf ?? [])]) types.push(deref(doc, branch).type);
    const numeric = !types.includes('string') && (types.includes('integer') || types.includes('number'));
    if (text === '' && types.includes('array')) out[name] = [];
    else out[name] = numeric && /^-?\d+(\.\d+)?$/.test(text) ? Number(text) : text;
  }
  return out;
}
