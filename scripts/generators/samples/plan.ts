// The one description every language's sample is rendered from: an operation of the table, its first
// request example and the spec's sandbox account, turned into the request a reader sends (verb, path
// with its example parameters, fixed headers, body) and the hashes the sample computes by the
// operation's recipes. The renderers (one per language, beside this file) only write it out; no
// sample text is written per operation.
import { hashRecipes } from '../../../generated/hash-recipes.ts';
import { recipeFormula } from '../../../runtime/recipe-text.ts';
import type { HashRecipe } from '../../../runtime/signing.ts';
import { contractOperations, exampleValue, type Doc, type Operation } from '../../lib/contract.ts';

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
  /** The recipe as the docs write it (runtime/recipe-text.ts). */
  formula: string;
  code: HashCode;
}

export interface RequestPlan {
  operationId: string;
  verb: string;
  /** The path with the example's path parameters in it. */
  path: string;
  /** Path parameters by name (the header hash signs them with the body). */
  params: Record<string, string>;
  /** Fixed headers: the version header, and the account id and API key where the operation takes them. */
  headers: { name: string; value: string }[];
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
  /** An access token fetched first, set into this body field, where the example spends one. */
  token: { request: RequestPlan; field: string } | null;
  /** Whether the answer is a file (written out as it came) rather than JSON. */
  fileAnswer: boolean;
}

/** The environment variable the samples read the base URL from (the curl samples use it too). */
export const BASE_URL_VARIABLE = 'GATEWAY_URL';

const recipes = hashRecipes as Record<string, HashRecipe>;

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
    const recipe = recipes[h.recipe]!;
    hashes.push({
      in: h.in === 'header' ? 'header' : 'body',
      name: h.name,
      recipe: h.recipe,
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
  return { operationId: op.operationId, verb: op.verb.toUpperCase(), path, params, headers, body, hashes };
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

/** The plan of an operation's sample; undefined for a webhook (the gateway sends those). */
export function samplePlan(op: Operation, doc: Doc): SamplePlan | undefined {
  if (op.webhook) return undefined;
  const ops = operationsOf(doc);
  const request = requestPlan(op, doc);
  const tokenField = doc['x-body-credentials'].accessToken!.token!;
  const spends = request.body !== null && typeof request.body[tokenField] === 'string';
  // The operation that issues tokens: the one whose result example carries the token field.
  const issuer = ops.find((o) =>
    (o.examples.result ?? []).some((n) => Object.hasOwn(exampleValue(doc, n) as object, tokenField)),
  );
  const sandbox = doc.info['x-sandbox'];
  return {
    ...request,
    summary: op.summary,
    title: `${request.verb} ${op.path}${op.method ? `, method ${op.method}` : ''}`,
    baseUrlVariable: BASE_URL_VARIABLE,
    defaultBaseUrl: doc.servers![0]!.variables!.base_url!.default,
    passphrase: sandbox.passphrase,
    token: spends && issuer ? { request: requestPlan(issuer, doc), field: tokenField } : null,
    fileAnswer: op.resultType !== undefined && op.resultType !== 'application/json',
  };
}
