// The Prism mock, started as `npm run mock` starts it: every operation's example request answered
// with that method's own result; Prefer picks another example; invalid requests refused by Prism;
// proxy mode reporting what a wrong upstream breaks.
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../generated/operations.ts';
import { scenarios } from '../../generated/scenarios.ts';
import { startMock } from '../../mock/run.ts';
import { sharedPrism } from '../support/shared-servers.ts';
import { accounts, echoHandlers } from '../fixtures/example-handlers.ts';
import { buildRequest, requestExamples } from '../../contract/index.ts';
import { createGateway, createNodeServer } from '../../server-stubs/index.ts';
import { errorsOf, readYaml, validatorFor } from '../support/contract.ts';
import { writeSample } from '../support/samples.ts';

const routes = readYaml('generated/mock.json').routes as { operationId: string; refusalExample: string }[];

async function send(base: string, request: ReturnType<typeof buildRequest>, extra: Record<string, string> = {}) {
  const response = await fetch(base + request.url, {
    method: request.verb,
    headers: { ...(request.headers as Record<string, string>), ...extra },
    body: (request.body as string | undefined) ?? null,
  });
  return {
    status: response.status,
    type: response.headers.get('content-type') ?? '',
    bytes: new Uint8Array(await response.arrayBuffer()),
  };
}
const json = (bytes: Uint8Array) => JSON.parse(new TextDecoder().decode(bytes));

describe('npm run mock', () => {
  let mock: Awaited<ReturnType<typeof startMock>>;
  const log: string[] = [];
  beforeAll(async () => {
    mock = await startMock({
      port: 0,
      host: '127.0.0.1',
      prism: await sharedPrism(),
      onRefusal: (request, message) => log.push(`refused: ${request}: ${message}`),
      onViolation: (request, violations) => log.push(`${request}: ${violations.length} violations`),
    });
  });

  it("logs a refused request in one short line, the gateway's words (not Prism's list of every branch)", async () => {
    log.length = 0;
    const capture = operations.find((o) => o.operationId === 'processCapture')!;
    const body = { ...requestExamples(capture)[0]!.value, method: 'noSuchMethod' };
    const refused = await send(mock.url, buildRequest(capture, { body }));
    expect(json(refused.bytes).responseCode).toBe('-2');
    expect(log).toEqual([`refused: POST /post: ${json(refused.bytes).responseMessage}`]);
    expect(log[0]!.length).toBeLessThan(1000);
    log.length = 0;
    const card = operations.find((o) => o.operationId === 'processCard')!;
    await send(
      mock.url,
      buildRequest(card, { body: { ...requestExamples(card)[0]!.value, paymentCardExpiry: '02/29' } }),
    );
    expect(log).toEqual(["refused: POST /post: Field 'paymentCardExpiry' is invalid: must be MMYY, for example 0229"]);
    writeSample('mock-refusal', log[0]!);
  });
  afterAll(() => mock.close());

  for (const op of operations) {
    const examples = op.request ? requestExamples(op) : [{ name: 'no body', value: undefined }];
    for (const example of examples) {
      it(`${op.operationId} (${example.name}) gets its own result, with no special header`, async () => {
        const answer = await send(mock.url, buildRequest(op, { body: example.value }));
        expect(answer.status).toBe(op.status);
        if (op.resultType === 'application/zip') {
          expect(answer.type).toBe('application/zip');
          return expect([...answer.bytes.slice(0, 2)]).toEqual([0x50, 0x4b]);
        }
        if (op.resultType === 'text/csv')
          return expect(new TextDecoder().decode(answer.bytes)).toMatch(/^transactionReferenceID,/);
        const v = validatorFor(`#/components/schemas/${op.result}`);
        expect(v(json(answer.bytes)), errorsOf(v)).toBe(true);
      });
    }
  }

  it("a client's own Prefer header wins: it can ask for a refusal example", async () => {
    for (const id of ['processCapture', 'getPayId', 'createPayToPayment']) {
      const op = operations.find((o) => o.operationId === id)!;
      const request = buildRequest(op, { body: op.request ? requestExamples(op)[0]!.value : undefined });
      const answer = await send(mock.url, request, {
        prefer: `example=${routes.find((r) => r.operationId === id)!.refusalExample}`,
      });
      const v = validatorFor(`#/components/schemas/${op.refusal}`);
      expect(v(json(answer.bytes)), errorsOf(v)).toBe(true);
      expect(Number(json(answer.bytes).responseCode)).toBeLessThan(0);
    }
  });

  it('a body field no form declares is ignored, as the gateway ignores it (x-unknown-fields)', async () => {
    const op = operations.find((o) => o.operationId === 'processCapture')!;
    const answer = await send(
      mock.url,
      buildRequest(op, { body: { ...requestExamples(op)[0]!.value, descriptorPhone: '0400000000' } }),
    );
    expect(answer.status).toBe(200);
    const v = validatorFor(`#/components/schemas/${op.result}`);
    expect(v(json(answer.bytes)), errorsOf(v)).toBe(true);
    // One holding a card number is refused, as the sandbox refuses it (runtime/card-fields.ts).
    const leaking = await send(
      mock.url,
      buildRequest(op, { body: { ...requestExamples(op)[0]!.value, descriptorPhone: '5555555555554444' } }),
    );
    expect(json(leaking.bytes)).toMatchObject({
      responseCode: '-2',
      responseMessage: "Field 'descriptorPhone' is invalid: must not hold a card number",
    });
  });

  it("an invalid request is answered as the gateway answers it: HTTP 200, -2 naming the field; Prism's violations in sl-violations", async () => {
    const op = operations.find((o) => o.operationId === 'processCapture')!;
    const body = { ...requestExamples(op)[0]!.value, captureAmount: '30' };
    const request = buildRequest(op, { body });
    const response = await fetch(mock.url + request.url, {
      method: 'POST',
      headers: request.headers as Record<string, string>,
      body: request.body as string,
    });
    expect(response.status).toBe(200);
    const answer = await response.json();
    expect(answer.responseCode).toBe('-2');
    expect(answer.responseMessage).toContain("'captureAmount'");
    const v = validatorFor(`#/components/schemas/${op.refusal}`);
    expect(v(answer), errorsOf(v)).toBe(true);
    // Prism's own finding, passed on.
    expect(response.headers.get('sl-violations')).toContain('captureAmount');
  });

  it("honours a scenario's outcome (x-sandbox-scenarios) on the example, in the header or a form client's base URL; refuses a fault", async () => {
    const card = operations.find((o) => o.operationId === 'processCard')!;
    const body = requestExamples(card)[0]!.value;
    const declined = await send(mock.url, buildRequest(card, { body }), { [scenarios.header]: 'insufficientFunds' });
    expect(json(declined.bytes)).toMatchObject({
      responseCode: '5',
      responseMessage: 'Insufficient funds',
      authCode: '',
      authResponseCode: '51',
    });
    const form = buildRequest(card, { body, wire: 'form' });
    const response = await fetch(`${mock.url}${scenarios.pathPrefix}/expired${form.url}/`, {
      method: 'POST',
      headers: form.headers as Record<string, string>,
      body: form.body as string,
    });
    expect(await response.text()).toMatch(
      /<responseCode>4<\/responseCode><responseMessage>Card has expired<\/responseMessage>/,
    );
    const pending = operations.find((o) => o.operationId === 'getPayoutTransactionStatus')!;
    const status = json((await send(mock.url, buildRequest(pending), { [scenarios.header]: 'pending' })).bytes);
    expect(status.result.payouts.at(-1).status).toBe('pending');
    expect(
      json((await send(mock.url, buildRequest(card, { body }), { [scenarios.header]: 'internalError' })).bytes),
    ).toEqual({
      responseCode: '-4',
      responseMessage: 'Internal gateway error (scenario internalError): nothing was processed',
    });
    expect(
      json((await send(mock.url, buildRequest(card, { body }), { [scenarios.header]: 'answerLost' })).bytes),
    ).toEqual({
      responseCode: '-2',
      responseMessage:
        "Header 'SVC-SANDBOX-SCENARIO' is invalid: the mock keeps no state: the fault answerLost is the sandbox's (docs/SCENARIOS.md)",
    });
    // Named in a form client's base URL, the refusal names the base URL.
    const inPath = await fetch(`${mock.url}${scenarios.pathPrefix}/answerLost${form.url}/`, {
      method: 'POST',
      headers: form.headers as Record<string, string>,
      body: form.body as string,
    });
    expect(await inPath.text()).toContain(
      `<responseMessage>The scenario in the base URL (${scenarios.pathPrefix}/NAME/) is invalid: the mock keeps no state: the fault answerLost is the sandbox's (docs/SCENARIOS.md)</responseMessage>`,
    );
    // An outcome in the header and a fault in the base URL: the refusal names the base URL alone.
    const both = await fetch(`${mock.url}${scenarios.pathPrefix}/answerLost${form.url}/`, {
      method: 'POST',
      headers: { ...(form.headers as Record<string, string>), [scenarios.header]: 'declined' },
      body: form.body as string,
    });
    expect(await both.text()).toContain(
      `<responseMessage>The scenario in the base URL (${scenarios.pathPrefix}/NAME/) is invalid: the mock keeps no state: the fault answerLost is the sandbox's (docs/SCENARIOS.md)</responseMessage>`,
    );
  });

  it('answers a missing field -3, an unknown method and malformed JSON at once, as the sandbox does', async () => {
    const op = operations.find((o) => o.operationId === 'processCapture')!;
    const { captureAmount: _, ...missing } = requestExamples(op)[0]!.value as Record<string, unknown>;
    const sandbox = createGateway({ accounts, handlers: echoHandlers() });
    const bodies = [
      JSON.stringify(missing),
      JSON.stringify({ method: 'noSuchMethod' }),
      '{"method": "processCard",',
      '',
    ];
    for (const body of bodies) {
      const headers = { 'content-type': 'application/json', 'SVC-API-VERSION': '2.0' };
      const response = await fetch(`${mock.url}/post`, {
        method: 'POST',
        headers,
        body,
        signal: AbortSignal.timeout(5000),
      });
      const expected = await sandbox.handle({
        verb: 'POST',
        url: '/post',
        headers: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v])),
        body,
      });
      expect({ body, status: response.status, answer: await response.text() }).toEqual({
        body,
        status: expected.status,
        answer: expected.body,
      });
      expect(Number(JSON.parse(expected.body as string).responseCode)).toBeLessThan(0);
    }
  });
});

describe('npm run mock, asked before Prism listens', () => {
  // The front takes its port first; a request in that moment (CI's first checks) waits for Prism.
  it('answers a request sent while Prism is still starting, not a 502', async () => {
    const op = operations.find((o) => o.operationId === 'processCard')!;
    let early: Promise<Awaited<ReturnType<typeof send>>> | undefined;
    let url = '';
    const mock = await startMock({
      port: 0,
      host: '127.0.0.1',
      onPrismStart: () => {
        early = send(url, buildRequest(op, { body: requestExamples(op)[0]!.value }));
      },
      onListening: (bound: string) => (url = bound),
    });
    try {
      expect((await early!).status).toBe(200);
    } finally {
      await mock.close();
    }
  });
});

describe('npm run mock -- --proxy URL', () => {
  const upstream = createNodeServer(
    createGateway({
      accounts,
      responseValidation: 'log', // the upstream lets its own drift through: the proxy must catch it
      handlers: echoHandlers(undefined, (op, result) =>
        op.operationId === 'processCapture' ? { ...result, authCode: 731357431 } : result,
      ),
    }),
  );
  const reported: string[] = [];
  let proxy: Awaited<ReturnType<typeof startMock>>;
  beforeAll(async () => {
    upstream.listen(0, '127.0.0.1');
    await once(upstream, 'listening');
    proxy = await startMock({
      port: 0,
      host: '127.0.0.1',
      proxy: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`,
      onViolation: (request, violations) =>
        reported.push(...violations.map((v) => `${request} ${v.location.join('.')} ${v.message}`)),
    });
  });
  afterAll(async () => {
    await proxy.close();
    await new Promise((resolve) => upstream.close(resolve));
  });

  it('passes a right answer through and reports the wrong one', async () => {
    const surcharge = operations.find((o) => o.operationId === 'getSurcharge')!;
    const good = await send(proxy.url, buildRequest(surcharge, { body: requestExamples(surcharge)[0]!.value }));
    expect(good.status).toBe(200);
    expect(reported).toEqual([]);
    const capture = operations.find((o) => o.operationId === 'processCapture')!;
    const bad = await send(proxy.url, buildRequest(capture, { body: requestExamples(capture)[0]!.value }));
    expect(bad.status).toBe(500);
    expect(JSON.stringify(json(bad.bytes))).toContain('authCode');
    expect(reported).toContain('POST /post response.body.authCode Response body property authCode must be string');
    expect(new Set(reported).size).toBe(reported.length);
  });
});
