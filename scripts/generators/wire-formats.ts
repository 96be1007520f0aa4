// The form/XML mode in the bundled document (x-wire-formats.form, spec/openapi.yaml): every
// operation of its paths gets an application/x-www-form-urlencoded request body and an
// application/xml answer, each a $ref to the JSON mode's own schema (the answer's with the `xml`
// object naming the root), so no schema is written twice. Their examples are the JSON examples
// written in that mode, by the same codec the server runs (runtime/wire.ts).
import { deref } from '../../runtime/document.ts';
import { resolvePointer, type Doc, type DocNode } from '../lib/contract.ts';
import { writeForm, writeXml, type FormType, type FormTypes } from '../../runtime/wire.ts';

const pointerTo = (...keys: string[]) => `#/${keys.map((k) => k.replace(/~/g, '~0').replace(/\//g, '~1')).join('/')}`;

/** The examples of a media type, written in the other mode by `write`. */
function examplesIn(doc: Doc, examples: DocNode | undefined, write: (value: any) => string): DocNode | undefined {
  if (!examples) return undefined;
  return Object.fromEntries(
    Object.entries<DocNode>(examples).map(([name, ref]) => {
      const example = deref(doc, ref);
      return [name, { ...(example.summary ? { summary: example.summary } : {}), value: write(example.value) }];
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
        ...(json.examples ? { examples: examplesIn(doc, json.examples, writeForm) } : {}),
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
            ? { examples: examplesIn(doc, answer.examples, (value) => writeXml(value, root, declaration)) }
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
