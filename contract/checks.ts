// The checks of every operation, derived from the contract: its examples and property-based requests
// must get its declared status and a body valid against its own schemas; each missing required
// field, each broken field, a wrong method and a missing version header must be refused (a negative
// responseCode, never a 5xx); a wrong key and a wrong hash must be refused with -1.
import { deref } from '../runtime/document.ts';
import { operations, type ContractOperation } from '../generated/operations.ts';
import { refusalFor, refusals, validationRefusals, type ErrorCode } from '../server-stubs/index.ts';
import { sampleValid } from './arbitraries.ts';
import {
  asRead,
  breaksContract,
  formOf,
  requestValidators,
  send,
  signBody,
  type Answer,
  type Credentials,
} from './http.ts';
import { doc, protocolFor, requestExamples, type Wire } from './requests.ts';
import { hashRecipes } from '../generated/hash-recipes.ts';
import type { HashRecipe } from '../runtime/signing.ts';
import { protocols } from '../generated/protocols.ts';
import type { Coverage } from './coverage.ts';
import type { StatePool } from './state-pool.ts';
import { ruleViolations } from './rules.ts';
import { fileViolations, valueViolations } from './value-rules.ts';

export interface RunContext {
  base: string;
  creds: Credentials;
  /** The target is the Prism mock: no state (what needs one is skipped), every stateless rule kept. */
  mock: boolean;
  runs: number;
  seed: number;
  /** What the run reached, filled by every judged answer. */
  coverage?: Coverage;
  /** The wire format the checks send in (docs/WIRE-FORMATS.md); operations without the form mode are sent JSON. */
  wire: Wire;
  /** The identifiers approved answers gave, for the operations that need them (state.ts). */
  pool?: StatePool;
  /** An operation whose success the run cannot reach is skipped, not failed (--allow-unreached). */
  allowUnreached?: boolean;
  /** Where a check says what it did to the server beyond its requests (it moved the sandbox clock), or left out. */
  note?: (line: string) => void;
  /**
   * Whether the run's --only/--skip select this operation, by its operationId or a tag (a check id
   * selects its check, not operations): what a check that sends several operations may send (the
   * model-based sequences). Undefined: every operation.
   */
  selects?: (operationId: string) => boolean;
  /**
   * What the run's --only or --skip did to leave all these operations out, and what would select one,
   * in words ("--skip 'Direct API',Token leaves out every one of them: take one out of --skip"): the
   * reason of a check that has nothing of them to send. Set with `selects`.
   */
  leftOutBy?: (operationIds: readonly string[]) => string;
}

// biome-ignore lint/suspicious/noConfusingVoidType: a check that passes returns nothing (its run is written without a return); one that cannot run says why
export type Outcome = void | { skip: string };

export interface Check {
  operationId: string;
  tags: string[];
  kind: 'example' | 'property' | 'invalid' | 'auth' | 'scenario' | 'state';
  name: string;
  run(ctx: RunContext): Promise<Outcome>;
  /** The wire format this check was made for, when the run holds the target to both. */
  wire?: Wire;
  /**
   * Runs after every other check, by itself: it moves the server's clock for the suite's account (on
   * a sandbox), which would move the time under checks still running (access tokens, settlement days).
   */
  alone?: boolean;
  /** The operationIds a replay of this check must --skip to run as this run ran it (a narrowed model-based check). */
  replaySkip?: (ctx: RunContext) => string[];
}

/**
 * A failure whose reason the check follows with lines of its own (a model-based counterexample, one
 * step a line): the reports print each on its line under the reason. Only the suite writes these
 * lines; what a server sent stays in the reason, escaped onto its one line.
 */
export class DetailedFailure extends Error {
  readonly details: string[];
  constructor(reason: string, details: string[]) {
    super(reason);
    this.details = details;
  }
}

const fail = (why: string): never => {
  throw new Error(why);
};

const tagsOf = (op: ContractOperation): string[] => doc.paths[op.path][op.verb.toLowerCase()].tags ?? [];

/**
 * The refusal a check expects: its responseCodes and, when one catalogue entry makes it, its stable
 * code (docs/REFUSALS.md). The answer never carries the code: the report names it so that a server
 * team can find the refusal, its message form and when the stubs make it.
 */
interface Expected {
  codes: number[];
  errorCode?: ErrorCode | undefined;
}

const expectedText = (e: Expected) =>
  `${e.codes.join(' or ')}${e.errorCode ? ` (${e.errorCode}, docs/REFUSALS.md)` : ''}`;

/** The answer is the documented refusal: negative responseCode, the refusal schema, the success status. */
function expectRefusal(op: ContractOperation, a: Answer, ctx: RunContext, expected: Expected, naming?: string): void {
  ctx.coverage?.record(op, undefined, a.status, a.json);
  // The mock refuses as the gateway does (its front answers with the server stubs' refusals): no exception for it.
  if (a.status >= 500) fail(`HTTP ${a.status}: a refusal is never a 5xx; expected ${expectedText(expected)}`);
  const code = Number(a.json?.responseCode);
  if (!(code < 0))
    fail(
      `responseCode ${a.json?.responseCode ?? '(none)'} (HTTP ${a.status}), a refusal is below 0: expected ${expectedText(expected)}`,
    );
  if (!expected.codes.includes(code))
    fail(`responseCode ${code}, expected ${expectedText(expected)}: ${a.json.responseMessage}`);
  if (naming && !String(a.json.responseMessage).includes(naming))
    fail(`"${a.json.responseMessage}" does not name ${naming}; expected ${expectedText(expected)}`);
  const problem = breaksContract(op, a);
  if (problem && a.status === op.status) fail(problem);
}

/** The code of the refusal the stubs make for a body that breaks its form's schema (which rule it breaks). */
function schemaRefusalCode(form: string, body: unknown): ErrorCode | undefined {
  const validate = requestValidators[form];
  return validate && !validate(body) ? refusalFor(validate.errors ?? []).errorCode : undefined;
}

/** The body fields that carry credentials (x-body-credentials): ids, keys and tokens. */
const BODY_CREDENTIAL_FIELDS: string[] = Object.values(doc['x-body-credentials']).flatMap((c) =>
  [c.id, c.key, c.token].filter((f): f is string => f !== undefined),
);

const credentialsRefused: Expected = { codes: [-1], errorCode: refusals.credentials.errorCode };

/**
 * Why this answer to this request breaks the contract: its shape (status, content type, schema) and
 * the rules of its result that need no state (echoes, sums, result hashes); against a stateful
 * implementation its value rules and its file's rules too.
 */
export function judge(
  op: ContractOperation,
  request: Record<string, unknown> | undefined,
  a: Answer,
  ctx: RunContext,
  /** The path parameters the request was sent with: what the answer was about, for the state pool. */
  params?: Record<string, string>,
): string | undefined {
  ctx.coverage?.record(op, request, a.status, a.json);
  const problem = breaksContract(op, a);
  if (problem) return problem;
  // On the mock, the rules that need no state: the value rules read the server's clock and store.
  if (!ctx.mock) ctx.pool?.add({ ...params, ...request }, a.json, op.path);
  if (!ctx.mock && op.resultType === 'application/zip' && a.json === undefined && a.status === op.status) {
    const broken = fileViolations(op.result, request ?? {}, a.bytes, a.date);
    return broken.length ? broken.join('; ') : undefined;
  }
  if (!a.json || typeof a.json !== 'object') return problem;
  // The rules judge the request as the server read it (a form's empty value is a field not sent).
  const read = request && a.protocol !== protocols.canonical ? asRead(a.protocol, op, request) : request;
  const broken = [
    ...ruleViolations(op, read, a.json, ctx.creds),
    ...(Number(a.json.responseCode) < 0 || ctx.mock ? [] : valueViolations(op.result, a.json, a.date)),
  ];
  return broken.length ? broken.join('; ') : undefined;
}

/**
 * Why an answer recorded from another server (a public client's fixture of the real service) breaks
 * the contract, by judge()'s checks: its shape, its sums and its value rules. The request it answered
 * and the keys it was signed with are not known, so its echoes and result hashes are not checked.
 */
export function recordedAnswerViolations(op: ContractOperation, a: Answer): string | undefined {
  const problem = breaksContract(op, a);
  if (problem || !a.json || typeof a.json !== 'object') return problem;
  const broken = [
    ...ruleViolations(op, undefined, a.json, undefined),
    ...(Number(a.json.responseCode) < 0 ? [] : valueViolations(op.result, a.json, a.date)),
  ];
  return broken.length ? broken.join('; ') : undefined;
}

/** A value that breaks a field's schema, from its strongest constraint. */
export function breaking(schema: unknown): unknown {
  const s = deref(doc, schema);
  if (!s || s === true) return undefined;
  if (s.const !== undefined || s.enum) return 'not-an-allowed-value';
  if (s.pattern || s.format || s.anyOf) return '!!';
  if (s.oneOf) return 12345;
  const type = Array.isArray(s.type) ? s.type[0] : s.type;
  if (type === 'string') return s.maxLength ? 'x'.repeat(s.maxLength + 1) : 12345;
  if (type === 'number' || type === 'integer') return s.minimum !== undefined ? s.minimum - 1 : 'x';
  if (type === 'boolean' || type === 'object' || type === 'array') return 'x';
  return undefined;
}

/** A value and everything in it made read-only: the drawn values are shared by every check that sends them. */
function frozen<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    for (const v of Object.values(value)) frozen(v);
    Object.freeze(value);
  }
  return value;
}

/**
 * The values drawn from a request form's schema that its validator accepts, by form, count and seed.
 * A draw depends on nothing else (arbitraries.ts), and a run drew the same values twice for every
 * operation served in both wire formats (its JSON checks, then its form checks), and again in each
 * later run of the process (a test file's): drawn once (sampleValid was about a tenth of a run's CPU),
 * read-only (signBody copies what it signs).
 */
const drawn = new Map<string, readonly unknown[]>();
export function propertyValues(form: string, n: number, seed: number): readonly unknown[] {
  const key = `${form} ${n} ${seed}`;
  let values = drawn.get(key);
  if (!values) {
    values = frozen(sampleValid(doc, doc.components.schemas[form], (v) => requestValidators[form]!(v), n, seed));
    drawn.set(key, values);
  }
  return values;
}

function checksFor(op: ContractOperation, wire: Wire): Check[] {
  const base = { operationId: op.operationId, tags: tagsOf(op) };
  const checks: Check[] = [];
  const examples = op.request
    ? requestExamples(op)
    : [{ name: 'request', value: undefined as unknown as Record<string, unknown> }];
  const signed = (ctx: RunContext, value: Record<string, unknown> | undefined) =>
    value && op.request ? signBody(op, formOf(op, value), value, ctx.creds) : value;

  for (const example of examples) {
    checks.push({
      ...base,
      kind: 'example',
      name: `example ${example.name} gets ${op.status} and its own result or refusal`,
      run: async (ctx) => {
        const body = signed(ctx, example.value);
        const problem = judge(op, body, await send(ctx.base, { op, body }, ctx.creds, ctx.wire), ctx);
        if (problem) fail(problem);
      },
    });
  }

  if (op.request) {
    checks.push({
      ...base,
      kind: 'property',
      name: 'property-based requests from the branch schemas get their declared status and a valid body',
      run: async (ctx) => {
        const forms = op.forms ?? [op.request!];
        let sent = 0;
        for (const [i, form] of forms.entries()) {
          const values = propertyValues(form, Math.max(1, Math.ceil(ctx.runs / forms.length)), ctx.seed + i);
          for (const value of values) {
            const body = signBody(op, form, value as Record<string, unknown>, ctx.creds);
            const problem = judge(op, body, await send(ctx.base, { op, body }, ctx.creds, ctx.wire), ctx);
            if (problem) fail(problem);
            sent++;
          }
        }
        if (!sent) return { skip: 'no valid value could be generated from the schema' };
      },
    });

    const example = examples[0]!.value;
    const form = formOf(op, example);
    const schema = doc.components.schemas[form];
    for (const field of (schema.required ?? []) as string[]) {
      checks.push({
        ...base,
        kind: 'invalid',
        name: `without ${field}: refused (-3) naming it`,
        run: async (ctx) => {
          const { [field]: _gone, ...body } = signed(ctx, example)!;
          const expected = { codes: [-3], errorCode: validationRefusals.required.errorCode };
          expectRefusal(op, await send(ctx.base, { op, body }, ctx.creds, ctx.wire), ctx, expected, `'${field}'`);
        },
      });
    }
    for (const field of Object.keys(example).filter((f) => f !== 'method')) {
      const bad = breaking(schema.properties?.[field]);
      // A protocol that carries text (a form) carries a value of the wrong type as text: no broken value there.
      if (bad === undefined || asRead(protocolFor(op, wire), op, { [field]: bad })[field] !== bad) continue;
      checks.push({
        ...base,
        kind: 'invalid',
        name: `with ${field} broken: refused (-2) naming it`,
        run: async (ctx) => {
          const body = { ...signed(ctx, example), [field]: bad };
          const expected = { codes: [-2], errorCode: schemaRefusalCode(form, body) };
          expectRefusal(op, await send(ctx.base, { op, body }, ctx.creds, ctx.wire), ctx, expected, `'${field}`);
        },
      });
    }
    if (op.method) {
      checks.push({
        ...base,
        kind: 'invalid',
        name: 'an unknown method is refused (-2) naming method',
        run: async (ctx) =>
          expectRefusal(
            op,
            await send(
              ctx.base,
              { op, body: { ...signed(ctx, example), method: 'noSuchMethod' } },
              ctx.creds,
              ctx.wire,
            ),
            ctx,
            { codes: [-2], errorCode: refusals.methodInvalid.errorCode },
            "'method'",
          ),
      });
    }
  }

  // No identifier or text of the gateway holds a NUL character (validationRefusals.nul, x-inferred):
  // one in a text field (one a credential or a hash is not, where there is one), else in a path
  // parameter, is refused -2 naming it, whatever else the server checks first (the body is signed
  // with it).
  const nulExample = examples[0]?.value;
  // Nor a field a hash recipe decodes (batchFile): a client cannot sign one that does not decode.
  const decoded = op.hashes.flatMap(({ recipe }) => {
    const r: HashRecipe = hashRecipes[recipe];
    return [
      ...(r.file ? [r.file.field] : []),
      ...(r.parts ?? []).filter((p) => p.decode === 'base64').flatMap((p) => p.field ?? []),
    ];
  });
  const notCredentials = new Set([...BODY_CREDENTIAL_FIELDS, ...op.hashes.map((h) => h.name), ...decoded, 'method']);
  const texts =
    op.request && nulExample ? Object.keys(nulExample).filter((f) => typeof nulExample[f] === 'string') : [];
  const nulField = texts.find((f) => !notCredentials.has(f)) ?? texts.find((f) => f !== 'method');
  const nulParameter = op.parameters.find((p) => p.in === 'path')?.name;
  const nulIn = nulField ?? nulParameter;
  if (nulIn !== undefined)
    checks.push({
      ...base,
      kind: 'invalid',
      name: `with a NUL character in ${nulIn}: refused (-2) naming it`,
      run: async (ctx) => {
        const withNul = (text: string) => `${text.slice(0, 1)}\u0000${text.slice(1)}`;
        const out = nulField
          ? { op, body: signed(ctx, { ...nulExample!, [nulField]: withNul(String(nulExample![nulField])) }) }
          : {
              op,
              body: signed(ctx, nulExample),
              params: { [nulIn]: withNul(op.parameters.find((p) => p.name === nulIn)!.example ?? '') },
            };
        const expected = { codes: [-2], errorCode: validationRefusals.nul.errorCode };
        // The rule's words, not only the field (a field with a pattern is refused -2 naming it anyway):
        // the refusal's own, from the name on (the kind before it is Field or Parameter).
        const words = validationRefusals.nul(nulIn).message;
        const at = words.indexOf(`'${nulIn}'`);
        if (at < 0) throw new Error(`the nul refusal's words do not name the field: ${words}`);
        const naming = words.slice(at);
        expectRefusal(op, await send(ctx.base, out, ctx.creds, ctx.wire), ctx, expected, naming);
      },
    });

  // The version header marks the JSON mode, which refuses a request without it; the form mode's
  // clients send none (docs/WIRE-FORMATS.md).
  const protocol = protocolFor(op, wire);
  const needsNone = protocol.checkHeaders({}) === undefined;
  checks.push({
    ...base,
    kind: 'invalid',
    name: needsNone
      ? `without SVC-API-VERSION: taken, as the ${protocol.id} mode needs none`
      : 'without SVC-API-VERSION: refused, never a 5xx',
    run: async (ctx) => {
      const a = await send(
        ctx.base,
        { op, body: signed(ctx, examples[0]!.value), headers: { 'SVC-API-VERSION': undefined } },
        ctx.creds,
        ctx.wire,
      );
      if (a.status >= 500) fail(`HTTP ${a.status}`);
      if (needsNone) {
        if (String(a.json?.responseMessage).includes('SVC-API-VERSION')) fail(`refused: ${a.json.responseMessage}`);
        return;
      }
      if (!(Number(a.json?.responseCode) < 0)) fail(`HTTP ${a.status} without a refusal`);
    },
  });

  const keyed = op.headers
    ? op.headers.apiKey
    : op.credentials.some((k) => k === 'merchant' || k === 'partner')
      ? 'apiKey'
      : undefined;
  const tokenOnly = !keyed && op.credentials.includes('accessToken');
  checks.push({
    ...base,
    kind: 'auth',
    name: tokenOnly
      ? 'an access token the gateway did not issue is refused with -1'
      : 'a wrong API key is refused with -1',
    run: async (ctx) => {
      const body = signed(ctx, examples[0]!.value);
      if (tokenOnly)
        return expectRefusal(
          op,
          await send(
            ctx.base,
            { op, body: { ...body, accessToken: 'not-issued-by-the-gateway' } },
            ctx.creds,
            ctx.wire,
          ),
          ctx,
          credentialsRefused,
        );
      if (!keyed) return { skip: 'the operation carries no credential to falsify' };
      const out = op.headers
        ? { op, body, headers: { [keyed]: 'wrongkey' } }
        : { op, body: { ...body, apiKey: 'wrongkey' } };
      expectRefusal(op, await send(ctx.base, out, ctx.creds, ctx.wire), ctx, credentialsRefused);
    },
  });
  const hashed = op.hashes[0];
  checks.push({
    ...base,
    kind: 'auth',
    name: 'a wrong message hash is refused with -1',
    run: async (ctx) => {
      const body = signed(ctx, examples[0]!.value);
      if (!hashed || (hashed.in === 'body' && !(hashed.name in (body ?? {}))))
        return { skip: 'the operation carries no message hash' };
      const wrong = hashed.in === 'header' ? 'f'.repeat(64) : '0'.repeat(32);
      const out =
        hashed.in === 'header'
          ? { op, body, headers: { [hashed.name]: wrong } }
          : { op, body: { ...body, [hashed.name]: wrong } };
      expectRefusal(op, await send(ctx.base, out, ctx.creds, ctx.wire), ctx, credentialsRefused);
    },
  });
  return checks;
}

/**
 * The checks of every operation; in another protocol than the spec's own, of the operations served in
 * it, each marked with its wire.
 */
export const operationChecks = (wire: Wire = protocols.canonical.id): Check[] => {
  const protocol = protocols.byId(wire) ?? protocols.canonical;
  return protocol === protocols.canonical
    ? operations.flatMap((op) => checksFor(op, wire))
    : operations
        .filter((op) => op.protocols.includes(protocol.id))
        .flatMap((op) => checksFor(op, wire).map((c) => ({ ...c, wire, name: `${c.name} (${protocol.label})` })));
};
