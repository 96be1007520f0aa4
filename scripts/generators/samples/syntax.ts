// What the language renderers share: a concatenation recipe written as one expression from a
// language's few primitives, the samples' opening comment, and the hash vectors' check program's
// cases. Each renderer (python.ts, php.ts, ruby.ts, csharp.ts) supplies the primitives and the
// program around them.
import type { Body, HashCode, RequestPlan, SamplePlan, SignedHash } from './plan.ts';

/** The expressions a language writes a preimage with. */
export interface Syntax {
  /** A field of the body, as text (`text`: the value is a string already). */
  field(body: string, name: string, text: boolean): string;
  md5(expr: string): string;
  lower(expr: string): string;
  concat(exprs: string[]): string;
  /** The variable holding the passphrase. */
  passphrase: string;
}

/** A body hash's concatenation recipe (the batch file's checksum is written apart by each language). */
export function concat(hash: SignedHash): Extract<HashCode, { kind: 'concat' }> {
  if (hash.code.kind !== 'concat') throw new Error(`${hash.name}: recipe ${hash.recipe} is not a concatenation`);
  return hash.code;
}

/** The string a concatenation recipe hashes, as an expression over the body variable. */
export function preimage(code: Extract<HashCode, { kind: 'concat' }>, syntax: Syntax, body: string): string {
  const terms = code.terms.map((t) => {
    let e = t.kind === 'passphrase' ? syntax.passphrase : syntax.field(body, t.name, t.text);
    if (t.md5) e = syntax.md5(e);
    if (t.kind === 'field' && t.lowercase) e = syntax.lower(e);
    return e;
  });
  const joined = syntax.concat(terms);
  return code.lowercase ? syntax.lower(joined) : joined;
}

/** The comment line that names a hash and its recipe. */
export const hashComment = (h: SignedHash) => `${h.name} (${h.in}), recipe ${h.recipe}: ${h.formula}`;

/** The sample's opening comment, one line each. */
export function opening(plan: SamplePlan, run: string): string[] {
  return [
    `${plan.operationId}: ${plan.title}. ${plan.summary}`,
    `Signs with the sandbox account; only the language's standard library. Run: ${run}`,
    `The gateway's base URL is read from ${plan.baseUrlVariable} (default: the local sandbox, ${plan.defaultBaseUrl}).`,
  ];
}

/** The body hashes of a request (set into the body) and its header hash (sent as a header), apart. */
export function hashesOf(request: RequestPlan): { body: SignedHash[]; header: SignedHash | undefined } {
  return {
    body: request.hashes.filter((h) => h.in === 'body'),
    header: request.hashes.find((h) => h.in === 'header'),
  };
}

/** A JSON value's literal, for languages whose literals are JSON's with other words for true, false and null. */
export function literal(
  value: unknown,
  words: {
    true: string;
    false: string;
    null: string;
    open: string;
    close: string;
    pair: (k: string, v: string) => string;
    str: (s: string) => string;
    list: [string, string];
  },
  indent = '',
): string {
  const inner = `${indent}    `;
  if (value === null) return words.null;
  if (value === true) return words.true;
  if (value === false) return words.false;
  if (typeof value === 'number') return String(value);
  if (typeof value === 'string') return words.str(value);
  if (Array.isArray(value)) {
    if (!value.length) return `${words.list[0]}${words.list[1]}`;
    return `${words.list[0]}\n${value.map((v) => `${inner}${literal(v, words, inner)}`).join(',\n')},\n${indent}${words.list[1]}`;
  }
  const entries = Object.entries(value as Body);
  if (!entries.length) return `${words.open}${words.close}`;
  return `${words.open}\n${entries.map(([k, v]) => `${inner}${words.pair(words.str(k), literal(v, words, inner))}`).join(',\n')},\n${indent}${words.close}`;
}

/** A hash-vector case as a check program takes it: the inputs and the recipe's code over them. */
export interface VectorCase {
  inputs: Body;
  passphrase: string;
  code: Extract<HashCode, { kind: 'concat' }>;
}

/** What a language writes for the calls of a sample: one request, taking the token, writing the answer. */
export interface Calls {
  comment: string;
  /** Builds, signs and sends a request; its answer in the variable `answer`. */
  request(plan: RequestPlan, body: string, answer: string): string[];
  /** The variables of the main request and of the token's, their bodies and their answers (default: body, answer; token_body, token_answer). */
  main?: { body: string; answer: string };
  token?: { body: string; answer: string };
  /** Sets the token from the token's answer into the main body (after the body's literal). */
  takeToken(field: string): string[];
  /** Statements before the main request that read the token from its answer. */
  readToken?(field: string): string[];
  /** Writes the answer, with the comment given. */
  write(comment: string): string;
  blankAfterToken: string[];
}

/** The statements of a sample: the access token first where it spends one, the call, its answer written out. */
export function calls(plan: SamplePlan, language: Calls): string[] {
  const lines: string[] = [];
  const names = {
    main: language.main ?? { body: 'body', answer: 'answer' },
    token: language.token ?? { body: 'token_body', answer: 'token_answer' },
  };
  if (plan.token) {
    const { request, field } = plan.token;
    lines.push(`${language.comment} First an access token (${request.operationId}), which the call below spends.`);
    lines.push(...language.request(request, names.token.body, names.token.answer));
    lines.push(...(language.readToken?.(field) ?? []), ...language.blankAfterToken);
  }
  const main = language.request(plan, names.main.body, names.main.answer);
  if (plan.token) main.splice(1, 0, ...language.takeToken(plan.token.field));
  lines.push(...main);
  lines.push(
    language.write(
      plan.fileAnswer
        ? 'the file itself, or a JSON refusal'
        : 'JSON: responseCode 0 or above when processed, below 0 when refused',
    ),
  );
  return lines;
}

/** One request's statements in a language: the body, each body hash, the headers, the header hash, the send. */
export interface RequestStatements {
  comment: string;
  body: string;
  /** The statement that sets a body hash (a concatenation recipe's, or the batch file's checksum). */
  bodyHash(hash: SignedHash): string;
  headers: string;
  /** The statements that compute the header hash and set it. */
  headerHash(hash: SignedHash): string[];
  send: string;
}

/** The statements of one request, in the order every language writes them, each hash under its recipe. */
export function requestLines(plan: RequestPlan, s: RequestStatements): string[] {
  const hashes = hashesOf(plan);
  return [
    s.body,
    ...hashes.body.flatMap((h) => [`${s.comment} ${hashComment(h)}`, s.bodyHash(h)]),
    s.headers,
    ...(hashes.header ? [`${s.comment} ${hashComment(hashes.header)}`, ...s.headerHash(hashes.header)] : []),
    s.send,
  ];
}
