// What the core does on a clean request that is the same for every request is done once, not per
// request (docs/BENCHMARKS.md, "where the time goes"): the contract's header names are lower-cased
// once per operation, a POST's verb is never upper-cased, and a JSON body without a NUL escape is not
// walked for a NUL. Counted, not timed: the calls are recorded while every operation's first example
// request is answered.
import { afterEach, describe, expect, it } from 'vitest';
import { createGateway, type GatewayRequest } from '../../server-stubs/index.ts';
import { operations } from '../../generated/operations.ts';
import { protocols } from '../../generated/protocols.ts';
import { buildRequest, requestExamples } from '../../contract/index.ts';
import { accounts, echoHandlers } from '../fixtures/example-handlers.ts';

const gateway = createGateway({ handlers: echoHandlers(), accounts, logger: false });

// Every operation answered in JSON, with its first example request, as an adapter hands it over
// (header names lower-cased, the body as bytes).
const requests = operations
  .filter((op) => op.resultType === protocols.canonical.answerType && !op.aliasOf)
  .map((op) => {
    const r = buildRequest(op, { body: op.request ? requestExamples(op)[0]!.value : undefined });
    const request: GatewayRequest = {
      verb: r.verb,
      url: r.url,
      headers: Object.fromEntries(Object.entries(r.headers).map(([name, value]) => [name.toLowerCase(), value])),
      body: r.body === undefined ? undefined : Buffer.from(r.body as string),
    };
    return { op, request };
  });

/** The header names the contract declares: credentials and header hashes. */
const headerNames = new Set(
  operations.flatMap((op) => [
    ...Object.values(op.headers ?? {}).filter((name): name is string => typeof name === 'string'),
    ...op.hashes.filter((use) => use.in === 'header').map((use) => use.name),
  ]),
);

type CaseMethod = 'toLowerCase' | 'toUpperCase';
const originals = { toLowerCase: String.prototype.toLowerCase, toUpperCase: String.prototype.toUpperCase };
const originalIncludes = String.prototype.includes;

/** The strings a case method is called on while `work` runs. */
async function calledOn(method: CaseMethod, work: () => Promise<void>): Promise<string[]> {
  const seen: string[] = [];
  const original = originals[method];
  String.prototype[method] = function (this: string) {
    seen.push(String(this));
    return original.call(this);
  };
  try {
    await work();
  } finally {
    String.prototype[method] = original;
  }
  return seen;
}

const answerAll = async () => {
  for (const { op, request } of requests) {
    const response = await gateway.respond(request);
    expect(response.status, op.operationId).toBe(op.status);
    expect(String(response.body), op.operationId).not.toMatch(/"responseCode":"?-/);
  }
};

/** Every value of a request outside its body: its headers', its path's segments and its query's. */
const outsideBodies = new Set(
  requests.flatMap(({ request }) => {
    const [path, query = ''] = request.url.split('?');
    return [
      ...Object.values(request.headers).filter((value): value is string => typeof value === 'string'),
      ...path!.split('/').map(decodeURIComponent),
      ...[...new URLSearchParams(query).values()],
    ];
  }),
);

afterEach(() => {
  String.prototype.includes = originalIncludes;
  String.prototype.toLowerCase = originals.toLowerCase;
  String.prototype.toUpperCase = originals.toUpperCase;
});

describe('the clean path does per operation what is the same for every request', () => {
  it('covers the operations that authenticate with headers', () => {
    expect(requests.filter(({ op }) => op.headers).length).toBeGreaterThan(10);
    expect(requests.filter(({ request }) => request.verb === 'POST').length).toBeGreaterThan(30);
  });

  it("lower-cases none of the contract's header names while answering (each operation's are made once)", async () => {
    await answerAll(); // the first answer of each operation may make what it keeps
    const lowered = await calledOn('toLowerCase', answerAll);
    expect(lowered.filter((text) => headerNames.has(text))).toEqual([]);
  });

  it('looks for a NUL in no value of a JSON body that holds no NUL escape (its headers and parameters are still looked at)', async () => {
    await answerAll();
    const looked: string[] = [];
    String.prototype.includes = function (this: string, search: string, position?: number) {
      if (search === '\u0000') looked.push(String(this));
      return originalIncludes.call(this, search, position);
    };
    try {
      await answerAll();
    } finally {
      String.prototype.includes = originalIncludes;
    }
    expect(looked.length).toBeGreaterThan(0); // the credential headers' values
    expect(looked.filter((text) => !outsideBodies.has(text))).toEqual([]);
  });

  it("upper-cases no request's verb: a POST is not compared as GET for the spec's files", async () => {
    await answerAll();
    const uppered = await calledOn('toUpperCase', answerAll);
    expect(uppered.filter((text) => text === 'POST' || text === 'GET')).toEqual([]);
  });
});
