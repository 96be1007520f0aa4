// The form/XML mode's examples in the document as shipped (scripts/generators/wire-formats.ts): values
// their schemas describe (the bundle's lint checks that), and true to the wire. A form example is its
// JSON example as a server of the form mode reads it from the form the example's fields make; an XML
// example is what a reader finds in the answer the server writes for the JSON example (each field's
// text, typed by the schema).
import { XMLParser } from 'fast-xml-parser';
import { describe, expect, it } from 'vitest';
import { deref } from '../../runtime/document.ts';
import { asReadFromForm, readForm, typedForm, writeForm, writeXml } from '../../runtime/wire.ts';
import { formWire, operations as table } from '../../generated/operations.ts';
import { exampleValue } from '../../scripts/lib/contract.ts';
import { doc, operations } from '../support/contract.ts';

const form = doc['x-wire-formats'].form;
const xml = new XMLParser({ parseTagValue: false, trimValues: false });

/** The examples of one media type of an operation's body or answer, by name, their values resolved. */
const examplesOf = (content: any): Record<string, unknown> =>
  Object.fromEntries(Object.entries<any>(content?.examples ?? {}).map(([name, ref]) => [name, deref(doc, ref).value]));

describe('the form/XML examples of the document as shipped', () => {
  for (const path of form.paths) {
    const op = doc.paths[path].post;
    const forms = examplesOf(op.requestBody.content[form.request]);
    const answers = examplesOf(op.responses['200'].content[form.answer]);
    // An answer example may be named for the request it answers (x-example-pairs): its JSON twin is by key.
    const jsonAnswers = examplesOf(op.responses['200'].content['application/json']);

    it(`${path}: every JSON example has its form or XML example, under the same name`, () => {
      expect(Object.keys(forms)).toEqual(Object.keys(op.requestBody.content['application/json'].examples));
      expect(Object.keys(answers)).toEqual(Object.keys(op.responses['200'].content['application/json'].examples));
    });

    it(`${path}: a form example is its JSON example as the form's server reads it, and reads back from its own form`, () => {
      for (const [name, value] of Object.entries(forms)) {
        const described = operations.find((o) => o.path === path && o.examples.request.includes(name));
        const types = table.find((t) => t.operationId === described?.operationId)?.formTypes ?? {};
        expect(value, name).toEqual(asReadFromForm(exampleValue(doc, name) as Record<string, unknown>, types));
        const read = readForm(writeForm(value as Record<string, unknown>));
        expect('ok' in read && typedForm(read.ok, types), name).toEqual(value);
      }
    });

    it(`${path}: an XML example is what a reader finds in the XML the server writes for the JSON example`, () => {
      for (const [name, value] of Object.entries(answers)) {
        const text = writeXml(jsonAnswers[name] as Record<string, unknown>, formWire.root, formWire.declaration);
        // XML is text: a number or a flag of the schema's is read as its text, then typed by the schema.
        const asText = Object.fromEntries(Object.entries(value as object).map(([k, v]) => [k, String(v)]));
        expect(xml.parse(text)[form.xml.name], name).toEqual(asText);
      }
    });
  }
});
