// What the language renderers share: a concatenation recipe written as one expression from a
// language's few primitives, the samples' opening comment, and the hash vectors' check program's
// cases. Each renderer (python.ts, php.ts, ruby.ts, csharp.ts) supplies the primitives and the
// program around them.
import type { Body, HashCode, RequestPlan, SamplePlan, SignedHash, Take } from './plan.ts';

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

/** The variables of one request: its body and its answer. */
export interface Vars {
  body: string;
  answer: string;
}

/** What a language writes for the calls of a sample: the steps first, then the call, the answer written out. */
export interface Calls {
  comment: string;
  /** The variables of a step's request (named after its operation), or of the call's (null). */
  vars(operationId: string | null): Vars;
  /** Builds, signs and sends a request; `varsOf` names an earlier step's variables. */
  request(plan: RequestPlan, vars: Vars, varsOf: (step: number) => Vars): string[];
  /** Writes the answer, with the comment given. */
  write(comment: string): string;
  blankAfterStep: string[];
}

/** The comment over a step: what it makes, and which later request sends what of it. */
export function stepComment(plan: SamplePlan, index: number): string {
  const step = plan.steps[index]!;
  const uses = [...plan.steps, plan]
    .map((r) => ({ r, takes: r.takes.filter((t) => t.step === index) }))
    .filter(({ takes }) => takes.length)
    .map(
      ({ r, takes }) =>
        `${r === plan ? 'the call below' : r.operationId} sends ${takes
          .map(
            (t) =>
              `${t.source === 'answer' ? "its answer's" : 'its own'} ${t.from.at(-1)}${t.from.at(-1) === t.name ? '' : ` as ${t.name}`}`,
          )
          .join(' and ')}`,
    );
  return `First ${step.operationId}, for a record the example names that a fresh account does not hold: ${uses.join('; ')}.`;
}

/** The statements of a sample: each step (a record it names, an access token), the call, its answer written out. */
export function calls(plan: SamplePlan, language: Calls): string[] {
  const lines: string[] = [];
  const varsOf = (step: number) => language.vars(plan.steps[step]!.operationId);
  plan.steps.forEach((step, i) => {
    lines.push(`${language.comment} ${stepComment(plan, i)}`);
    lines.push(...language.request(step, language.vars(step.operationId), varsOf), ...language.blankAfterStep);
  });
  if (plan.steps.length)
    lines.push(`${language.comment} Then ${plan.operationId} itself, on the records the steps above made.`);
  lines.push(...language.request(plan, language.vars(null), varsOf));
  lines.push(
    language.write(
      plan.fileAnswer
        ? 'the file itself, or a JSON refusal'
        : 'JSON: responseCode 0 or above when processed, below 0 when refused',
    ),
  );
  return lines;
}

/** A step's answer field or request field as index expressions (["result"][0]), in a language's string literals. */
export const indexPath = (path: (string | number)[], str: (s: string) => string) =>
  path.map((k) => `[${typeof k === 'number' ? k : str(k)}]`).join('');

/** A sample's variable named after an operation, in snake case (Python, Ruby). */
/** A single-quoted string literal, backslash and quote escaped: PHP's and Ruby's, which read no other escape there. */
export const singleQuoted = (s: string) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

export const snake = (id: string) => id.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** Whether a request takes a path parameter from a step (then its path is built, not written out). */
export const buildsPath = (plan: RequestPlan) => plan.takes.some((t) => t.into === 'path');

/** The path as the parts a language joins: literal text, and each parameter's (escaped) expression. */
export function pathParts(plan: RequestPlan, text: (s: string) => string, param: (name: string) => string): string[] {
  return plan.template
    .split(/(\{\w+\})/)
    .filter((part) => part !== '')
    .map((part) => (/^\{\w+\}$/.test(part) ? param(part.slice(1, -1)) : text(part)));
}

/** One request's statements in a language: the body, each body hash, the headers, the header hash, the send. */
export interface RequestStatements {
  comment: string;
  /** The path parameters' variable, where a step gives one of them. */
  params: string;
  body: string;
  /** The statement that sets a value taken from a step's answer. */
  take(take: Take): string;
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
    ...(buildsPath(plan) ? [s.params] : []),
    s.body,
    ...plan.takes.map((t) => s.take(t)),
    ...hashes.body.flatMap((h) => [`${s.comment} ${hashComment(h)}`, s.bodyHash(h)]),
    s.headers,
    ...(hashes.header ? [`${s.comment} ${hashComment(hashes.header)}`, ...s.headerHash(hashes.header)] : []),
    s.send,
  ];
}
