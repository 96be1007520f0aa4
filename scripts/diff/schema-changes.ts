// Schema-level changes, found by Redocly's `diff` (it walks OpenAPI 3.1 and follows the shared
// paths' discriminator mapping to each method's branch) and judged here for both sides of the wire.
// Redocly rates a change once, at the first place its component is used, and for consumers only;
// a component used in requests and in results (an id, an amount) needs both readings, and a server
// team needs its own verdict, so each change is read again as narrowing or widening the values a
// schema allows, on every side it travels (usage.ts). Changes Redocly does not see (the contract's
// x- extensions, credentials) and operations added or removed are contract-changes.ts's job. A shared
// path is compared method by method (per-method.ts).
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { withExactRequests } from '../generators/tolerant-requests.ts';
import { cachedBuild } from '../lib/build-cache.ts';
import type { Doc } from '../lib/contract.ts';
import { verdict, type Bump, type Change } from './change.ts';
import { ROOT } from './load.ts';
import { perMethod } from './per-method.ts';
import { locate, schemaUsage, type Side, type Usage } from './usage.ts';

const run = promisify(execFile);

interface RedoclyChange {
  path: string;
  kind: 'added' | 'removed' | 'modified';
  impact: Bump;
  property?: string;
  verdicts: { ruleId: string; impact: Bump; message: string }[];
  base?: { pointer: string; value?: unknown };
  revision?: { pointer: string; value?: unknown };
}

/** Runs `redocly diff` (the project's @redocly/cli, rules `diff-recommended`) on two bundled documents, once per pair (scripts/lib/build-cache.ts). */
export async function redoclyDiff(base: Doc, revision: Doc): Promise<RedoclyChange[]> {
  const documents = { 'base.json': JSON.stringify(base), 'revision.json': JSON.stringify(revision) };
  const config = 'extends:\n  - diff-recommended\n';
  const command = (output: string) => [
    'diff',
    'base.json',
    'revision.json',
    '--config',
    'redocly.yaml',
    '--format',
    'json',
    '-o',
    output,
    '--fail-on',
    'none',
  ];
  const env = { REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' };
  // The command and its environment are part of the key: a changed option diffs anew.
  const how = JSON.stringify({ command: command('<output>'), env });
  const report = await cachedBuild(
    ROOT,
    'redocly-diff',
    [documents['base.json'], documents['revision.json'], config, how],
    async (file) => {
      const dir = await mkdtemp(path.join(os.tmpdir(), 'pgw-redocly-diff-'));
      try {
        for (const [name, text] of Object.entries(documents)) await writeFile(path.join(dir, name), text);
        await writeFile(path.join(dir, 'redocly.yaml'), config);
        const cli = path.join(ROOT, 'node_modules/@redocly/cli/bin/cli.js');
        await run(process.execPath, [cli, ...command(file)], {
          cwd: dir,
          env: { ...process.env, ...env },
          maxBuffer: 64 << 20,
        });
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
  );
  return JSON.parse(report.toString('utf8')).changes;
}

type Effect = 'narrow' | 'widen' | 'both' | 'none';

const UPPER = new Set(['maxLength', 'maxItems', 'maximum', 'exclusiveMaximum', 'maxProperties']);
const LOWER = new Set(['minLength', 'minItems', 'minimum', 'exclusiveMinimum', 'minProperties']);
const EXACT = new Set([
  'pattern',
  'format',
  'const',
  'multipleOf',
  'contentMediaType',
  'contentEncoding',
  'propertyNames',
  'items',
  'prefixItems',
  'not',
  'if',
  'then',
  'else',
]);
const PROSE = new Set([
  'description',
  'summary',
  'title',
  'example',
  'examples',
  'externalDocs',
  'deprecated',
  '$comment',
  'discriminator',
]);

const types = (v: unknown): Set<string> =>
  new Set(v === undefined ? ['any'] : Array.isArray(v) ? (v as string[]) : [String(v)]);
const subset = (a: Set<unknown>, b: Set<unknown>) => [...a].every((x) => b.has(x));

/** What a change does to the set of values a schema allows. */
function effectOf(c: RedoclyChange): { effect: Effect; what: string } {
  const pointer = (c.revision ?? c.base)!.pointer;
  // A component added or removed as a whole changes nothing by itself: its uses are the changes.
  if (/^#\/components\/[^/]+\/[^/]+$/.test(pointer) && c.kind !== 'modified')
    return { effect: 'none', what: 'documentation' };
  // Extensions: x-csv-columns is a file's format (its columns); the others say nothing on the wire
  // that the contract checks (x-methods and x-hash-recipes are read in contract-changes.ts).
  if (pointer.includes('/x-csv-columns')) return { effect: 'both', what: 'file-columns-changed' };
  // Examples, named or renamed, say nothing a client or server must do.
  if (/\/examples(\/|$)/.test(pointer)) return { effect: 'none', what: 'documentation' };
  if (/\/x-[^/]*(\/|$)/.test(pointer)) return { effect: 'none', what: 'documentation' };
  const last = pointer.split('/').pop()!;
  const parent = pointer.split('/').slice(-2, -1)[0];
  const before = c.base?.value;
  const after = c.revision?.value;
  const property = c.property ?? last;
  if (c.kind !== 'modified') {
    const verb = c.kind === 'added' ? 'added' : 'removed';
    if (parent === 'properties') return { effect: c.kind === 'added' ? 'widen' : 'narrow', what: `field-${verb}` };
    if (parent === 'oneOf' || parent === 'anyOf')
      return { effect: c.kind === 'added' ? 'widen' : 'narrow', what: `alternative-${verb}` };
    if (parent === 'allOf') return { effect: c.kind === 'added' ? 'narrow' : 'widen', what: `constraint-${verb}` };
    if (parent === 'parameters') {
      const required = (c.revision?.value as any)?.required === true;
      return { effect: c.kind === 'added' ? (required ? 'narrow' : 'widen') : 'narrow', what: `parameter-${verb}` };
    }
    if (PROSE.has(last) || last.startsWith('x-') || parent === 'examples')
      return { effect: 'none', what: 'documentation' };
    if (UPPER.has(last) || LOWER.has(last) || EXACT.has(last))
      return { effect: c.kind === 'added' ? 'narrow' : 'widen', what: `constraint-${verb}` };
    return {
      effect: c.kind === 'added' ? 'widen' : 'narrow',
      what: `${parent === 'responses' ? 'status' : parent === 'content' ? 'media-type' : 'element'}-${verb}`,
    };
  }
  if (PROSE.has(property) || property.startsWith('x-')) return { effect: 'none', what: 'documentation' };
  if (property === 'required') {
    if (typeof before === 'boolean' || typeof after === 'boolean')
      return { effect: after ? 'narrow' : 'widen', what: after ? 'became-required' : 'became-optional' };
    const b = new Set(before as string[]);
    const a = new Set(after as string[]);
    const added = subset(b, a) && a.size > b.size;
    const removed = subset(a, b) && b.size > a.size;
    return {
      effect: added ? 'narrow' : removed ? 'widen' : 'both',
      what: added ? 'field-required' : removed ? 'field-optional' : 'required-changed',
    };
  }
  if (property === 'enum') {
    const b = new Set(before as unknown[]);
    const a = new Set(after as unknown[]);
    const effect: Effect = subset(a, b) ? 'narrow' : subset(b, a) ? 'widen' : 'both';
    return {
      effect,
      what: effect === 'narrow' ? 'enum-narrowed' : effect === 'widen' ? 'enum-widened' : 'enum-changed',
    };
  }
  if (property === 'type') {
    const b = types(before);
    const a = types(after);
    const effect: Effect = subset(a, b) ? 'narrow' : subset(b, a) ? 'widen' : 'both';
    return { effect, what: 'type-changed' };
  }
  if (property === 'additionalProperties')
    return { effect: after === false ? 'narrow' : before === false ? 'widen' : 'both', what: 'additional-properties' };
  const num = (v: unknown) => (typeof v === 'number' ? v : undefined);
  if (UPPER.has(property) || LOWER.has(property)) {
    const b = num(before);
    const a = num(after);
    const tighter = b === undefined ? true : a === undefined ? false : UPPER.has(property) ? a < b : a > b;
    return { effect: tighter ? 'narrow' : 'widen', what: 'limit-changed' };
  }
  if (property === 'default') return { effect: 'both', what: 'default-changed' };
  // pattern, format, const and anything this reading does not know: both sides, to be safe.
  return { effect: 'both', what: EXACT.has(property) ? 'constraint-changed' : 'unclassified' };
}

/**
 * A wire format's answer type added to an operation (x-wire-formats with paths: the form/XML mode's)
 * is answered only to a request in that format, which no client of the base sends: it breaks no
 * client, and asks of a server only what the request type added beside it asks (that change is
 * counted on its own).
 */
function answerOnlyToNewType(c: RedoclyChange, revision: Doc): { effect: Effect; what: string } | undefined {
  if (c.kind !== 'added') return undefined;
  const m = /^#\/paths\/([^/]+)\/([a-z]+)\/responses\/\d+\/content\/([^/]+)$/.exec(c.revision!.pointer);
  const type = m?.[3]?.replace(/~1/g, '/');
  const added = Object.entries(revision['x-wire-formats'] ?? {}).find(([, f]) => f.paths && f.answer === type);
  if (!added) return undefined;
  const [id, format] = added;
  // Diffed per method (per-method.ts): a shared path's method stands at `<path>/method=<name>`.
  const path = m![1]!
    .replace(/~1/g, '/')
    .replace(/~0/g, '~')
    .replace(/\/method=[^/]+$/, '');
  const op = revision.paths?.[path]?.[m![2]!];
  return format.paths!.includes(path) && op?.requestBody?.content?.[format.request]
    ? { effect: 'none', what: `${id}-mode-answer-added` }
    : undefined;
}

/** Whom an effect breaks on one side: narrowing what clients send breaks them, widening what they read breaks them. */
function breaks(effect: Effect, side: Side, what: string): { clients: boolean; servers: boolean } {
  if (effect === 'none') return { clients: false, servers: false };
  // A result field removed takes data clients read; a result field added is for clients to ignore
  // (README: clients read results tolerantly) and asks nothing of servers until it is required.
  if (side === 'out' && what === 'field-removed') return { clients: true, servers: true };
  if (side === 'out' && what === 'field-added') return { clients: false, servers: false };
  const narrows = effect === 'narrow' || effect === 'both';
  const widens = effect === 'widen' || effect === 'both';
  return side === 'in' ? { clients: narrows, servers: widens } : { clients: widens, servers: narrows };
}

const METHOD_BRANCH =
  /^#\/paths\/[^/]*method=[^/]+\/[a-z]+\/(requestBody|responses\/[^/]+)\/content\/[^/]+\/schema(\/(anyOf|oneOf)\/\d+)?$/;

const pathOf = (pointer: string | undefined) => /^#\/(?:paths|webhooks)\/[^/]+/.exec(pointer ?? '')?.[0];

/** Changes the contract checks read better (methods and operations, credentials): left out here. */
function coveredElsewhere(c: RedoclyChange, pointer: string): boolean {
  // A method or operation renamed, which Redocly pairs by likeness, is the old one removed and the new one added.
  if (c.base && c.revision && pathOf(c.base.pointer) !== pathOf(c.revision.pointer)) return true;
  // A request's `method` const is the method's name: its x-methods entry says it.
  if (/^#\/components\/schemas\/[^/]+\/properties\/method\/const$/.test(pointer)) return true;
  if (/^#\/(paths|webhooks)\/[^/]+(\/[a-z]+)?$/.test(pointer)) return true;
  // A method's branch of its shared path's lists is its descriptor's request, result and refusal.
  if (METHOD_BRANCH.test(pointer)) return true;
  return /\/security(\/|$)/.test(pointer) || pointer.startsWith('#/components/securitySchemes');
}

const SCHEMA = /^#\/components\/schemas\/([^/]+)/;

function sidesOf(c: RedoclyChange, usage: Usage, doc: Doc): { sides: Side[]; operations: string[] } {
  const pointer = (c.revision ?? c.base)!.pointer;
  const schema = SCHEMA.exec(pointer)?.[1];
  if (schema) {
    const use = usage.get(schema);
    if (use && (use.in.size || use.out.size)) {
      const sides: Side[] = [];
      if (use.in.size) sides.push('in');
      if (use.out.size) sides.push('out');
      return { sides, operations: [...new Set([...use.in, ...use.out])].sort() };
    }
  }
  if (pointer.startsWith('#/components/parameters') || pointer.startsWith('#/components/requestBodies'))
    return { sides: ['in'], operations: [] };
  if (pointer.startsWith('#/components/responses') || pointer.startsWith('#/components/headers'))
    return { sides: ['out'], operations: [] };
  // Otherwise Redocly's path (through the document, $refs followed) says where it was met.
  const at = locate(doc, c.path.startsWith('#/') ? c.path : pointer);
  const inline = locate(doc, pointer);
  return {
    sides: [inline.side ?? at.side].filter((s): s is Side => Boolean(s)),
    operations: inline.operations.length ? inline.operations : at.operations,
  };
}

/** A value short enough for one line of a report. */
function brief(value: unknown): string {
  const text = JSON.stringify(value) ?? 'nothing';
  return text.length > 80 ? `${text.slice(0, 77)}…` : text;
}

function describe(c: RedoclyChange, what: string): string {
  const said = c.verdicts.map((v) => v.message).join(' ');
  if (said) return said;
  const pointer = (c.revision ?? c.base)!.pointer;
  const name = pointer.replace(/^#\/components\/schemas\//, '').replace(/\/properties\//g, '.');
  if (c.kind === 'modified')
    return `${c.property} of ${name} changed from ${brief(c.base?.value)} to ${brief(c.revision?.value)} (${what}).`;
  return `${name} ${c.kind} (${what}).`;
}

export async function schemaChanges(base: Doc, revision: Doc): Promise<Change[]> {
  // Compared per method (per-method.ts): a shared path's combined lists are no client's contract. The
  // request bodies' tolerant copies are made from the exact schemas (tolerant-requests.ts): a change
  // is the exact schema's, compared once.
  const [before, after] = [perMethod(withExactRequests(base)), perMethod(withExactRequests(revision))];
  const raw = await redoclyDiff(before, after);
  const usage = schemaUsage(base);
  for (const [name, use] of schemaUsage(revision)) {
    if (!usage.has(name)) usage.set(name, use);
    else for (const side of ['in', 'out'] as const) for (const op of use[side]) usage.get(name)![side].add(op);
  }
  const out: Change[] = [];
  for (const c of raw) {
    const pointer = (c.revision ?? c.base)!.pointer;
    if (coveredElsewhere(c, pointer)) continue;
    const { effect, what } = answerOnlyToNewType(c, revision) ?? effectOf(c);
    const { sides, operations } = sidesOf(c, usage, c.kind === 'removed' ? before : after);
    let clients = false;
    let servers = false;
    // Nowhere on the wire (an unused component, an example): documentation only.
    for (const side of sides) {
      const b = breaks(effect, side, what);
      clients ||= b.clients;
      servers ||= b.servers;
    }
    const kind =
      effect === 'none'
        ? 'documentation'
        : `${sides.length === 2 ? 'shared' : sides[0] === 'in' ? 'request' : sides[0] === 'out' ? 'result' : 'unused'}-${what}`;
    out.push({
      kind,
      operations,
      pointer,
      message: describe(c, what),
      ...verdict(clients, servers, c.kind === 'added' && effect !== 'none'),
      redocly: c.impact,
    });
  }
  return out;
}
