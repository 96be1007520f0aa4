// The one description every language's sample is rendered from: an operation of the table, its first
// request example and the spec's sandbox account, turned into the request a reader sends (verb, path
// with its example parameters, fixed headers, body) and the hashes the sample computes by the
// operation's recipes. The renderers (one per language, beside this file) only write it out; no
// sample text is written per operation.
import { recipeFormula } from '../../../runtime/recipe-text.ts';
import type { HashRecipe } from '../../../runtime/signing.ts';
import { recipesOf } from '../hash-recipes.ts';
import { contractOperations, exampleValue, type Doc, type Operation } from '../../lib/contract.ts';
import { protocolsOf } from '../../lib/protocols.ts';

export type Json = string | number | boolean | null | Json[] | { [key: string]: Json };
export type Body = { [key: string]: Json };

/** One term of a hash's preimage, as a sample writes it. */
export type Term =
  | { kind: 'passphrase'; md5: boolean }
  | { kind: 'field'; name: string; text: boolean; md5: boolean; lowercase: boolean };

/** How one hash is computed: the concatenation recipes, the batch file's checksum, or the header HMAC. */
export type HashCode =
  | { kind: 'concat'; terms: Term[]; lowercase: boolean }
  | { kind: 'file'; field: string }
  | { kind: 'hmac' };

export interface SignedHash {
  /** A body field, or a header. */
  in: 'body' | 'header';
  name: string;
  recipe: string;
  /** The recipe itself, from the document the plan was made from. */
  definition: HashRecipe;
  /** The recipe as the docs write it (runtime/recipe-text.ts). */
  formula: string;
  code: HashCode;
}

/**
 * A value a request takes from an earlier step's answer: the answer's field at \`from\` (its path in
 * the answer), set into a body field or a path parameter in place of the example's value.
 */
export interface Take {
  step: number;
  /**
   * answer: the step's answer holds it (the gateway's id); request: the step sent it itself (an id
   * the caller chooses as it makes the record: a PayID, a card's new key), so it is taken from there.
   */
  source: 'answer' | 'request';
  from: (string | number)[];
  into: 'body' | 'path';
  name: string;
}

export interface RequestPlan {
  operationId: string;
  verb: string;
  /** The path with the example's path parameters in it. */
  path: string;
  /** The path as the spec writes it, {name} for each parameter. */
  template: string;
  /** The values it takes from the steps before it (none: it sends the example's values). */
  takes: Take[];
  /** Path parameters by name (the header hash signs them with the body). */
  params: Record<string, string>;
  /** Fixed headers: the version header, and the account id and API key where the operation takes them. */
  headers: { name: string; value: string }[];
  /** The media type its body is sent as: the spec's own. */
  contentType: string;
  body: Body | null;
  hashes: SignedHash[];
}

export interface SamplePlan extends RequestPlan {
  summary: string;
  /** "POST /post, method processCard" */
  title: string;
  baseUrlVariable: string;
  defaultBaseUrl: string;
  passphrase: string;
  /**
   * The requests sent first, in order: each makes a record (or the access token) whose value the
   * example names, and which a fresh sandbox does not hold.
   */
  steps: RequestPlan[];
  /** Whether the answer is a file (written out as it came) rather than JSON. */
  fileAnswer: boolean;
}

/** The environment variable the samples read the base URL from (the curl samples use it too). */
export const BASE_URL_VARIABLE = 'GATEWAY_URL';

const isEmptyArray = (value: Json | undefined) => Array.isArray(value) && value.length === 0;

/** A recipe's code for this body: of a list of alternative fields, the one the body carries. */
export function hashCode(recipe: HashRecipe, body: Body): HashCode {
  if (recipe.algorithm === 'hmac-sha256') return { kind: 'hmac' };
  if (recipe.file) return { kind: 'file', field: recipe.file.field };
  const terms: Term[] = [];
  for (const part of recipe.parts ?? []) {
    if (part.secret) {
      terms.push({ kind: 'passphrase', md5: part.digest === 'md5' });
      continue;
    }
    const names = typeof part.field === 'string' ? [part.field] : (part.field ?? []);
    // An absent or null field, or an empty array, counts as the empty string: it adds nothing.
    const name = names.find((n) => body[n] !== undefined && body[n] !== null && !isEmptyArray(body[n]));
    if (!name) continue;
    if (typeof body[name] === 'object')
      throw new Error(`recipe field ${name}: a sample hashes text and numbers only, not ${JSON.stringify(body[name])}`);
    terms.push({
      kind: 'field',
      name,
      text: typeof body[name] === 'string',
      md5: part.digest === 'md5',
      lowercase: part.lowercase === true,
    });
  }
  return { kind: 'concat', terms, lowercase: recipe.lowercase === true };
}

function requestPlan(op: Operation, doc: Doc): RequestPlan {
  const example = op.examples.request[0];
  const body = example ? structuredClone(exampleValue(doc, example) as Body) : null;
  const params = Object.fromEntries(
    op.parameters.filter((p) => p.in === 'path').map((p) => [p.name, p.example ?? `{${p.name}}`]),
  );
  const path = op.path.replace(/\{(\w+)\}/g, (_, n: string) => encodeURIComponent(params[n] ?? n));
  const version = doc.components.parameters.ApiVersion;
  const sandbox = doc.info['x-sandbox'];
  const headers = [{ name: version.name as string, value: version.schema.const as string }];
  const roleValue: Record<string, string> = { accountId: sandbox.merchantUUID, apiKey: sandbox.apiKey };
  const hashes: SignedHash[] = [];
  for (const h of op.hashes ?? []) {
    const recipe = recipesOf(doc)[h.recipe]!;
    hashes.push({
      in: h.in === 'header' ? 'header' : 'body',
      name: h.name,
      recipe: h.recipe,
      definition: recipe,
      formula: recipeFormula(recipe),
      code: hashCode(recipe, body ?? {}),
    });
  }
  // The header credentials by their security schemes' names and roles; the message hash is computed.
  for (const name of op.security) {
    const scheme = doc.components.securitySchemes[name];
    const role = scheme['x-credential'] as string;
    if (role !== 'messageHash') headers.push({ name: scheme.name, value: roleValue[role]! });
  }
  return {
    operationId: op.operationId,
    verb: op.verb.toUpperCase(),
    path,
    template: op.path,
    takes: [],
    params,
    headers,
    contentType: protocolsOf(doc).canonical.requestType,
    body,
    hashes,
  };
}

// The operation table of a document, read once per document (the docs build asks for every operation's samples).
const tables = new WeakMap<Doc, Operation[]>();
function operationsOf(doc: Doc): Operation[] {
  let ops = tables.get(doc);
  if (!ops) {
    ops = contractOperations(doc);
    tables.set(doc, ops);
  }
  return ops;
}

/** A record's id in the examples has letters and digits (ids, tokens, UUIDs); a name, a status or a date has not both. */
const ID_SHAPE = /^(?=.*[0-9])(?=.*[A-Za-z])\S+$/;

type Leaf = { path: (string | number)[]; value: unknown };
const leaves = (value: unknown, path: (string | number)[] = []): Leaf[] =>
  value !== null && typeof value === 'object'
    ? Object.entries(value).flatMap(([k, v]) => leaves(v, [...path, Array.isArray(value) ? Number(k) : k]))
    : [{ path, value }];

/** Whether an answer's field is the request's field: the same name, or an object's id (transaction.id is transactionId). */
const namedAs = (path: Leaf['path'], name: string) =>
  path.at(-1) === name || (path.at(-1) === 'id' && `${String(path.at(-2))}Id` === name);

/** The request fields the spec marks as echoed back (x-echo): values the caller chooses, never records. */
function echoedFields(doc: Doc): Set<string> {
  const names = new Set<string>();
  const walk = (node: unknown): void => {
    if (node === null || typeof node !== 'object') return;
    const echo = (node as Record<string, unknown>)['x-echo'];
    if (typeof echo === 'string') names.add(echo);
    else if (echo && typeof echo === 'object') names.add((echo as { field: string }).field);
    for (const child of Object.values(node)) walk(child);
  };
  walk(doc.components);
  return names;
}

/** The values a request carries, as the example sends them: its body's string fields and its path parameters. */
function namedValues(op: Operation, doc: Doc): { into: Take['into']; name: string; value: string }[] {
  const example = op.examples.request[0];
  const body = (example ? exampleValue(doc, example) : {}) as Body;
  return [
    ...Object.entries(body)
      .filter((e): e is [string, string] => typeof e[1] === 'string')
      .map(([name, value]) => ({ into: 'body' as const, name, value })),
    ...op.parameters
      .filter((p) => p.in === 'path' && typeof p.example === 'string')
      .map((p) => ({ into: 'path' as const, name: p.name, value: p.example as string })),
  ];
}

/**
 * Which earlier requests a sample needs, found from the spec's examples alone (they are consistent:
 * the id of a record one request names is the value the operation that makes it answers). The maker
 * of a value is the first operation of the table, other than a query (x-retry safe, or a GET: they
 * make nothing), whose result example answers that value under the same field name (or as the id of
 * an object named so), else the first that sends it under another name (maker below). When the maker
 * is the operation itself, the request names the record it makes (a PayID) and needs no step. A
 * value counts as a record's id when it has an id's shape and the caller does not choose it for
 * itself (a field the spec marks as echoed, x-echo, or the account's own credentials).
 */
class Prerequisites {
  private readonly doc: Doc;
  private readonly ops: Operation[];
  private readonly echoed: Set<string>;
  /** The sandbox account's own credentials: the account's, not a record's. */
  private readonly account: Set<string>;
  constructor(doc: Doc, ops: Operation[]) {
    this.doc = doc;
    this.ops = ops;
    this.echoed = echoedFields(doc);
    const sandbox = doc.info['x-sandbox'];
    this.account = new Set([sandbox.merchantUUID, sandbox.apiKey]);
  }

  private isRecord(name: string, value: string): boolean {
    return !this.echoed.has(name) && !this.account.has(value) && ID_SHAPE.test(value);
  }

  /**
   * The operation that makes the record, and where the value is: the first operation (not a query)
   * whose result example answers it, or else the first that sends it under another name (a card's
   * cardKeyReplace is the card's next cardKey). `asking` are the operations asking (none makes its own).
   */
  private maker(
    name: string,
    value: string,
    asking: string[],
  ): (Omit<Take, 'step' | 'into' | 'name'> & { op: Operation }) | undefined {
    if (!this.isRecord(name, value)) return undefined;
    const makers = this.ops.filter((op) => !op.webhook && op.verb !== 'get' && !(op.retry && 'safe' in op.retry));
    for (const op of makers) {
      const hit = (op.examples.result ?? [])
        .flatMap((n) => leaves(exampleValue(this.doc, n)))
        .find((l) => l.value === value && namedAs(l.path, name));
      if (!hit) continue;
      if (asking.includes(op.operationId)) return undefined;
      const sent = namedValues(op, this.doc).find((v) => v.into === 'body' && v.value === value);
      return sent ? { op, source: 'request', from: [sent.name] } : { op, source: 'answer', from: hit.path };
    }
    for (const op of makers) {
      const sent = namedValues(op, this.doc).find((v) => v.into === 'body' && v.value === value && v.name !== name);
      if (sent) return asking.includes(op.operationId) ? undefined : { op, source: 'request', from: [sent.name] };
    }
    return undefined;
  }

  /** The request of an operation with what it takes from the steps, the steps it needs appended first. */
  plan(op: Operation, steps: RequestPlan[], asking: string[]): RequestPlan {
    const request = requestPlan(op, this.doc);
    for (const { into, name, value } of namedValues(op, this.doc)) {
      const made = this.maker(name, value, [...asking, op.operationId]);
      if (!made) continue;
      let step = steps.findIndex((s) => s.operationId === made.op.operationId);
      if (step < 0) {
        const first = this.plan(made.op, steps, [...asking, op.operationId]);
        step = steps.push(first) - 1;
      }
      request.takes.push({ step, source: made.source, from: made.from, into, name });
    }
    return request;
  }
}

/** The plan of an operation's sample; undefined for a webhook (the gateway sends those). */
export function samplePlan(op: Operation, doc: Doc): SamplePlan | undefined {
  if (op.webhook) return undefined;
  const ops = operationsOf(doc);
  const steps: RequestPlan[] = [];
  const request = new Prerequisites(doc, ops).plan(op, steps, []);
  const sandbox = doc.info['x-sandbox'];
  return {
    ...request,
    summary: op.summary,
    title: `${request.verb} ${op.path}${op.method ? `, method ${op.method}` : ''}`,
    baseUrlVariable: BASE_URL_VARIABLE,
    defaultBaseUrl: doc.servers![0]!.variables!.base_url!.default,
    passphrase: sandbox.passphrase,
    steps,
    fileAnswer: op.resultType !== undefined && op.resultType !== protocolsOf(doc).canonical.answerType,
  };
}
