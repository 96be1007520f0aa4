// The compatibility corpus against every artifact: what the real gateway's public clients send is
// accepted as the right method and form by the validators, routed to the right handler by the
// validating server, answered by the sandbox as the real gateway answered it, and answered by the mock
// with its method's result; every sample answer they read validates against its schema.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations, type ContractOperation } from '../../generated/operations.ts';
import { hashRecipes } from '../../generated/hash-recipes.ts';
import { startMock } from '../../mock/run.ts';
import { computeHash, legacyRecipe, type HashRecipe } from '../../runtime/signing.ts';
import { createSandbox, type RunningSandbox } from '../../sandbox/index.ts';
import { bodyErrors, withoutUnknownFields } from '../../server-stubs/core/request.ts';
import { methodPath } from '../../server-stubs/core/router.ts';
import { createGateway, type GatewayRequest } from '../../server-stubs/index.ts';
import { accounts, echoHandlers, type Call } from '../../scripts/lib/example-handlers.ts';
import { sandbox as creds } from '../../contract/requests.ts';
import { errorsOf, validatorFor } from '../support/contract.ts';
import { loadCorpus, type CorpusEntry } from './corpus.ts';

const corpus = loadCorpus();
const byId = new Map(corpus.map((e) => [e.id, e]));

/** The operation an entry is for: by operationId, or by its method on its (normalised) path. */
function operationOf(entry: CorpusEntry): ContractOperation {
  const named = methodPath(entry.path);
  const pathname = named ? named.path : entry.path.replace(/\/+$/, '') || '/';
  const op = operations.find((o) => o.operationId === entry.operation) ?? operations.find((o) => o.path === pathname && o.method === entry.operation);
  if (!op) throw new Error(`${entry.id}: no operation ${entry.operation} at ${entry.path}`);
  return op;
}

/** The body with the sandbox's credentials, state from earlier answers, and its hash in the client's form. */
function signed(entry: CorpusEntry, state: Record<string, string>): Record<string, unknown> {
  const op = operationOf(entry);
  const body: Record<string, unknown> = { ...entry.body };
  const fill: Record<string, string> = { '<MERCHANT_UUID>': creds.merchantUUID, '<PARTNER_UUID>': creds.partnerUUID, '<API_KEY>': creds.apiKey, ...state };
  for (const [name, value] of Object.entries(body)) if (typeof value === 'string' && value in fill) body[name] = fill[value];
  for (const use of op.hashes.filter((h) => h.in === 'body')) {
    if (body[use.name] !== '<HASH>') continue;
    const recipe = hashRecipes[use.recipe as keyof typeof hashRecipes] as HashRecipe;
    body[use.name] = computeHash(entry.signing === 'legacy' ? legacyRecipe(recipe)! : recipe, creds.passphrase, body);
  }
  return body;
}

const requestOf = (entry: CorpusEntry, body: Record<string, unknown>): GatewayRequest => ({
  verb: 'POST',
  url: entry.path,
  headers: { 'content-type': 'application/json', 'svc-api-version': '2.0' },
  body: JSON.stringify(body),
});

/** What the sandbox must answer, from what the real gateway answered the client. */
function expectOutcome(entry: CorpusEntry, answer: Record<string, unknown>) {
  const code = Number(answer.responseCode);
  const expected = entry.expect!;
  if (expected.responseCode !== undefined) expect(code, JSON.stringify(answer)).toBe(expected.responseCode);
  if (expected.outcome === 'approved') expect(code, JSON.stringify(answer)).toBe(0);
  if (expected.outcome === 'declined') expect(code, JSON.stringify(answer)).toBeGreaterThan(0);
  if (expected.outcome === 'refused') expect(code, JSON.stringify(answer)).toBeLessThan(0);
  if (expected.responseMessage !== undefined) expect(answer.responseMessage).toBe(expected.responseMessage);
}

const requests = corpus.filter((e) => e.kind === 'request');
const answers = corpus.filter((e) => e.kind === 'answer');

describe('the corpus', () => {
  it('holds requests and answers, each with a citation to a commit', () => {
    expect(requests.length).toBeGreaterThan(0);
    expect(answers.length).toBeGreaterThan(0);
    expect(new Set(corpus.map((e) => e.id)).size).toBe(corpus.length);
    for (const e of corpus) expect(e.citation, e.id).toMatch(/^[\w.-]+\/[\w.-]+@[0-9a-f]{40}:[^#\s]+(#\S+)?$/);
  });
});

describe.each(requests.map((e) => [e.id, e] as const))('request %s', (_id, entry) => {
  const op = operationOf(entry);
  // State an entry needs (a transaction to capture, a card to pay with) comes from its "after" entry.
  const stateless = signed(entry, { '<TRANSACTION_ID>': '1336-5d2e8f10-b600-11e6-b9c3-005056b209e0', '<CARD_ID>': 'KOCI10023982' });

  it(`the validators accept it as ${op.operationId} in one of its forms`, () => {
    const named = methodPath(entry.path);
    const body = named && stateless.method === undefined ? { ...stateless, method: named.method } : stateless;
    const failed = bodyErrors(op, withoutUnknownFields(op, body).body);
    expect(failed?.errors.map((e) => `${e.instancePath} ${e.message} ${JSON.stringify(e.params)}`) ?? []).toEqual([]);
  });

  it(`the validating server routes it to the ${op.aliasOf ?? op.operationId} handler`, async () => {
    const calls: Call[] = [];
    const gateway = createGateway({ handlers: echoHandlers(calls), accounts });
    const answer = JSON.parse(String((await gateway.handle(requestOf(entry, stateless))).body));
    expect(Number(answer.responseCode), JSON.stringify(answer)).toBeGreaterThanOrEqual(0);
    expect(calls.map((c) => c.operationId)).toEqual([op.aliasOf ?? op.operationId]);
  });
});

describe('the sandbox answers as the real gateway answered', () => {
  let sandbox: RunningSandbox;
  beforeAll(() => {
    sandbox = createSandbox({ dbPath: ':memory:', env: {} });
  });
  afterAll(() => sandbox.close());

  const send = async (entry: CorpusEntry, state: Record<string, string>) =>
    JSON.parse(String((await sandbox.gateway.handle(requestOf(entry, signed(entry, state)))).body)) as Record<string, unknown>;

  for (const entry of requests.filter((e) => e.expect)) {
    it(`${entry.id}: ${entry.expect!.outcome}${entry.expect!.responseCode !== undefined ? ` (${entry.expect!.responseCode})` : ''}`, async () => {
      const state: Record<string, string> = {};
      if (entry.after) {
        const first = await send(byId.get(entry.after)!, {});
        expect(Number(first.responseCode), `${entry.after}: ${JSON.stringify(first)}`).toBe(0);
        if (typeof first.transactionID === 'string') state['<TRANSACTION_ID>'] = first.transactionID;
        if (typeof first.cardID === 'string') state['<CARD_ID>'] = first.cardID;
      }
      expectOutcome(entry, await send(entry, state));
    });
  }
});

describe('the mock answers each request with its method’s result', () => {
  let mock: Awaited<ReturnType<typeof startMock>>;
  beforeAll(async () => {
    mock = await startMock({ port: 0, host: '127.0.0.1' });
  });
  afterAll(() => mock.close());

  for (const entry of requests) {
    it(entry.id, async () => {
      const op = operationOf(entry);
      const request = requestOf(entry, signed(entry, { '<TRANSACTION_ID>': '1336-5d2e8f10-b600-11e6-b9c3-005056b209e0', '<CARD_ID>': 'KOCI10023982' }));
      const response = await fetch(mock.url + request.url, { method: 'POST', headers: request.headers as Record<string, string>, body: request.body as string });
      expect(response.status).toBe(op.status);
      const v = validatorFor(`#/components/schemas/${op.result}`);
      expect(v(await response.json()), errorsOf(v)).toBe(true);
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
