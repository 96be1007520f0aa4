// The compatibility corpus against every artifact: what the real gateway's public clients send is
// accepted as the right method and form by the validators, routed to the right handler by the
// validating server, answered by the sandbox as the real gateway answered the client, and answered by
// the mock with its method's result; every sample answer they read validates against its schema.
// Each request goes on the wire as its client sends it: the form clients' form-encoded, without a
// version header, their answers read as XML by element name (docs/WIRE-FORMATS.md).
// Entries outside this contract (the hosted payment page, other hosts) and requests the contract
// decided not to accept are named in compat-decisions.ts, each with its reason: nothing is skipped
// silently, and a decision that stops being true fails here.
import { zipSync } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashRecipes } from '../../generated/hash-recipes.ts';
import { startMock } from '../../mock/run.ts';
import { sharedPrism } from '../support/shared-servers.ts';
import { computeHash, legacyRecipe, type HashRecipe } from '../../runtime/signing.ts';
import { createSandbox, type RunningSandbox } from '../../sandbox/index.ts';
import { bodyErrors } from '../../server-stubs/core/request.ts';
import {
  createGateway,
  type GatewayRequest,
  methodPath,
  normalised,
  withoutUnknownFields,
} from '../../server-stubs/index.ts';
import { accounts, echoHandlers, type Call } from '../fixtures/example-handlers.ts';
import { sandbox as creds } from '../../contract/index.ts';
import { doc, errorsOf, validatorFor } from '../support/contract.ts';
import { ignoredFields, notAccepted, outcomeNotReproduced, outOfScope } from './compat-decisions.ts';
import { loadCorpus, PLACEHOLDER, type LoadedEntry } from './corpus.ts';
import { operationOf, route } from './operation-of.ts';
import { protocols } from '../../generated/protocols.ts';

const corpus = loadCorpus();
const inScope = corpus.filter((e) => !(e.id in outOfScope));
const requests = inScope.filter((e) => e.kind === 'request');
const accepted = requests.filter((e) => !(e.id in notAccepted));
// A request the real gateway refused (as its client records) need not pass validation: the sandbox check holds it.
const meantToPass = accepted.filter((e) => e.expect?.outcome !== 'refused' && e.expect?.outcome !== 'not-approved');
const answers = inScope.filter((e) => e.kind === 'answer');

// Values a client got elsewhere (a payframe token, a zip it built...), and stand-ins for answers of
// earlier entries where no sandbox runs (validators, stubs, mock).
const batchZip = Buffer.from(
  zipSync({ 'batch.csv': new TextEncoder().encode('transactionReferenceID,transactionAmount\nB-1,1.00\n') }),
).toString('base64');
const standIns: Record<string, string> = {
  MERCHANT_UUID: creds.merchantUUID,
  PARTNER_UUID: creds.partnerUUID,
  API_KEY: creds.apiKey,
  TRANSACTION_ID: '1336-5d2e8f10-b600-11e6-b9c3-005056b209e0',
  CARD_ID: 'KOCI10023982',
  CARD_KEY: 's5KQIxsZuiyvs3Sc',
  PAYFRAME_TOKEN: 'pf8f2c0a1b6d4e93',
  PAYFRAME_KEY: 'pk39c1e7d2a0b4f8',
  THREEDS_TOKEN: 'tds8c1f0e2a9b7d4c6e',
  HASH_SALT: 's4lt',
  ZIP_FILE: batchZip,
};
// Placeholders that are hashes, by the name of the field they stand in.
const HASHES = new Set(['HASH', 'URL_HASH', 'MD5_OF_ZIP', 'FILE_HASH']);

/** The body with credentials, earlier answers (state) or stand-ins, and its hashes as its client signs them. */
function signed(entry: LoadedEntry, state: Record<string, string> = {}): Record<string, unknown> {
  const op = operationOf(entry);
  const body: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(entry.body)) {
    const m = typeof value === 'string' ? PLACEHOLDER.exec(value) : null;
    if (!m || HASHES.has(m[1]!)) body[name] = value;
    else body[name] = (state[m[0]] ?? standIns[m[1]!] ?? m[0]) + (value as string).slice(m[0].length);
  }
  if (route(entry).method && !body.method && op.method) body.method = op.method;
  for (const use of op.hashes.filter((h) => h.in === 'body')) {
    const value = body[use.name];
    if (typeof value !== 'string' || !HASHES.has(PLACEHOLDER.exec(value)?.[1] ?? '')) continue;
    const recipe = hashRecipes[use.recipe as keyof typeof hashRecipes] as HashRecipe;
    body[use.name] = computeHash(
      entry.hashForm === 'legacy' ? (legacyRecipe(recipe) ?? recipe) : recipe,
      creds.passphrase,
      body,
    );
  }
  // The body as the client puts it on the wire: without a method field where it names it in the path.
  if (methodPath(entry.path) && !('method' in entry.body)) delete body.method;
  return body;
}

/**
 * The request as its client puts it on the wire: form-encoded without a version header (every value
 * a string, docs/WIRE-FORMATS.md) when the client posts forms, else in the JSON mode.
 */
const requestOf = (entry: LoadedEntry, body: Record<string, unknown>): GatewayRequest => {
  const protocol = protocols.byId(entry.wire === 'form' ? 'form' : 'json')!;
  const headers = Object.fromEntries(
    Object.entries(protocol.requestHeaders(true)).map(([name, value]) => [name.toLowerCase(), value]),
  );
  return { verb: 'POST', url: entry.path, headers, body: protocol.writeRequest(body) };
};
const form = protocols.byId('form')!;

/**
 * The answer's fields as the client's parser reads them: a form client's by element name under the
 * mwResponse root of an XML answer (it must be one), a JSON client's from the JSON.
 */
function answerOf(entry: LoadedEntry, type: string | null | undefined, text: string): Record<string, unknown> {
  if (entry.wire !== 'form') return JSON.parse(text) as Record<string, unknown>;
  expect(type, `${entry.id}: ${text.slice(0, 200)}`).toBe(form.answerType);
  const read = form.readAnswer(text);
  if ('error' in read) throw new Error(`${entry.id}: the XML answer cannot be read: ${read.error}`);
  return read.ok;
}

/**
 * The answer is what the client recorded or asserts: its outcome and words, the fields it reads
 * (present, with a value), and the fields that must differ from an earlier answer's (`state` holds
 * the earlier answers' values by placeholder).
 */
function expectOutcome(entry: LoadedEntry, answer: Record<string, unknown>, state: Record<string, string> = {}) {
  const code = Number(answer.responseCode);
  const { outcome, responseCode, responseMessage, match, present, differsFrom } = entry.expect!;
  const seen = `${entry.id}: ${JSON.stringify(answer)}`;
  if (responseCode !== undefined) expect(code, seen).toBe(responseCode);
  if (outcome === 'approved') expect(code, seen).toBe(0);
  if (outcome === 'declined') expect(code, seen).toBeGreaterThan(0);
  if (outcome === 'refused') expect(code, seen).toBeLessThan(0);
  if (outcome === 'pending') expect(code, seen).toBe(10);
  if (outcome === 'not-approved') expect(code, seen).not.toBe(0);
  if (responseMessage !== undefined) {
    if (match === 'contains') expect(String(answer.responseMessage), seen).toContain(responseMessage);
    else expect(answer.responseMessage, seen).toBe(responseMessage);
  }
  const empty = (v: unknown) => v === undefined || v === '' || (Array.isArray(v) && v.length === 0);
  expect(
    (present ?? []).filter((field) => empty(answer[field])),
    `${seen}: the fields the client reads`,
  ).toEqual([]);
  for (const [field, ref] of Object.entries(differsFrom ?? {})) {
    expect(state[ref], `${entry.id}: ${ref} was answered`).toBeDefined();
    expect(answer[field], `${seen}: ${field} differs from ${ref}`).not.toBe(state[ref]);
  }
}

describe('the corpus in scope', () => {
  it('every decision names an entry of the corpus, and every entry not accepted is a request', () => {
    const ids = new Set(corpus.map((e) => e.id));
    expect(
      Object.keys({ ...outOfScope, ...notAccepted, ...outcomeNotReproduced }).filter((id) => !ids.has(id)),
    ).toEqual([]);
    expect(Object.keys(notAccepted).filter((id) => corpus.find((e) => e.id === id)!.kind !== 'request')).toEqual([]);
    expect(accepted.length).toBeGreaterThan(0);
    expect(answers.length).toBeGreaterThan(0);
  });

  it('the fields the gateway ignores (no form declares them) are exactly those named, each with its reason', () => {
    const ignored = new Set<string>();
    for (const entry of requests) {
      const op = operationOf(entry);
      for (const field of withoutUnknownFields(op, entry.body).unknown) ignored.add(`${op.operationId}.${field}`);
    }
    expect([...ignored].sort()).toEqual(Object.keys(ignoredFields).sort());
  });
});

describe.each(meantToPass.map((e) => [e.id, e] as const))('request %s', (_id, entry) => {
  const op = operationOf(entry);
  const body = signed(entry);

  it(`the validators accept it as ${op.operationId} in one of its forms`, () => {
    const withMethod = op.method && !body.method ? { ...body, method: op.method } : body;
    const failed = bodyErrors(op, normalised(op, withoutUnknownFields(op, withMethod).body));
    expect(failed?.errors.map((e) => `${e.instancePath} ${e.message} ${JSON.stringify(e.params)}`) ?? []).toEqual([]);
  });

  it(`the validating server routes it to the ${op.aliasOf ?? op.operationId} handler`, async () => {
    const calls: Call[] = [];
    const gateway = createGateway({ handlers: echoHandlers(calls), accounts });
    const response = await gateway.handle(requestOf(entry, body));
    expect(response.status).toBe(op.status);
    if (op.resultType === 'application/json')
      expect(
        Number(answerOf(entry, response.headers['content-type'], String(response.body)).responseCode),
        String(response.body),
      ).toBeGreaterThanOrEqual(0);
    expect(calls.map((c) => c.operationId)).toEqual([op.aliasOf ?? op.operationId]);
  });
});

describe.each(Object.entries(notAccepted))('not accepted: %s', (id, why) => {
  it(`is refused by the validating server (${why})`, async () => {
    const entry = corpus.find((e) => e.id === id)!;
    const response = await createGateway({ handlers: echoHandlers(), accounts }).handle(
      requestOf(entry, signed(entry)),
    );
    const answer = answerOf(entry, response.headers['content-type'], String(response.body));
    expect(Number(answer.responseCode), JSON.stringify(answer)).toBeLessThan(0);
  });
});

describe('the sandbox answers as the real gateway answered the client', () => {
  let sandbox: RunningSandbox;
  beforeAll(async () => {
    sandbox = await createSandbox({ dbPath: ':memory:', env: {} });
  });
  afterAll(() => sandbox.close());

  /**
   * Sends an entry, first the entries whose answers it uses (<TRANSACTION_ID:am-purchase>), each run
   * afresh for it, as each test of a client's suite makes its own purchase or card.
   */
  async function send(entry: LoadedEntry): Promise<{ answer: Record<string, unknown>; state: Record<string, string> }> {
    const state: Record<string, string> = {};
    for (const value of Object.values(entry.body)) {
      const ref = typeof value === 'string' ? PLACEHOLDER.exec(value)?.[2] : undefined;
      if (!ref) continue;
      const { answer: earlier } = await send(corpus.find((e) => e.id === ref)!);
      for (const [kind, field] of [
        ['TRANSACTION_ID', 'transactionID'],
        ['CARD_ID', 'cardID'],
        ['CARD_KEY', 'cardKey'],
      ] as const) {
        if (typeof earlier[field] === 'string') state[`<${kind}:${ref}>`] = earlier[field] as string;
      }
    }
    const response = await sandbox.gateway.handle(requestOf(entry, signed(entry, state)));
    return { answer: answerOf(entry, response.headers['content-type'], String(response.body)), state };
  }

  for (const entry of accepted.filter(
    (e) => e.expect && e.expect.outcome !== 'any' && !(e.id in outcomeNotReproduced),
  )) {
    it(`${entry.id}: ${entry.expect!.outcome}${entry.expect!.responseMessage ? ` "${entry.expect!.responseMessage}"` : ''}`, async () => {
      const { answer, state } = await send(entry);
      expectOutcome(entry, answer, state);
    });
  }

  // The sandbox answers in the real service's shapes: every field that a recorded answer of the same
  // operation and outcome carries is in the sandbox's answer to each corpus call of that operation,
  // but an echo of a field the call did not send (transactionReferenceID).
  const outcomeOf = (code: number) =>
    code < 0 ? 'refused' : code === 0 ? 'approved' : code === 10 ? 'pending' : 'declined';
  const recorded = new Map<string, { fields: Set<string>; from: string[] }>();
  for (const entry of answers) {
    const key = `${operationOf(entry).operationId} ${outcomeOf(Number(entry.body.responseCode))}`;
    const shape = recorded.get(key) ?? { fields: new Set<string>(), from: [] };
    for (const field of Object.keys(entry.body)) shape.fields.add(field);
    shape.from.push(entry.id);
    recorded.set(key, shape);
  }
  const calls = accepted.filter((e) => e.expect && e.expect.outcome !== 'any' && !(e.id in outcomeNotReproduced));
  for (const [key, shape] of recorded) {
    const [operationId, outcome] = key.split(' ');
    const ofIt = calls.filter((e) => operationOf(e).operationId === operationId);
    if (outcome === 'refused' || !ofIt.length) continue;
    it(`carries the fields of the real ${operationId} answers (${outcome}: ${shape.from.join(', ')})`, async () => {
      let compared = 0;
      for (const entry of ofIt) {
        const { answer, state } = await send(entry);
        if (outcomeOf(Number(answer.responseCode)) !== outcome) continue;
        compared++;
        const sent = signed(entry, state);
        const echoes = doc.components.schemas[operationOf(entry).result]?.properties ?? {};
        const unsentEcho = (field: string) => {
          const echo = echoes[field]?.['x-echo'];
          const source = typeof echo === 'string' ? echo : echo?.field;
          return source !== undefined && !echoes[field].$ref?.endsWith('/CustomEcho') && (sent[source] ?? '') === '';
        };
        expect(
          [...shape.fields].filter((f) => !(f in answer) && !unsentEcho(f)),
          `${entry.id}: ${JSON.stringify(answer)}`,
        ).toEqual([]);
      }
      expect(compared, `a call of ${operationId} answered ${outcome}`).toBeGreaterThan(0);
    });
  }
});

describe('the mock answers each request with its method’s result', () => {
  let mock: Awaited<ReturnType<typeof startMock>>;
  beforeAll(async () => {
    mock = await startMock({ port: 0, host: '127.0.0.1', prism: await sharedPrism() });
  });
  afterAll(() => mock.close());

  for (const entry of meantToPass) {
    it(entry.id, async () => {
      const op = operationOf(entry);
      const request = requestOf(entry, signed(entry));
      const response = await fetch(mock.url + request.url, {
        method: 'POST',
        headers: request.headers as Record<string, string>,
        body: request.body as string,
      });
      expect(response.status).toBe(op.status);
      if (op.resultType !== 'application/json')
        return expect(response.headers.get('content-type')).toContain(op.resultType);
      const text = await response.text();
      const fields = answerOf(entry, response.headers.get('content-type'), text);
      const v = validatorFor(`#/components/schemas/${op.result}`);
      // An XML answer is text: held to the schema as the JSON mode carries it (typed by the result's shape).
      const typed = form.readAnswer(text, op.shapes.result);
      expect(v(entry.wire === 'form' && 'ok' in typed ? typed.ok : fields), errorsOf(v)).toBe(true);
    });
  }
});

describe.each(answers.map((e) => [e.id, e] as const))('answer %s', (_id, entry) => {
  it('validates against its result schema (its refusal schema when responseCode is below zero)', () => {
    const op = operationOf(entry);
    const schema = Number(entry.body.responseCode) < 0 ? op.refusal : op.result;
    const v = validatorFor(`#/components/schemas/${schema}`);
    expect(v(entry.body), errorsOf(v)).toBe(true);
  });
});
