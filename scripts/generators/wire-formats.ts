// The form/XML mode in the bundled document (x-wire-formats.form, spec/openapi.yaml): every
// operation of its paths gets an application/x-www-form-urlencoded request body and an
// application/xml answer, each a $ref to the JSON mode's own schema (the answer's with the `xml`
// object naming the root), so no schema is written twice. Their examples are values those schemas
// describe, as OpenAPI 3.1 gives a non-JSON example: the form's the fields a server reads from the
// form (the request's `encoding` says how they are written: object fields as deepObject), the XML's
// the text an XML reader finds in the answer (`xml.name` names the root). Each is the JSON example
// itself (the same $ref) where the mode reads it unchanged; the XML writer the server runs
// (runtime/wire.ts) writes an XML example as it writes the JSON example, or the build fails.
import { isDeepStrictEqual } from 'node:util';
import { deref } from '../../runtime/document.ts';
import { resolvePointer, type Doc, type DocNode } from '../lib/contract.ts';
import { writeXml, type FormType, type FormTypes } from '../../runtime/wire.ts';

const pointerTo = (...keys: string[]) => `#/${keys.map((k) => k.replace(/~/g, '~0').replace(/\//g, '~1')).join('/')}`;

type Fields = Record<string, unknown>;

/** A request as a form carries it: an empty value is the field not sent (x-wire-formats form.empty). */
function asFormFields(value: Fields): Fields {
  const out: Fields = {};
  for (const [name, field] of Object.entries(value)) {
    if (field === '' || field === null || field === undefined) continue;
    if (typeof field === 'object' && !Array.isArray(field)) {
      const inner = asFormFields(field as Fields);
      if (Object.keys(inner).length) out[name] = inner;
    } else out[name] = field;
  }
  return out;
}

/** An answer as an XML reader finds it: an empty element (an unsent custom field's `[]`) is the empty string. */
const asXmlFields = (value: Fields): Fields =>
  Object.fromEntries(Object.entries(value).map(([name, field]) => [name, Array.isArray(field) ? '' : field]));

/**
 * The examples of a media type in the other mode: the JSON example's own $ref where the mode reads it
 * unchanged, else its value as the mode reads it. Where the mode writes (the server's XML), it must
 * write both values to the same text, so that the two examples stay one answer.
 */
function examplesIn(
  doc: Doc,
  examples: DocNode | undefined,
  mode: { name: string; read: (value: Fields) => Fields; write?: (value: Fields) => string },
): DocNode | undefined {
  if (!examples) return undefined;
  return Object.fromEntries(
    Object.entries<DocNode>(examples).map(([name, ref]) => {
      const example = deref(doc, ref);
      const value = mode.read(example.value);
      if (mode.write && mode.write(value) !== mode.write(example.value))
        throw new Error(
          `x-wire-formats: the example ${name} in the ${mode.name} is not the JSON example's ${mode.name}`,
        );
      if (isDeepStrictEqual(value, example.value)) return [name, structuredClone(ref)];
      return [name, { ...(example.summary ? { summary: example.summary } : {}), value }];
    }),
  );
}

/** The request's object fields, sent as `name[key]=value` (deepObject) in a form. */
function objectFields(doc: Doc, schema: DocNode): string[] {
  const names = new Set<string>();
  const visit = (node: DocNode) => {
    const s = deref(doc, node);
    for (const branch of [...(s.oneOf ?? []), ...(s.anyOf ?? []), ...(s.allOf ?? [])]) visit(branch);
    for (const [name, property] of Object.entries<DocNode>(s.properties ?? {}))
      if (deref(doc, property).type === 'object') names.add(name);
  };
  visit(schema);
  return [...names].sort();
}

/** The bundled document with the form/XML mode's media types on every operation of its paths. */
export function withWireFormats(doc: Doc): Doc {
  // A spec from before the mode (an older release, bundled by the diff) has no x-wire-formats.
  const form = doc['x-wire-formats']?.form;
  if (!form) return doc;
  const { name: root, declaration } = form.xml;
  for (const path of form.paths) {
    const item = doc.paths[path];
    if (!item) throw new Error(`x-wire-formats.form.paths: ${path} is not a path of the contract`);
    for (const [verb, op] of Object.entries<DocNode>(item)) {
      const json = op?.requestBody?.content?.['application/json'];
      if (!json) continue;
      const encoding = Object.fromEntries(
        objectFields(doc, json.schema).map((name) => [name, { style: 'deepObject', explode: true }]),
      );
      op.requestBody.content[form.request] = {
        schema: { $ref: pointerTo('paths', path, verb, 'requestBody', 'content', 'application/json', 'schema') },
        ...(Object.keys(encoding).length ? { encoding } : {}),
        ...(json.examples ? { examples: examplesIn(doc, json.examples, { name: 'form', read: asFormFields }) } : {}),
      };
      for (const [status, response] of Object.entries<DocNode>(op.responses ?? {})) {
        const answer = deref(doc, response).content?.['application/json'];
        // Shared error responses (components) stay JSON-described; the 2xx answer carries the mode.
        if (!answer || response.$ref || !status.startsWith('2')) continue;
        response.content[form.answer] = {
          schema: {
            $ref: pointerTo('paths', path, verb, 'responses', status, 'content', 'application/json', 'schema'),
            xml: { name: root },
          },
          ...(answer.examples
            ? {
                examples: examplesIn(doc, answer.examples, {
                  name: 'XML',
                  read: asXmlFields,
                  write: (value) => writeXml(value, root, declaration),
                }),
              }
            : {}),
        };
      }
    }
  }
  return doc;
}

/** A property's type in a form, where it is not a string (FormType), or undefined for a string. */
function formType(doc: Doc, property: DocNode): FormType | undefined {
  const s = deref(doc, property);
  const type = Array.isArray(s.type) ? s.type[0] : s.type;
  if (type === 'boolean' || type === 'integer' || type === 'number') return type;
  if (type === 'object') return typesOf(doc, [s]);
  return undefined;
}

function typesOf(doc: Doc, schemas: DocNode[]): FormTypes {
  const types: Record<string, FormType> = {};
  for (const schema of schemas)
    for (const [name, property] of Object.entries<DocNode>(deref(doc, schema).properties ?? {})) {
      const type = formType(doc, property);
      if (type !== undefined && !(name in types)) types[name] = type;
    }
  return types;
}

/**
 * The operation table's formTypes: the non-string fields of the request's forms and their types,
 * for an operation of a path that takes the form mode; null for any other.
 */
export function formTypes(doc: Doc, path: string, schemas: string[] | null): FormTypes | null {
  if (!doc['x-wire-formats'].form.paths.includes(path)) return null;
  return typesOf(
    doc,
    (schemas ?? []).map((name) => resolvePointer(doc, `#/components/schemas/${name}`)),
  );
}
