// The compatibility corpus: request bodies and sample answers of public clients of the real gateway,
// each with its citation (owner/repo@commit:path#symbol), converted to the JSON mode and the seed's
// names. One JSON file per client under ./corpus; the conversion rules are in ./corpus/README.md.
// This module only loads and types the files; checking the project against them is the harness's job.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { XMLParser, XMLValidator } from 'fast-xml-parser';

export const CORPUS_DIR = join(import.meta.dirname, 'corpus');

export type EntryKind = 'request' | 'answer';
/** What the real gateway answered, as far as the client shows it. `not-approved`: any non-zero code. */
export type Outcome = 'approved' | 'declined' | 'refused' | 'pending' | 'not-approved' | 'any';
export const OUTCOMES: readonly Outcome[] = ['approved', 'declined', 'refused', 'pending', 'not-approved', 'any'];

export interface Expect {
  outcome?: Outcome;
  responseCode?: number;
  responseMessage?: string;
  /** How responseMessage is compared: `contains` where the client asserts a substring (assert_match). Default exact. */
  match?: 'exact' | 'contains';
  /**
   * Answer fields the client reads and cannot do without: each is there with a value (Python's
   * KeyError on `response['receiptNo']`, ActiveMerchant's assert_not_nil).
   */
  present?: string[];
  /** Answer fields that must differ from an earlier entry's answer: field → `<TRANSACTION_ID:entry-id>`. */
  differsFrom?: Record<string, string>;
}

/**
 * The hash recipes public clients compute (all MD5, lower-case hex):
 * - `inner`: md5(lower(md5(passphrase) + parts...)), the current form;
 * - `legacy`: md5(lower(passphrase + parts...)), the older form without the inner md5;
 * - `inner-lower-first`: md5(md5(passphrase) + lower(parts[0]) + parts[1..]), the vendor module's settlement hash.
 */
export type HashRecipe = 'inner' | 'legacy' | 'inner-lower-first';
export const HASH_RECIPES: readonly HashRecipe[] = ['inner', 'legacy', 'inner-lower-first'];

export interface HashVector {
  recipe: HashRecipe;
  passphrase: string;
  parts: string[];
  expected: string;
  /** `client`: the client states the expected value (or the expression it is); `computed`: worked out here from the client's recipe. */
  expectedSource: 'client' | 'computed';
}

export interface NamedHashVector extends HashVector {
  id: string;
  citation: string;
  notes: string;
  /** The full request body the vector belongs to, when the client shows one. */
  body?: Record<string, unknown>;
}

export interface CorpusEntry {
  id: string;
  citation: string;
  kind: EntryKind;
  /** The seed/gateway method name (or operationId for /npp and /payout paths). */
  operation: string;
  /** The path the client posts to, as the client writes it (`/post/`, `/token//addCard`, `/payframe/`, ...). */
  path: string;
  /** How the client pays or what it does: card, token, payframe, 3ds-external, capture, refund, void, ... */
  form: string;
  /** How the client puts the body on the wire: form, json, multipart, browser-form. */
  wire?: string;
  /** Headers the client sends that matter to the gateway (MW- written SVC-). */
  headers?: Record<string, string>;
  body: Record<string, unknown>;
  /**
   * The body exactly as it was on the wire, where the client's source shows it: a request's
   * form-encoded text (a recorded transcript), an answer's XML document (a recorded or mocked answer).
   */
  wireBody?: string;
  expect?: Expect;
  notes: string;
  /** Present when the body keeps the client's real credentials and hash: a signing test vector. */
  hashVector?: HashVector;
}

export interface Fact {
  fact: string;
  citation: string;
}

export interface ClientInfo {
  key: string;
  repo: string;
  commit: string;
  language: string;
  what: string;
  /** How the client signs body hashes: the recipes' current form, or their legacy form (no inner md5). */
  hashForm: 'current' | 'legacy';
  /** Where the client's code does not show its hash form. */
  hashFormNote?: string;
}

export interface CorpusFile {
  client: ClientInfo;
  entries: CorpusEntry[];
  hashVectors: NamedHashVector[];
  facts: Fact[];
}

export interface LoadedEntry extends CorpusEntry {
  client: string;
  hashForm: ClientInfo['hashForm'];
}

export const CITATION = /^[\w.-]+\/[\w.-]+@[0-9a-f]{40}:[^#]+(#.+)?$/;

/** Every corpus file, parsed, with its file name. */
export function loadCorpusFiles(dir: string = CORPUS_DIR): Array<CorpusFile & { file: string }> {
  return readdirSync(dir)
    .filter((name) => name.endsWith('.json'))
    .sort()
    .map((file) => ({ file, ...(JSON.parse(readFileSync(join(dir, file), 'utf8')) as CorpusFile) }));
}

/** All entries of all clients, each with its client key. */
export function loadCorpus(dir: string = CORPUS_DIR): LoadedEntry[] {
  return loadCorpusFiles(dir).flatMap((f) =>
    f.entries.map((e) => ({ ...e, client: f.client.key, hashForm: f.client.hashForm })),
  );
}

/** Every hash vector: the named ones and those carried by entries. */
export function loadHashVectors(
  dir: string = CORPUS_DIR,
): Array<HashVector & { id: string; citation: string; client: string }> {
  return loadCorpusFiles(dir).flatMap((f) => [
    ...f.hashVectors.map((v) => ({ ...v, client: f.client.key })),
    ...f.entries.flatMap((e) =>
      e.hashVector ? [{ ...e.hashVector, id: e.id, citation: e.citation, client: f.client.key }] : [],
    ),
  ]);
}

const md5 = (s: string) => createHash('md5').update(s, 'utf8').digest('hex');

/** The hash a recipe gives for its parts (see HashRecipe). */
export function hashOf(v: Pick<HashVector, 'recipe' | 'passphrase' | 'parts'>): string {
  switch (v.recipe) {
    case 'inner':
      return md5((md5(v.passphrase) + v.parts.join('')).toLowerCase());
    case 'legacy':
      return md5((v.passphrase + v.parts.join('')).toLowerCase());
    case 'inner-lower-first':
      return md5(md5(v.passphrase) + (v.parts[0] ?? '').toLowerCase() + v.parts.slice(1).join(''));
  }
}

/**
 * Values that stand for something the gateway answered to an earlier entry of the same client:
 * `<TRANSACTION_ID:am-purchase>`, `<CARD_ID:kev-addcard>as` (a client appending to it). Bare placeholders
 * (`<CARD_ID>`, `<PAYFRAME_TOKEN>`) stand for a value the client got elsewhere.
 */
export const PLACEHOLDER = /^<([A-Z0-9_]+)(?::([\w.-]+))?>/;

export function placeholderRefs(body: Record<string, unknown>): Array<{ field: string; kind: string; entry?: string }> {
  return Object.entries(body).flatMap(([field, value]) => {
    const m = typeof value === 'string' ? PLACEHOLDER.exec(value) : null;
    return m ? [{ field, kind: m[1]!, ...(m[2] ? { entry: m[2] } : {}) }] : [];
  });
}

const xml = new XMLParser({ parseTagValue: false, trimValues: true, ignoreDeclaration: true, isArray: () => true });

/**
 * The elements of a recorded mwResponse answer read by name, as the public clients read them (text
 * only, an empty element `<a/>` or `<a></a>` is ''), whatever its declaration says (Omnipay's mock
 * has none of the encoding). Throws on a document that is not a flat mwResponse: this package's own
 * answers are read strictly by contract/xml.ts.
 */
export function xmlAnswerFields(text: string): Record<string, string> {
  const valid = XMLValidator.validate(text);
  if (valid !== true) throw new Error(`not well-formed XML: ${valid.err.msg}`);
  const parsed = xml.parse(text) as Record<string, Array<Record<string, unknown[]>>>;
  if (Object.keys(parsed).join() !== 'mwResponse') throw new Error(`the root is not mwResponse: ${text.slice(0, 200)}`);
  const fields: Record<string, string> = {};
  for (const [name, values] of Object.entries(parsed.mwResponse![0] ?? {})) {
    if (values.length !== 1 || typeof values[0] === 'object') throw new Error(`<${name}> is not one text element`);
    fields[name] = String(values[0] ?? '');
  }
  return fields;
}
