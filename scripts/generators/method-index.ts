// A method is one file. The shared paths (spec/paths/<group>.yaml, one operation chosen by the body's
// `method`) list their methods six times: x-methods, the request oneOf, the discriminator mapping, the
// request examples, the result anyOf and the result examples. Those lists are composed here from the
// method files in spec/methods/<group>/*.yaml when the document is read (compose.ts hands the composed
// text to Redocly's bundler and linter in place of the file's own), never written into the
// hand-written path file: a new method is one new file there (and its handler).
//
// The lists are composed into every content entry of the request and of the success response that
// the path file leaves without a schema (whatever its media type); an entry written with a schema (a
// zip, a CSV) is the path file's own. The order is the last release's (releases/), new entries at the
// end, so adding a method never reorders the published document.
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import YAML, { isMap, Scalar, YAMLMap, YAMLSeq } from 'yaml';
import type { DocNode } from '../lib/contract.ts';

interface MethodDescriptor {
  request: string;
  result?: string;
  resultType?: string;
  refusal?: string;
  examples: { request?: string[]; result?: string[]; refusal?: string[] };
}

interface MethodFile {
  /** Path from spec/methods, e.g. post/verifyCard.yaml. */
  file: string;
  method: string;
  keys: Set<string>;
  /** Top-level schemas of the file that are themselves a union of forms (oneOf/anyOf). */
  unions: Set<string>;
  examples: Set<string>;
  descriptor?: MethodDescriptor;
}

const STRINGIFY = { lineWidth: 0, flowCollectionPadding: false } as const;
const pointerName = (pointer: string): string => pointer.slice(pointer.lastIndexOf('/') + 1);

async function readMethodFiles(specDir: string): Promise<Map<string, MethodFile[]>> {
  const groups = new Map<string, MethodFile[]>();
  const methodsDir = path.join(specDir, 'methods');
  for (const group of (await readdir(methodsDir, { withFileTypes: true }))
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .sort()) {
    const files: MethodFile[] = [];
    for (const name of (await readdir(path.join(methodsDir, group))).filter((n) => n.endsWith('.yaml')).sort()) {
      const parsed = YAML.parse(await readFile(path.join(methodsDir, group, name), 'utf8')) ?? {};
      files.push({
        file: `${group}/${name}`,
        method: name.slice(0, -'.yaml'.length),
        keys: new Set(Object.keys(parsed).filter((k) => k !== 'x-method' && k !== 'examples')),
        unions: new Set(Object.keys(parsed).filter((k) => parsed[k]?.oneOf || parsed[k]?.anyOf)),
        examples: new Set(Object.keys(parsed.examples ?? {})),
        descriptor: parsed['x-method'],
      });
    }
    groups.set(group, files);
  }
  return groups;
}

/** Top-level names of the shared component files (results.yaml, refusals.yaml, ...) by file. */
async function readComponentNames(specDir: string): Promise<Map<string, string>> {
  const names = new Map<string, string>();
  const dir = path.join(specDir, 'components/schemas');
  for (const name of (await readdir(dir)).filter((n) => n.endsWith('.yaml')).sort()) {
    for (const key of Object.keys(YAML.parse(await readFile(path.join(dir, name), 'utf8')) ?? {}))
      if (!names.has(key)) names.set(key, name);
  }
  return names;
}

/** `wanted` in the order `existing` already lists them, then the new ones in `wanted`'s order. */
function keepOrder<T>(existing: string[], wanted: Map<string, T>): [string, T][] {
  const kept = existing.filter((k) => wanted.has(k));
  const added = [...wanted.keys()].filter((k) => !kept.includes(k));
  return [...kept, ...added].map((k) => [k, wanted.get(k)!]);
}

const quoted = (value: string): Scalar => Object.assign(new Scalar(value), { type: Scalar.QUOTE_SINGLE });
function refMap(ref: string, flow: boolean): YAMLMap {
  const map = new YAMLMap();
  map.flow = flow;
  map.add({ key: new Scalar('$ref'), value: quoted(ref) });
  return map;
}
function flowRefMap(entries: [string, string][]): YAMLMap {
  const map = new YAMLMap();
  for (const [key, ref] of entries) map.add({ key: new Scalar(key), value: refMap(ref, true) });
  return map;
}
function refSeq(refs: string[]): YAMLSeq {
  const seq = new YAMLSeq();
  for (const ref of refs) seq.add(refMap(ref, false));
  return seq;
}

/** The order the lists had in the last release, each list by its entries' names. */
export interface ListOrder {
  methods: string[];
  requestExamples: string[];
  results: string[];
  resultExamples: string[];
}
const NO_ORDER: ListOrder = { methods: [], requestExamples: [], results: [], resultExamples: [] };

const VERBS = ['get', 'put', 'post', 'delete', 'patch'];

/** The text of one shared path file with its lists composed from its group's method files. */
function writeLists(
  source: string,
  group: string,
  files: MethodFile[],
  all: MethodFile[],
  components: Map<string, string>,
  order: ListOrder,
  paired: boolean,
): string {
  const doc = YAML.parseDocument(source);
  const verb = VERBS.find((v) => doc.has(v));
  if (!verb) throw new Error(`spec/paths/${group}.yaml has no operation`);
  const op = [verb];
  const methodRef = (file: string, fragment: string) => `../methods/${file}#/${fragment}`;
  const holding = (name: string, own: MethodFile, pick: (f: MethodFile) => Set<string>, what: string): MethodFile => {
    const found = pick(own).has(name) ? own : all.find((f) => pick(f).has(name));
    if (!found) throw new Error(`spec/methods/${own.file}: ${what} ${name} is in no method file`);
    return found;
  };
  // An example the descriptor names and no file holds is left out of the maps: the lint rule
  // examples-per-outcome reports it where it is named, in the method's file.
  const example = (name: string, own: MethodFile, into: Map<string, string>) => {
    const found = own.examples.has(name) ? own : all.find((f) => f.examples.has(name));
    if (found) into.set(name, methodRef(found.file, `examples/${name}`));
  };

  const xMethods = new Map<string, string>();
  const branches = new Map<string, string>();
  const requestExamples = new Map<string, string>();
  const results = new Map<string, string>();
  const refusals = new Map<string, string>();
  const resultExamples = new Map<string, string>();
  // Tools follow a discriminator only to object schemas (Specmatic's R3002 stops at a mapped union).
  let everyBranchAnObject = true;
  // Request examples paired by name with an answer (Specmatic pairs them so; it ignores the unpaired).
  const pairs = new Map<string, string>();
  for (const f of files) {
    const d = f.descriptor;
    if (!d?.request) throw new Error(`spec/methods/${f.file} has no x-method with a request`);
    xMethods.set(f.method, methodRef(f.file, 'x-method'));
    const request = pointerName(d.request);
    const branchFile = holding(request, f, (m) => m.keys, 'request schema');
    branches.set(f.method, methodRef(branchFile.file, request));
    if (branchFile.unions.has(request)) everyBranchAnObject = false;
    for (const name of d.examples.request ?? []) example(name, f, requestExamples);
    // A result of its own media type (a zip, a CSV) is answered under that type's entry, written by hand.
    const listed = !d.resultType;
    for (const [pointer, into] of [
      [listed ? d.result : undefined, results],
      [d.refusal, refusals],
    ] as const) {
      if (!pointer) continue;
      const name = pointerName(pointer);
      // A result of the method's own lives in its file; a shared one in spec/components/schemas/.
      const own = all.find((m) => m.keys.has(name));
      const file = components.get(name);
      if (!own && !file)
        throw new Error(
          `spec/methods/${f.file}: ${pointer} is in no method file and no file of spec/components/schemas`,
        );
      into.set(name, own ? methodRef(own.file, name) : `../components/schemas/${file}#/${name}`);
    }
    for (const name of listed ? (d.examples.result ?? []) : []) example(name, f, resultExamples);
    for (const name of d.examples.refusal ?? []) example(name, f, resultExamples);
    const answer = [...(listed ? (d.examples.result ?? []) : []), ...(d.examples.refusal ?? [])].find((n) =>
      resultExamples.has(n),
    );
    // Only the first: Specmatic 2.55 refuses a second request example paired with the same answer.
    const first = d.examples.request?.[0];
    if (answer && first) pairs.set(first, resultExamples.get(answer)!);
  }
  // Each request example's answer, under the request's own name, after the answers themselves.
  if (paired) for (const [name, ref] of pairs) if (!resultExamples.has(name)) resultExamples.set(name, ref);

  const branchOrder = keepOrder(order.methods, branches);
  const anyOf = [...keepOrder(order.results, results), ...keepOrder(order.results, refusals)].map(([, ref]) => ref);
  // A path file that lists its methods itself (as releases before 0.3 did) keeps its lists.
  if (!doc.hasIn([...op, 'x-methods'])) doc.setIn([...op, 'x-methods'], flowRefMap(keepOrder(order.methods, xMethods)));
  const composeInto = (content: unknown, schema: () => YAMLMap, examples: Map<string, string>, names: string[]) => {
    if (!isMap(content)) return;
    for (const pair of content.items) {
      const entry = pair.value;
      if (!isMap(entry) || entry.has('schema')) continue;
      entry.set('schema', schema());
      if (!entry.has('examples')) entry.set('examples', flowRefMap(keepOrder(names, examples)));
    }
  };
  composeInto(
    doc.getIn([...op, 'requestBody', 'content']),
    () => {
      const mapping = new YAMLMap();
      for (const [method, ref] of branchOrder) mapping.add({ key: new Scalar(method), value: quoted(ref) });
      const discriminator = new YAMLMap();
      discriminator.set('propertyName', 'method');
      discriminator.set('mapping', mapping);
      const schema = new YAMLMap();
      // A path of one method is that method's request: a oneOf of one branch is no choice (Redocly's
      // no-illogical-composition-keywords), and a discriminator with nothing to tell apart says nothing.
      if (branchOrder.length === 1) {
        schema.set('$ref', quoted(branchOrder[0]![1]));
        return schema;
      }
      schema.set('oneOf', refSeq(branchOrder.map(([, ref]) => ref)));
      // Where a method takes several forms (a union), its `const` in each form tells the methods apart.
      if (everyBranchAnObject) schema.set('discriminator', discriminator);
      return schema;
    },
    requestExamples,
    order.requestExamples,
  );
  const responses = doc.getIn([...op, 'responses']);
  const success = isMap(responses)
    ? responses.items.find((p) => String((p.key as Scalar).value).startsWith('2'))?.value
    : undefined;
  composeInto(
    isMap(success) ? success.get('content') : undefined,
    () => {
      const schema = new YAMLMap();
      schema.set('anyOf', refSeq(anyOf));
      return schema;
    },
    resultExamples,
    order.resultExamples,
  );
  return doc.toString(STRINGIFY);
}

/** The lists' order in a bundled document (the last release's), for the shared path `/group`. */
export function orderIn(released: DocNode | undefined, group: string): ListOrder {
  const item = released?.paths?.[`/${group}`];
  const op = item && VERBS.map((v) => item[v]).find((o) => o?.['x-methods']);
  if (!op) return NO_ORDER;
  const names = (o: DocNode | undefined) => Object.keys(o ?? {});
  const entries = (content: DocNode | undefined) => Object.values<DocNode>(content ?? {});
  const success = Object.entries<DocNode>(op.responses ?? {}).find(([code]) => code.startsWith('2'))?.[1];
  return {
    methods: names(op['x-methods']),
    requestExamples: entries(op.requestBody?.content).flatMap((e) => names(e.examples)),
    results: entries(success?.content).flatMap((e) => (e.schema?.anyOf ?? []).map((r: DocNode) => pointerName(r.$ref))),
    resultExamples: entries(success?.content).flatMap((e) => names(e.examples)),
  };
}

/**
 * Every shared path file's composed text: spec/paths/<group>.yaml for every folder spec/methods/<group>/,
 * keyed by path from specDir, its lists in the order `released` (the last release's document) gives.
 */
export async function methodIndex(specDir: string, released?: DocNode, paired = false): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  if (!existsSync(path.join(specDir, 'methods'))) return out;
  const groups = await readMethodFiles(specDir);
  const all = [...groups.values()].flat();
  const components = await readComponentNames(specDir);
  for (const [group, files] of groups) {
    const file = `paths/${group}.yaml`;
    const source = await readFile(path.join(specDir, file), 'utf8');
    out.set(file, writeLists(source, group, files, all, components, orderIn(released, group), paired));
  }
  return out;
}
