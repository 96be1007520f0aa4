// The examples of each protocol added beside the spec's own (the form/XML mode's) in the document as
// shipped (scripts/generators/wire-formats.ts): values their schemas describe (the bundle's lint
// checks that), and true to the wire. A request example is its JSON example as a server of the mode
// reads it from what the mode's writer makes of the example; an answer example is what a reader finds
// in the answer the server writes for the JSON example (each field's text, typed by the schema), and
// an independent XML parser finds the same text in it.
import { XMLParser } from 'fast-xml-parser';
import { describe, expect, it } from 'vitest';
import { protocols } from '../../generated/protocols.ts';
import { operations as table } from '../../generated/operations.ts';
import { deref } from '../../runtime/document.ts';
import { exampleValue } from '../../scripts/lib/contract.ts';
import { SpecProblem, sameSchema } from '../../scripts/generators/wire-formats.ts';
import { doc, operations } from '../support/contract.ts';

const own = protocols.canonical;
const xml = new XMLParser({ parseTagValue: false, trimValues: false });

/** The examples of one media type of an operation's body or answer, by name, their values resolved. */
const examplesOf = (content: any): Record<string, unknown> =>
  Object.fromEntries(Object.entries<any>(content?.examples ?? {}).map(([name, ref]) => [name, deref(doc, ref).value]));

for (const protocol of protocols.all.filter((p) => p !== own)) {
  describe(`the ${protocol.label} examples of the document as shipped`, () => {
    for (const path of protocol.paths ?? Object.keys(doc.paths)) {
      const op = doc.paths[path].post;
      const requests = examplesOf(op.requestBody.content[protocol.requestType]);
      const answers = examplesOf(op.responses['200'].content[protocol.answerType]);
      // An answer example may be named for the request it answers (x-example-pairs): its JSON twin is by key.
      const ownAnswers = examplesOf(op.responses['200'].content[own.answerType]);
      // An answer may be listed under the name of the request it answers (x-example-pairs): its own name is its $ref's.
      const ownName = (content: any, key: string): string => content.examples[key].$ref?.split('/').pop() ?? key;
      const shapesOf = (example: string) => {
        const described = operations.find(
          (o) =>
            o.path === path &&
            [...o.examples.request, ...(o.examples.result ?? []), ...(o.examples.refusal ?? [])].includes(example),
        );
        return table.find((t) => t.operationId === described?.operationId)?.shapes;
      };

      it(`${path}: every JSON example has its example in the mode, under the same name`, () => {
        expect(Object.keys(requests)).toEqual(Object.keys(op.requestBody.content[own.requestType].examples));
        expect(Object.keys(answers)).toEqual(Object.keys(op.responses['200'].content[own.answerType].examples));
      });

      it(`${path}: a request example is its JSON example as the mode's server reads it, and reads back from itself`, () => {
        for (const [name, value] of Object.entries(requests)) {
          const shape = shapesOf(name)?.request ?? null;
          const readBack = (body: unknown) => {
            const read = protocol.read(protocol.writeRequest(body as Record<string, unknown>));
            return 'ok' in read ? protocol.typed(read.ok, shape) : read;
          };
          expect(value, name).toEqual(readBack(exampleValue(doc, name)));
          expect(readBack(value), name).toEqual(value);
        }
      });

      it(`${path}: an answer example is what a reader finds in the answer the server writes for the JSON example`, () => {
        for (const [name, value] of Object.entries(answers)) {
          const written = protocol.writeAnswer(ownAnswers[name] as Record<string, unknown>);
          const shapes = shapesOf(ownName(op.responses['200'].content[own.answerType], name));
          const refused = Number((ownAnswers[name] as { responseCode: unknown }).responseCode) < 0;
          expect(protocol.readAnswer(written, refused ? shapes?.refusal : shapes?.result), name).toEqual({ ok: value });
          // Read by an independent parser, each field's text: a number or a flag as its text, an empty list as nothing.
          const root = (doc['x-wire-formats'][protocol.id] as { xml?: { name: string } }).xml?.name;
          if (!root) continue;
          const asText = Object.fromEntries(
            Object.entries(value as object).map(([k, v]) => [k, Array.isArray(v) ? '' : String(v)]),
          );
          expect(xml.parse(written)[root], name).toEqual(asText);
        }
      });
    }
  });
}

describe("an added media type's schema: the spec's own node, copied", () => {
  it('copies a schema with a property named $id or an example holding one; refuses one that names itself', () => {
    const named = {
      type: 'object',
      properties: { $id: { type: 'string' }, $anchor: { type: 'string' } },
      examples: [{ $id: 'x' }],
      dependentRequired: { $id: ['$anchor'] },
      discriminator: { propertyName: 'kind', mapping: { $id: '#/components/schemas/X' } },
      'x-note': { $id: 'not a schema' },
    };
    const copy = sameSchema(named, 'a request');
    expect(copy).toEqual(named);
    expect(copy).not.toBe(named);
    expect(() => sameSchema({ $id: 'https://example.com/s', type: 'string' }, 'the answer')).toThrow(SpecProblem);
    expect(() =>
      sameSchema({ type: 'object', properties: { a: { oneOf: [{ $anchor: 'a' }] } } }, 'the answer'),
    ).toThrow('the answer: a schema with $anchor written in place');
    expect(() => sameSchema({ items: { $dynamicAnchor: 'node' } }, 'x')).toThrow(/\$dynamicAnchor/);
  });
});
