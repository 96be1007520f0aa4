// The pipeline's waits: a request whose account lookups, handler and unit of work (`transaction`)
// answer at once is answered in the same turn; where any answers with a promise, the rest runs when
// it settles. Either way the answer, the unit's commit or roll-back, and the metrics are the same: a
// backend's timing changes nothing a caller or a store sees (gateway.ts: pipeline, authenticated,
// concluded).
import { describe, expect, it } from 'vitest';
import {
  createGateway,
  type Account,
  type Accounts,
  type GatewayOptions,
  type GatewayResponse,
  type ResponseValidationMode,
} from '../../server-stubs/index.ts';
import { buildRequest, operation, requestExamples } from '../../contract/index.ts';
import { accounts, echoHandlers } from '../fixtures/example-handlers.ts';

const example = (id: string) => structuredClone(requestExamples(operation(id))[0]!.value);
// Every credential kind: merchant body credentials, a partner, an access token, header credentials.
const IDS = ['processCard', 'addMerchant', 'getSurcharge', 'createAgreement', 'getPayId'];
const requests = IDS.map((id) => buildRequest(operation(id), operation(id).request ? { body: example(id) } : {}));

const soon = <T>(value: T) => Promise.resolve().then(() => value);
/** The accounts, each lookup answering at once or with a promise as asked, and written down in the order made. */
const accountsOf = (promised: { find: boolean; token: boolean }, looked: string[]): Accounts => ({
  find: (kind, id) => {
    looked.push(`${kind} ${id}`);
    const found = accounts.find(kind, id) as Account | undefined;
    return promised.find ? soon(found) : found;
  },
  findByAccessToken: (token) => {
    looked.push(`token ${token}`);
    const found = accounts.findByAccessToken(token) as Account | undefined;
    return promised.token ? soon(found) : found;
  },
});

/** What the handler answers: the example, a refusal of its own, an answer the contract does not allow, or a failure. */
type Answer = 'example' | 'refusal' | 'violation' | 'throws';
const outcome = (answer: Answer) => (_op: unknown, result: Record<string, unknown>) => {
  if (answer === 'throws') throw new Error('the store is down');
  if (answer === 'refusal') return { responseCode: '-2', responseMessage: "Field 'cardID' is invalid: unknown card" };
  if (answer === 'violation') return { ...result, notInTheContract: 'x' };
  return result;
};
function handlersFor(answer: Answer, promised: boolean) {
  const handlers = echoHandlers(undefined, answer === 'example' ? undefined : outcome(answer)) as Record<
    string,
    (...args: unknown[]) => unknown
  >;
  if (!promised) return handlers;
  return Object.fromEntries(
    Object.entries(handlers).map(([id, h]) => [id, (...args: unknown[]) => soon(undefined).then(() => h(...args))]),
  );
}

/** A unit of work that records how each ended: committed, or rolled back by what the core threw. */
type Unit = 'none' | 'synchronous' | 'asynchronous' | 'waits for none';
function unitOf(kind: Unit, ended: string[]): GatewayOptions['transaction'] {
  if (kind === 'none') return undefined;
  if (kind === 'synchronous')
    return (work) => {
      try {
        const value = work();
        ended.push('commit');
        return value;
      } catch (error) {
        ended.push('rollback');
        throw error;
      }
    };
  if (kind === 'asynchronous')
    // A store's transaction: it waits for what its work answers, then commits or rolls back.
    return (work) =>
      soon(undefined)
        .then(() => work())
        .then(
          (value) => {
            ended.push('commit');
            return value;
          },
          (error) => {
            ended.push('rollback');
            throw error;
          },
        );
  // A synchronous unit that does not wait for its work's promise: the core waits for it.
  return (work) => {
    const value = work() as Promise<unknown> | undefined;
    ended.push('returned');
    return value === undefined ? undefined : void value.catch(() => ended.push('rollback'));
  };
}

interface Run {
  responses: GatewayResponse[];
  promised: boolean[];
  ended: string[];
  /** Each request's account lookups, in the order made. */
  looked: string[][];
  metrics: unknown;
}
/** Which lookups answer with a promise: none, the merchant's (find), the access token's, or both. */
type Promised = 'none' | 'find' | 'token' | 'both';
async function runAll(
  answer: Answer,
  backend: { accounts: Promised; handlers: boolean; unit: Unit },
  mode: ResponseValidationMode,
): Promise<Run> {
  const ended: string[] = [];
  const looked: string[] = [];
  const transaction = unitOf(backend.unit, ended);
  const g = createGateway({
    accounts: accountsOf(
      { find: ['find', 'both'].includes(backend.accounts), token: ['token', 'both'].includes(backend.accounts) },
      looked,
    ),
    handlers: handlersFor(answer, backend.handlers),
    responseValidation: mode,
    logger: false,
    ...(transaction ? { transaction } : {}),
  });
  const responses: GatewayResponse[] = [];
  const promised: boolean[] = [];
  const lookups: string[][] = [];
  for (const request of requests) {
    const before = looked.length;
    const response = g.respond(request);
    promised.push(response instanceof Promise);
    responses.push(await response);
    lookups.push(looked.slice(before));
  }
  return { responses, promised, ended, looked: lookups, metrics: { ...g.metrics } };
}

const BACKENDS = [
  { accounts: 'both', handlers: false, unit: 'none' },
  { accounts: 'find', handlers: false, unit: 'none' },
  { accounts: 'token', handlers: false, unit: 'none' },
  { accounts: 'none', handlers: true, unit: 'none' },
  { accounts: 'both', handlers: true, unit: 'none' },
  { accounts: 'none', handlers: false, unit: 'synchronous' },
  { accounts: 'none', handlers: true, unit: 'synchronous' },
  { accounts: 'none', handlers: false, unit: 'asynchronous' },
  { accounts: 'both', handlers: true, unit: 'asynchronous' },
  { accounts: 'none', handlers: true, unit: 'waits for none' },
] as const;

describe('a backend that answers with promises is answered as one that answers at once', () => {
  for (const answer of ['example', 'refusal', 'violation', 'throws'] as const) {
    for (const mode of ['error', 'log'] as const) {
      it(`a handler that answers ${answer === 'throws' ? 'by throwing' : `a ${answer}`}, response validation '${mode}'`, async () => {
        const at = await runAll(answer, { accounts: 'none', handlers: false, unit: 'none' }, mode);
        expect(at.promised.every((p) => !p)).toBe(true);
        // One lookup each: the account its credentials name (a merchant, a partner, an access token's).
        expect(at.looked.map((l) => l.length)).toEqual(requests.map(() => 1));
        if (answer === 'example')
          expect(at.responses.map((r) => Number(JSON.parse(String(r.body)).responseCode))).toEqual(
            requests.map(() => 0),
          );
        // The unit of work, everything synchronous: it commits what is answered and rolls back a
        // refusal, a violation that is not sent, a failure.
        const inUnit = await runAll(answer, { accounts: 'none', handlers: false, unit: 'synchronous' }, mode);
        expect(inUnit.promised.every((p) => !p)).toBe(true);
        expect(inUnit.responses).toEqual(at.responses);
        const rule = { example: 'commit', throws: 'rollback', violation: mode === 'log' ? 'commit' : 'rollback' }[
          answer as string
        ];
        // A handler's refusal rolls back; on the NPP paths (integer codes) the string -2 is a violation, sent in log mode.
        const expected = rule
          ? requests.map(() => rule)
          : IDS.map((id) => (mode === 'log' && ['createAgreement', 'getPayId'].includes(id) ? 'commit' : 'rollback'));
        expect(inUnit.ended).toEqual(expected);
        for (const backend of BACKENDS) {
          const run = await runAll(answer, backend, mode);
          const what = JSON.stringify(backend);
          expect(run.responses, what).toEqual(at.responses);
          expect(run.metrics, what).toEqual(at.metrics);
          // A promise exactly where something answered one.
          // The same lookups, in the same order, each made once.
          expect(run.looked, what).toEqual(at.looked);
          const waits = (request: number) =>
            backend.handlers ||
            backend.unit === 'asynchronous' ||
            backend.accounts === 'both' ||
            (backend.accounts === 'find' && at.looked[request]!.some((l) => !l.startsWith('token'))) ||
            (backend.accounts === 'token' && at.looked[request]!.some((l) => l.startsWith('token')));
          expect(run.promised, what).toEqual(requests.map((_, i) => waits(i)));
          // The unit commits what is answered, and rolls back a refusal, a violation not sent, a failure.
          // (A synchronous unit given a promise has ended before it settles: it commits whatever follows.)
          const settlesInside =
            backend.unit === 'asynchronous' || (backend.unit === 'synchronous' && !backend.handlers);
          if (settlesInside) expect(run.ended, what).toEqual(expected);
          if (backend.unit === 'synchronous' && backend.handlers)
            expect(run.ended, what).toEqual(requests.map(() => 'commit'));
          if (backend.unit === 'waits for none')
            expect(run.ended, what).toEqual(
              expected.flatMap((e) => (e === 'commit' ? ['returned'] : ['returned', 'rollback'])),
            );
        }
      });
    }
  }
});

describe("a handler's answer whose `then` throws when read (a strict Proxy)", () => {
  const strict = () =>
    new Proxy(
      {},
      {
        get: (_target, key) => {
          throw new Error(`no field ${String(key)}`);
        },
      },
    );
  const handlers = Object.fromEntries(Object.keys(echoHandlers() as object).map((id) => [id, strict]));
  // The first a form client (its refusal in XML), the second one whose codes are numbers (NPP).
  it.each([
    ['processCard', 'form'],
    ['getPayId', undefined],
  ] as const)(
    "%s (%s): is the handler's failure, answered -4 in the operation's own protocol and shape",
    async (id, wire) => {
      const logged: string[] = [];
      const gateway = createGateway({
        accounts,
        handlers: handlers as GatewayOptions['handlers'],
        logger: { error: (message: string) => logged.push(message), warn: () => {}, info: () => {} },
      });
      const op = operation(id);
      const response = await gateway.respond(
        buildRequest(op, { ...(op.request ? { body: example(id) } : {}), ...(wire ? { wire } : {}) }),
      );
      expect(logged).toEqual(['handler failed']);
      if (wire === 'form') expect(String(response.headers['content-type'])).toMatch(/xml/);
      else expect(JSON.parse(String(response.body)).responseCode).toBe(-4);
    },
  );
});

it("rolls a handler's refusal back by throwing into the unit of work an error made without a stack", async () => {
  // Nothing reads the roll-back's stack; capturing one walked the request's frames for every refusal
  // a handler answered (a contract run's refusals are most of its requests).
  const thrown: unknown[] = [];
  const g = createGateway({
    accounts,
    handlers: handlersFor('refusal', false),
    logger: false,
    transaction: (work) => {
      try {
        return work();
      } catch (error) {
        thrown.push(error);
        throw error;
      }
    },
  });
  const response = await g.respond(requests[0]!);
  expect(JSON.parse(String(response.body)).responseCode).toBe('-2');
  expect(thrown).toHaveLength(1);
  expect(thrown[0]).toBeInstanceOf(Error);
  expect((thrown[0] as Error).stack).not.toMatch(/\n\s+at /);
});
