// A method is one file. The shared paths (spec/paths/<group>.yaml, one operation chosen by the body's
// `method`) list their methods six times: x-methods, the request oneOf, the discriminator mapping, the
// request examples, the result anyOf and the result examples. Those lists are written here from the
// method files in spec/methods/<group>/*.yaml, so a new method is one new file there (and its handler).
//
// The lists are written into the path files themselves (not only into the bundle) so that
// spec/openapi.yaml stays a complete document that `redocly lint` and every editor read as it is.
// Everything else in a path file (its descriptions, parameters, non-JSON answers, comments) is
// hand-written and kept byte for byte. An entry already listed keeps its place; a new one is added at
// the end of its list, so adding a method never reorders the published document.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import YAML, { isMap, isSeq, Scalar, YAMLMap, YAMLSeq } from 'yaml';

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

const mapKeys = (node: unknown): string[] =>
  isMap(node) ? node.items.map((p) => String((p.key as Scalar).value)) : [];
const seqRefs = (node: unknown): string[] =>
  isSeq(node) ? node.items.map((i) => String((i as YAMLMap).get('$ref'))) : [];

/** The expected text of one shared path file, its lists written from its group's method files. */
function writeLists(
  source: string,
  group: string,
  files: MethodFile[],
  all: MethodFile[],
  components: Map<string, string>,
): string {
  const doc = YAML.parseDocument(source);
  const op = ['post'];
  const body = [...op, 'requestBody', 'content', 'application/json'];
  const ok = [...op, 'responses', '200', 'content', 'application/json'];
  const methodRef = (file: string, fragment: string) => `../methods/${file}#/${fragment}`;
  const holding = (name: string, own: MethodFile, pick: (f: MethodFile) => Set<string>, what: string): MethodFile => {
    const found = pick(own).has(name) ? own : all.find((f) => pick(f).has(name));
    if (!found) throw new Error(`spec/methods/${own.file}: ${what} ${name} is in no method file`);
    return found;
  };

  const xMethods = new Map<string, string>();
  const branches = new Map<string, string>();
  const requestExamples = new Map<string, string>();
  const results = new Map<string, string>();
  const refusals = new Map<string, string>();
  const resultExamples = new Map<string, string>();
  for (const f of files) {
    const d = f.descriptor;
    if (!d?.request) throw new Error(`spec/methods/${f.file} has no x-method with a request`);
    xMethods.set(f.method, methodRef(f.file, 'x-method'));
    const request = pointerName(d.request);
    branches.set(f.method, methodRef(holding(request, f, (m) => m.keys, 'request schema').file, request));
    for (const name of d.examples.request ?? [])
      requestExamples.set(name, methodRef(holding(name, f, (m) => m.examples, 'example').file, `examples/${name}`));
    // A result that is not JSON (a zip, a CSV) is answered under its own media type, written by hand.
    const json = !d.resultType;
    for (const [pointer, into] of [
      [json ? d.result : undefined, results],
      [d.refusal, refusals],
    ] as const) {
      if (!pointer) continue;
      const name = pointerName(pointer);
      const file = components.get(name);
      if (!file) throw new Error(`spec/methods/${f.file}: ${pointer} is in no file of spec/components/schemas`);
      into.set(`../components/schemas/${file}#/${name}`, '');
    }
    for (const name of json ? (d.examples.result ?? []) : [])
      resultExamples.set(name, methodRef(holding(name, f, (m) => m.examples, 'example').file, `examples/${name}`));
    for (const name of d.examples.refusal ?? [])
      resultExamples.set(name, methodRef(holding(name, f, (m) => m.examples, 'example').file, `examples/${name}`));
  }

  const existingAnyOf = seqRefs(doc.getIn([...ok, 'schema', 'anyOf']));
  const branchOrder = keepOrder(mapKeys(doc.getIn([...op, 'x-methods'])), branches);
  const anyOf = [...keepOrder(existingAnyOf, results), ...keepOrder(existingAnyOf, refusals)].map(([ref]) => ref);
  doc.setIn([...op, 'x-methods'], flowRefMap(keepOrder(mapKeys(doc.getIn([...op, 'x-methods'])), xMethods)));
  doc.setIn([...body, 'schema', 'oneOf'], refSeq(branchOrder.map(([, ref]) => ref)));
  const mapping = new YAMLMap();
  for (const [method, ref] of branchOrder) mapping.add({ key: new Scalar(method), value: quoted(ref) });
  doc.setIn([...body, 'schema', 'discriminator', 'mapping'], mapping);
  doc.setIn([...body, 'examples'], flowRefMap(keepOrder(mapKeys(doc.getIn([...body, 'examples'])), requestExamples)));
  doc.setIn([...ok, 'schema', 'anyOf'], refSeq(anyOf));
  doc.setIn([...ok, 'examples'], flowRefMap(keepOrder(mapKeys(doc.getIn([...ok, 'examples'])), resultExamples)));
  if (!doc.getIn(op)) throw new Error(`spec/paths/${group}.yaml has no post operation`);
  return doc.toString(STRINGIFY);
}

/**
 * The shared path files as they should read: spec/paths/<group>.yaml for every folder
 * spec/methods/<group>/, its method lists written from the folder's files. Keyed by path from specDir.
 */
export async function methodIndex(specDir: string): Promise<Map<string, string>> {
  const groups = await readMethodFiles(specDir);
  const all = [...groups.values()].flat();
  const components = await readComponentNames(specDir);
  const out = new Map<string, string>();
  for (const [group, files] of groups) {
    const file = `paths/${group}.yaml`;
    out.set(file, writeLists(await readFile(path.join(specDir, file), 'utf8'), group, files, all, components));
  }
  return out;
}
