// The wire formats in the bundled document (x-wire-formats, spec/openapi.yaml; docs/WIRE-FORMATS.md).
// First what each protocol cannot carry (its limits, runtime/protocols/): a schema of an operation it
// serves that breaks one stops the bundle, naming the method's file and the fix. Then every operation
// of an added protocol's paths (the form/XML mode's) gets that protocol's request and answer content
// entries, each the spec's own schema node: $refs to components (the protocol adds what it needs
// beside them: the XML root's name, the form's encoding of object fields), so no schema is written
// twice, only the list of $refs a shared path answers with. Their examples are values those schemas
// describe, as OpenAPI 3.1 gives a non-JSON example: the spec's own example as the protocol's reader
// finds it once its writer (the code the server runs) has written it, and the spec's own example
// itself (the same $ref) where that reads back unchanged.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { deref } from '../../runtime/document.ts';
import { limitProblems, type SchemaWalker } from '../../runtime/protocols/limits.ts';
import type { Protocol } from '../../runtime/protocols/protocol.ts';
import { contractOperations, resolvePointer, type Doc, type DocNode } from '../lib/contract.ts';
import { addedDeclarations, ownMediaType, protocolsOf } from '../lib/protocols.ts';
import { shapeOf } from './shapes.ts';

const escapeKey = (k: string | number) => String(k).replace(/~/g, '~0').replace(/\//g, '~1');
/**
 * The spec's own schema as an added media type names it: the same node (its $ref to a component, or
 * the list of component $refs a shared path answers with), not a $ref to where it stands under
 * #/paths. openapi-typescript writes such a $ref as paths[…]["content"]["application/json"]["schema"],
 * which its own types do not have (5 tsc errors on the published file, one per shared path's answer).
 * A schema that names itself ($id, $anchor) cannot be written twice: the spec must put it in the
 * components and $ref it.
 */
export function sameSchema(schema: DocNode, where: string): DocNode {
  const named = selfNaming(schema);
  if (named)
    throw new SpecProblem(`${where}: a schema with ${named} written in place; make it a component and $ref it`);
  return structuredClone(schema);
}

const NAMING = ['$id', '$anchor', '$dynamicAnchor'];
/** Keywords whose members are named by their keys, each member a schema. */
const NAME_MAPS = new Set([
  'properties',
  'patternProperties',
  '$defs',
  'definitions',
  'dependentSchemas',
  'dependentRequired',
  'dependencies',
]);
/** Keywords whose values are data, not schemas: an example may hold any key, a mapping any value. */
const DATA = new Set(['example', 'examples', 'default', 'const', 'enum', 'discriminator', 'xml', 'externalDocs']);

/**
 * The naming keyword a schema or any of its subschemas holds, read as JSON Schema reads it: a property
 * called `$id`, or an example holding one, names nothing.
 */
function selfNaming(schema: unknown): string | undefined {
  if (!schema || typeof schema !== 'object') return undefined;
  if (Array.isArray(schema)) return schema.map(selfNaming).find(Boolean);
  const own = NAMING.find((k) => k in schema);
  if (own) return own;
  for (const [key, value] of Object.entries(schema)) {
    if (DATA.has(key) || key.startsWith('x-')) continue;
    const found =
      NAME_MAPS.has(key) && value && typeof value === 'object'
        ? Object.values(value).map(selfNaming).find(Boolean)
        : selfNaming(value);
    if (found) return found;
  }
  return undefined;
}

/** The bundled document walked by pointer, for the limits' walk. */
const walkerOf = (doc: Doc): SchemaWalker<string> => ({
  resolve(node, at) {
    let here = { node: node as any, at };
    for (let i = 0; here.node && typeof here.node.$ref === 'string' && i < 20; i++)
      here = { node: resolvePointer(doc, here.node.$ref), at: here.node.$ref };
    return here;
  },
  child: (at, key) => `${at}/${escapeKey(key)}`,
  key: (at) => at,
});

/** The hand-written file an operation's schemas are in: its method file, or its path's. */
function sourceFile(root: string | undefined, op: { path: string; method?: string }): string {
  if (op.method) {
    const file = `spec/methods${op.path}/${op.method}.yaml`;
    if (!root || existsSync(path.join(root, file))) return file;
  }
  return `spec/openapi.yaml (paths: ${op.path})`;
}

/** Where a pointer of the bundled document is, in words: ListRefundsResult.refunds. */
const place = (pointer: string) =>
  pointer
    .replace(/^#\/components\/schemas\//, '')
    .replace(/\/properties\//g, '.')
    .replace(/\/(oneOf|anyOf|allOf)\/\d+/g, '')
    .replace(/\/items/g, '[]')
    .replace(/~1/g, '/')
    .replace(/~0/g, '~');

/**
 * What the spec's protocols cannot carry, one line each (`file: where (protocol): problem. Fix: …`):
 * every request and answer schema of every operation, held to the limits of each protocol that serves it.
 */
export function carryProblems(doc: Doc, protocols: readonly Protocol[], root?: string): string[] {
  const walker = walkerOf(doc);
  const own = ownMediaType(doc);
  const lines = new Set<string>();
  for (const op of contractOperations(doc).filter((o) => !o.webhook)) {
    for (const protocol of protocols.filter((p) => p.paths === null || p.paths.includes(op.path))) {
      const sides: ['request' | 'answer', string | undefined][] = [
        ['request', op.request],
        // A file answer (a zip, a CSV) is the same bytes in every protocol.
        ['answer', op.resultType && op.resultType !== own ? undefined : op.result],
        ['answer', op.refusal],
      ];
      for (const [side, schema] of sides) {
        if (!schema) continue;
        for (const p of limitProblems(protocol.limits, side, { $ref: schema }, schema, walker))
          lines.add(`${sourceFile(root, op)}: ${place(p.at)} (${protocol.label}): ${p.message}. Fix: ${p.fix}.`);
      }
    }
  }
  return [...lines];
}

/** A problem of the spec itself, told to its author in words (a command prints the message, no stack). */
export class SpecProblem extends Error {}

/** The request's fields that are objects or lists: each written with brackets in a form (deepObject). */
function nestedFields(doc: Doc, schema: DocNode): string[] {
  const names = new Set<string>();
  const visit = (node: DocNode) => {
    const s = deref(doc, node);
    for (const branch of [...(s.oneOf ?? []), ...(s.anyOf ?? []), ...(s.allOf ?? [])]) visit(branch);
    for (const [name, property] of Object.entries<DocNode>(s.properties ?? {})) {
      const type = deref(doc, property)?.type;
      if (type === 'object' || type === 'array') names.add(name);
    }
  };
  visit(schema);
  return [...names].sort();
}

/**
 * The examples of an added protocol's media type: each the spec's own example where the protocol
 * reads it back unchanged once written (its $ref), else the value the protocol's reader finds.
 * `readBack` is given the example's name: its operation's schema types what is read back.
 */
function examplesIn(
  doc: Doc,
  examples: DocNode | undefined,
  readBack: (value: any, name: string) => unknown,
): DocNode | undefined {
  if (!examples) return undefined;
  return Object.fromEntries(
    Object.entries<DocNode>(examples).map(([name, ref]) => {
      const example = deref(doc, ref);
      // An answer may be listed under the name of the request it answers (x-example-pairs): its own name is its $ref's.
      const own = typeof ref.$ref === 'string' ? ref.$ref.split('/').pop()! : name;
      const value = readBack(example.value, own);
      if (isDeepStrictEqual(value, example.value)) return [name, structuredClone(ref)];
      return [name, { ...(example.summary ? { summary: example.summary } : {}), value }];
    }),
  );
}

/**
 * The bundled document held to its protocols' limits (a problem throws, one line each), with every
 * added protocol's media types on the operations of its paths. `root`: where the spec's files are,
 * for the problems' file names.
 */
export function withWireFormats(doc: Doc, root?: string): Doc {
  // A spec from before the modes (an older release, bundled by the diff) has no x-wire-formats.
  if (!doc['x-wire-formats']) return doc;
  const protocols = protocolsOf(doc);
  const declaredOwn = ownMediaType(doc);
  const problems = carryProblems(doc, protocols.all, root);
  if (problems.length)
    throw new SpecProblem(
      `The spec holds what its wire formats cannot carry (x-wire-formats; runtime/protocols/):\n${problems.join('\n')}`,
    );
  // Each example's own schema, by the example's name (a shared path's examples are of several
  // operations, and a field may be typed otherwise in each: responseCode an integer on /partner).
  const schemaOf = new Map<string, string>();
  for (const op of contractOperations(doc))
    for (const [names, schema] of [
      [op.examples.request, op.request],
      [op.examples.result ?? [], op.result],
      [op.examples.refusal ?? [], op.refusal],
    ] as const)
      for (const name of names) if (schema) schemaOf.set(name, schema);
  const shapeFor = (name: string, fallback: DocNode) => {
    const schema = schemaOf.get(name);
    return shapeOf(doc, schema ? { $ref: schema } : fallback);
  };
  for (const [id, declaration] of addedDeclarations(doc)) {
    const protocol = protocols.byId(id)!;
    for (const p of declaration.paths ?? Object.keys(doc.paths)) {
      const item = doc.paths[p];
      if (!item) throw new Error(`x-wire-formats.${id}.paths: ${p} is not a path of the contract`);
      for (const [verb, op] of Object.entries<DocNode>(item)) {
        // The spec's own media type: its first wire format's, or (a spec from before it was declared) the first its files write.
        const ownType = declaredOwn ?? Object.keys(op?.requestBody?.content ?? {})[0];
        const own = ownType === undefined ? undefined : op?.requestBody?.content?.[ownType];
        if (!own) continue;
        op.requestBody.content[protocol.requestType] = {
          ...protocol.describeRequest!(
            sameSchema(own.schema, `${verb.toUpperCase()} ${p} request`),
            nestedFields(doc, own.schema),
          ),
          ...(own.examples
            ? {
                examples: examplesIn(doc, own.examples, (value, name) => {
                  const read = protocol.read(protocol.writeRequest(value));
                  if (!('ok' in read))
                    throw new SpecProblem(`the example ${name} cannot be read back in ${protocol.label}`);
                  return protocol.typed(read.ok, shapeFor(name, own.schema));
                }),
              }
            : {}),
        };
        for (const [status, response] of Object.entries<DocNode>(op.responses ?? {})) {
          const answer = deref(doc, response).content?.[ownType!];
          // Shared error responses (components) stay described in the spec's own; the 2xx answer carries the mode.
          if (!answer || response.$ref || !status.startsWith('2')) continue;
          response.content[protocol.answerType] = {
            ...protocol.describeAnswer!(sameSchema(answer.schema, `${verb.toUpperCase()} ${p} ${status} answer`)),
            ...(answer.examples
              ? {
                  examples: examplesIn(doc, answer.examples, (value, name) => {
                    const shape = shapeFor(name, answer.schema);
                    const read = protocol.readAnswer(protocol.writeAnswer(value, shape), shape);
                    if (!('ok' in read))
                      throw new SpecProblem(`the example ${name} reads back in ${protocol.label} as: ${read.error}`);
                    return read.ok;
                  }),
                }
              : {}),
          };
        }
      }
    }
  }
  return doc;
}
