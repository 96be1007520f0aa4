// The gateway core around the handlers: authentication of every credential kind, requests that
// cannot be read, answers that break the contract, the spec it serves, and the node:http adapter.
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createGateway,
  createNodeServer,
  normalised,
  type Accounts,
  type GatewayResponse,
  type ResponseValidationMode,
} from '../../server-stubs/index.ts';
import { doc } from '../support/contract.ts';
import { operations } from '../../generated/operations.ts';
import { accounts, echoHandlers, type Call } from '../fixtures/example-handlers.ts';
import {
  buildRequest,
  operation,
  requestExamples,
  SANDBOX_ACCESS_TOKEN,
  sandbox,
  signedBody,
} from '../../contract/index.ts';
import { chooseForm } from '../../runtime/forms.ts';
import { requestValidators } from '../../server-stubs/core/contract.ts';
import { refusalFor } from '../../server-stubs/core/refusals.ts';

const json = (r: GatewayResponse) => JSON.parse(String(r.body));
const calls: Call[] = [];
const gateway = createGateway({ handlers: echoHandlers(calls), accounts });
const example = (id: string, index = 0) => structuredClone(requestExamples(operation(id))[index]!.value);

async function expectRefused(
  request: ReturnType<typeof buildRequest>,
  code: number,
  message: string | RegExp,
  status = 200,
) {
  calls.length = 0;
  const response = await gateway.handle(request);
  const answer = json(response);
  expect(response.status).toBe(status);
  expect(Number(answer.responseCode)).toBe(code);
  expect(answer.responseMessage).toMatch(message);
  expect(calls).toHaveLength(0);
  return answer;
}

describe('authentication', () => {
  const DENIED = /^Invalid authentication credentials$/;

  it('merchant body credentials: a wrong apiKey, an unknown merchantUUID and a wrong hash are -1', async () => {
    const op = operation('processCapture');
    await expectRefused(buildRequest(op, { body: { ...example('processCapture'), apiKey: 'wrongkey' } }), -1, DENIED);
    await expectRefused(
      buildRequest(op, { body: { ...example('processCapture'), merchantUUID: 'ffffffffffff' } }),
      -1,
      DENIED,
    );
    await expectRefused(buildRequest(op, { body: { ...example('processCapture'), hash: '0'.repeat(32) } }), -1, DENIED);
    // The hash covers the amount: the same hash over another amount fails.
    await expectRefused(
      buildRequest(op, { body: { ...example('processCapture'), transactionAmount: '51.00' } }),
      -1,
      DENIED,
    );
  });

  it("a body hash in its recipe's legacy form (ActiveMerchant's) is accepted, unless the server refuses legacy hashes", async () => {
    const md5 = (s: string) => createHash('md5').update(s).digest('hex');
    const body = example('processCapture');
    const legacy = md5(
      (sandbox.passphrase + body.merchantUUID + body.transactionAmount + body.transactionCurrency).toLowerCase(),
    );
    calls.length = 0;
    const accepted = json(
      await gateway.handle(buildRequest(operation('processCapture'), { body: { ...body, hash: legacy } })),
    );
    expect(Number(accepted.responseCode)).toBeGreaterThanOrEqual(0);
    expect(calls).toHaveLength(1);
    const strict = createGateway({ handlers: echoHandlers(calls), accounts, legacyHashes: 'refuse' });
    calls.length = 0;
    const refused = json(
      await strict.handle(buildRequest(operation('processCapture'), { body: { ...body, hash: legacy } })),
    );
    expect(refused).toEqual({ responseCode: '-1', responseMessage: 'Invalid authentication credentials' });
    expect(calls).toHaveLength(0);
  });

  it('responseCode of a body-API refusal is a string, as the gateway sends it in JSON', async () => {
    const answer = await expectRefused(
      buildRequest(operation('processCapture'), { body: { ...example('processCapture'), apiKey: 'wrongkey' } }),
      -1,
      DENIED,
    );
    expect(answer.responseCode).toBe('-1');
  });

  it('partner body credentials: a wrong apiKey and a wrong hash are -1', async () => {
    const op = operation('addMerchant');
    await expectRefused(buildRequest(op, { body: { ...example('addMerchant'), apiKey: 'wrongkey' } }), -1, DENIED);
    await expectRefused(
      buildRequest(op, { body: { ...example('addMerchant'), merchantCompanyRegNumber: '99999999999' } }),
      -1,
      DENIED,
    );
  });

  it('secureHash (blacklist) and urlHash (direct debit) are checked with their own recipes', async () => {
    await expectRefused(
      buildRequest(operation('addBlacklistedCard'), {
        body: { ...example('addBlacklistedCard'), cardExpiryYear: '30' },
      }),
      -1,
      DENIED,
    );
    await expectRefused(
      buildRequest(operation('processDDebitAuth'), {
        body: { ...example('processDDebitAuth'), notifyURL: 'https://evil.test/' },
      }),
      -1,
      DENIED,
    );
  });

  it('an access token that stands for no merchant is -1', async () => {
    await expectRefused(
      buildRequest(operation('getSurcharge'), {
        body: { ...example('getSurcharge'), accessToken: 'expired-or-forged' },
      }),
      -1,
      DENIED,
    );
  });

  it('a card key alone (cardInfo has no hash) still needs the right apiKey', async () => {
    await expectRefused(
      buildRequest(operation('cardInfo'), { body: { ...example('cardInfo'), apiKey: 'wrongkey' } }),
      -1,
      DENIED,
    );
  });

  it('header credentials: wrong SVC-APIKEY or SVC-MESSAGEHASH are -1, a missing header is -3 naming it', async () => {
    const op = operation('createPayToPayment');
    const body = example('createPayToPayment');
    await expectRefused(buildRequest(op, { body, headers: { 'svc-apikey': 'wrongkey' } }), -1, DENIED);
    await expectRefused(buildRequest(op, { body, headers: { 'svc-messagehash': 'f'.repeat(64) } }), -1, DENIED);
    await expectRefused(buildRequest(op, { body, passphrase: 'not-the-passphrase' }), -1, DENIED);
    await expectRefused(
      buildRequest(op, { body, headers: { 'svc-merchantid': undefined } }),
      -3,
      "Header 'SVC-MERCHANTID' is required",
    );
    const answer = await expectRefused(buildRequest(op, { body, headers: { 'svc-merchantid': 'nobody' } }), -1, DENIED);
    expect(answer.responseCode).toBe(-1); // an integer on the NPP paths
  });

  it('the message hash covers the path: a hash made for another agreement fails', async () => {
    const op = operation('getPayToPaymentStatus');
    const signed = buildRequest(op, { params: { agreementIdentification: 'AGR-other' } });
    const replayed = buildRequest(op);
    await expectRefused(
      { ...replayed, headers: { ...replayed.headers, 'svc-messagehash': signed.headers['svc-messagehash'] } },
      -1,
      DENIED,
    );
  });

  it('payouts take the key in SVC-API-KEY (seed §4.7), not SVC-APIKEY', async () => {
    const op = operation('getPayoutTransactionStatus');
    await expectRefused(buildRequest(op, { headers: { 'svc-api-key': 'wrongkey' } }), -1, DENIED);
    await expectRefused(
      buildRequest(op, { headers: { 'svc-api-key': undefined, 'svc-apikey': sandbox.apiKey } }),
      -3,
      "Header 'SVC-API-KEY' is required",
    );
  });
});

describe('requests that cannot be read', () => {
  const op = operation('processCapture');
  const good = () => buildRequest(op, { body: example('processCapture') });

  it('malformed JSON is 400 with -2', async () => {
    await expectRefused(
      { ...good(), body: '{"method": "processCapture",' },
      -2,
      /^Request body is not JSON, though its Content-Type application\/json says it is: \S/,
      400,
    );
  });
  it("malformed JSON's refusal quotes none of the body: a secret in it is neither sent back nor logged", async () => {
    const logged: unknown[] = [];
    const logging = createGateway({
      handlers: echoHandlers(),
      accounts,
      logger: { info: (_m, f) => logged.push(f), warn() {}, error() {} },
    });
    const response = await logging.handle({ ...good(), body: '{"apiKey": s3cretApiKeyValue}' });
    expect(response.status).toBe(400);
    expect(json(response).responseMessage).toBe(
      "Request body is not JSON, though its Content-Type application/json says it is: Unexpected token 's'",
    );
    expect(JSON.stringify(logged)).not.toContain('s3cret');
  });
  it("the spec's malformedJson example is what the gateway answers for a trailing comma", async () => {
    const example = doc.components.responses.BadRequest.content['application/json'].examples.malformedJson.value;
    const response = await gateway.handle({ ...good(), body: '{"method": "processCapture",}' });
    // The example is the shared 400's, responseCode an integer; /post's refusals send it as a string.
    expect({ ...json(response), responseCode: Number(json(response).responseCode) }).toEqual(example);
  });
  it('a request without the version header is refused for it before its body is read, unless the body plainly is another format', async () => {
    // Read first, this body would be refused as malformed: the header's refusal costs no parse.
    const malformed = `{"method": "processCapture", "custom1": "${'x'.repeat(100_000)}`;
    await expectRefused(
      { ...good(), headers: { ...good().headers, 'svc-api-version': undefined }, body: malformed },
      -3,
      "Header 'SVC-API-VERSION' is required and must be 2.0",
      400,
    );
  });
  it('an XML or form body labelled application/json is 400, saying it is not JSON as its Content-Type says, with or without the version header', async () => {
    const xmlBody = '<?xml version="1.0"?><request><method>processCapture</method></request>';
    const formBody = new URLSearchParams(example('processCapture') as Record<string, string>).toString();
    for (const headers of [good().headers, { ...good().headers, 'svc-api-version': undefined }]) {
      await expectRefused(
        { ...good(), headers, body: xmlBody },
        -2,
        'Request body is not JSON, though its Content-Type application/json says it is: it reads as XML',
        400,
      );
      await expectRefused(
        { ...good(), headers: { ...headers, 'content-type': 'application/json; charset=utf-8' }, body: formBody },
        -2,
        'Request body is not JSON, though its Content-Type application/json says it is: it reads as form fields (name=value&…)',
        400,
      );
    }
  });
  it('another content type is 415, naming the two the path takes', async () => {
    await expectRefused(
      { ...good(), headers: { ...good().headers, 'content-type': 'text/plain' } },
      -2,
      "Header 'Content-Type' must be application/json or application/x-www-form-urlencoded",
      415,
    );
  });
  it('a missing or wrong SVC-API-VERSION is 400', async () => {
    await expectRefused(
      { ...good(), headers: { ...good().headers, 'svc-api-version': undefined } },
      -3,
      "Header 'SVC-API-VERSION' is required and must be 2.0",
      400,
    );
    await expectRefused(
      { ...good(), headers: { ...good().headers, 'svc-api-version': '1.0' } },
      -2,
      "Header 'SVC-API-VERSION' is invalid: must be 2.0",
      400,
    );
  });
  it("a body over every limit of its path is 413 naming its own operation's limit", async () => {
    // Past processBatch's 16 MiB too: the refusal named the path's largest limit, which processCapture never took.
    await expectRefused(
      { ...good(), body: JSON.stringify({ ...example('processCapture'), pad: 'x'.repeat(17 * 1024 * 1024) }) },
      -2,
      'Request body exceeds 1048576 bytes',
      413,
    );
  });
  it("a method's own limit holds on a path that allows more for another method (processBatch)", async () => {
    await expectRefused(
      { ...good(), body: JSON.stringify({ ...example('processCapture'), pad: 'x'.repeat(2 * 1024 * 1024) }) },
      -2,
      'Request body exceeds 1048576 bytes',
      413,
    );
  });
  it('an unknown path is 404 and a wrong verb 405 with Allow', async () => {
    await expectRefused({ ...good(), url: '/nowhere' }, -2, 'No operation at POST /nowhere', 404);
    calls.length = 0;
    const response = await gateway.handle({ ...good(), verb: 'GET' });
    expect(response.status).toBe(405);
    expect(response.headers.allow).toBe('POST');
  });
  it('a path its client wrote with a base URL that ends in a slash (//post/) is the path', async () => {
    for (const url of ['//post/', '///post']) {
      calls.length = 0;
      const answer = json(await gateway.handle({ ...good(), url }));
      expect(Number(answer.responseCode), url).toBeGreaterThanOrEqual(0);
      expect(calls.map((c) => c.operationId)).toEqual(['processCapture']);
    }
  });
  it('every templated path routes to its own operation, with or without a trailing slash, its parameters decoded', async () => {
    const templated = operations.filter((o) => o.path.includes('{') && !o.aliasOf);
    expect(templated.length).toBeGreaterThan(10);
    let encoded = 0;
    for (const o of templated) {
      const request = buildRequest(o, o.request ? { body: example(o.operationId) } : {});
      const params = Object.fromEntries(o.parameters.filter((p) => p.in === 'path').map((p) => [p.name, p.example]));
      const [path, search] = request.url.split('?') as [string, string | undefined];
      if (path !== decodeURIComponent(path)) encoded++;
      for (const url of [request.url, `${path}/${search ? `?${search}` : ''}`]) {
        calls.length = 0;
        const response = await gateway.handle({ ...request, url });
        expect(Number(json(response).responseCode), `${o.operationId} at ${url}`).toBeGreaterThanOrEqual(0);
        expect(calls.map((c) => [c.operationId, c.input.params])).toEqual([[o.operationId, params]]);
      }
      // One segment deeper is another path: no such path (404), or another operation's (405 here).
      calls.length = 0;
      const deeper = await gateway.handle({ ...request, url: `${path}/more${search ? `?${search}` : ''}` });
      expect([404, 405], `${o.operationId} one segment deeper`).toContain(deeper.status);
      expect(calls).toEqual([]);
    }
    // A PayID is an e-mail address: its @ travels percent-encoded and reaches the handler decoded.
    expect(encoded).toBeGreaterThan(0);
  });
  it('POST /token/{method} (x-method-in-path): the path names the method the body leaves out; a body naming another is refused', async () => {
    for (const id of ['tokenProcessCard', 'addCard', 'removeCard']) {
      const op = operation(id);
      const { method, ...body } = example(id);
      const request = { ...buildRequest(op, { body }), url: `/token/${method as string}/` };
      calls.length = 0;
      const answer = json(await gateway.handle(request));
      expect(Number(answer.responseCode), id).toBeGreaterThanOrEqual(0);
      expect(calls.map((c) => c.operationId)).toEqual([id]);
      expect(calls[0]!.input.body).toEqual({ ...body, method });
    }
    const mismatched = {
      ...buildRequest(operation('addCard'), { body: example('addCard') }),
      url: '/token/removeCard',
    };
    await expectRefused(mismatched, -2, "Field 'method' is invalid: must be removeCard, the method the path names");
    await expectRefused(
      { ...mismatched, url: '/token/processRefund' },
      -2,
      /^Field 'method' is invalid: must be one of /,
    );
  });

  it('POST /payframe takes the payframe forms of processCard and processAuth, answered by their handlers; card data is refused there', async () => {
    for (const [id, target] of [
      ['payframeProcessCard', 'processCard'],
      ['payframeProcessAuth', 'processAuth'],
    ] as const) {
      calls.length = 0;
      const answer = json(await gateway.handle(buildRequest(operation(id), { body: example(id) })));
      expect(Number(answer.responseCode)).toBeGreaterThanOrEqual(0);
      expect(calls.map((c) => c.operationId)).toEqual([target]);
    }
    const cardData = { ...buildRequest(operation('processCard'), { body: example('processCard') }), url: '/payframe' };
    await expectRefused(cardData, -3, /'payframe(Token|Key)' is required/);
  });

  it('currency and country codes are taken in either case and reach the handler upper-cased (x-normalise)', async () => {
    const body = { ...example('processCard'), transactionCurrency: 'aud', customerCountry: 'au' };
    calls.length = 0;
    const answer = json(await gateway.handle(buildRequest(operation('processCard'), { body })));
    expect(Number(answer.responseCode)).toBeGreaterThanOrEqual(0);
    expect(calls[0]!.input.body).toMatchObject({ transactionCurrency: 'AUD', customerCountry: 'AU' });
    await expectRefused(
      buildRequest(operation('processCard'), { body: { ...body, transactionCurrency: 'zzz' } }),
      -2,
      /transactionCurrency/,
    );
  });

  it('POST /post/{method}: the Direct API with the method in the path as well', async () => {
    calls.length = 0;
    const request = {
      ...buildRequest(operation('processCapture'), { body: example('processCapture') }),
      url: '/post/processCapture/',
    };
    expect(Number(json(await gateway.handle(request)).responseCode)).toBeGreaterThanOrEqual(0);
    expect(calls.map((c) => c.operationId)).toEqual(['processCapture']);
  });

  it('a missing method names the allowed values', async () => {
    const { method: _m, ...body } = example('processCapture');
    await expectRefused(
      buildRequest(op, { body }),
      -3,
      /^Field 'method' is required: one of processCard, processAuth, /,
    );
  });
  it('Get PayID takes no body, or the empty object the seed shows; anything else is refused', async () => {
    const getPayId = operation('getPayId');
    for (const body of [undefined, {}]) {
      calls.length = 0;
      const response = await gateway.handle(buildRequest(getPayId, { body }));
      expect(response.status).toBe(201);
      expect(calls).toHaveLength(1);
    }
    await expectRefused(buildRequest(getPayId, { body: { name: 'x' } }), -2, 'getPayId takes no request body', 201);
  });
  it('a body field no form declares is ignored and logged (x-unknown-fields: ignore), or refused naming it when the server opts in', async () => {
    const warnings: unknown[] = [];
    const tolerant = createGateway({
      handlers: echoHandlers(calls),
      accounts,
      logger: { warn: (...args) => warnings.push(args), error() {} },
    });
    const body = { ...example('processCapture'), surchargeFlag: '1', customerNote: 'leave at door' };
    calls.length = 0;
    const answer = json(await tolerant.handle(buildRequest(operation('processCapture'), { body })));
    expect(Number(answer.responseCode)).toBeGreaterThanOrEqual(0);
    expect(calls).toHaveLength(1);
    expect(Object.keys(calls[0]!.input.body as object)).not.toContain('surchargeFlag');
    expect(warnings).toEqual([
      ['unknown fields ignored', { operationId: 'processCapture', fields: 'surchargeFlag, customerNote' }],
    ]);
    const strict = createGateway({ handlers: echoHandlers(calls), accounts, unknownFields: 'refuse' });
    calls.length = 0;
    const refused = json(await strict.handle(buildRequest(operation('processCapture'), { body })));
    expect(refused.responseCode).toBe('-2');
    expect(refused.responseMessage).toMatch(/surchargeFlag/);
    expect(calls).toHaveLength(0);
  });

  it('a field another form of the method declares still decides the form: card data beside a payframe token is refused', async () => {
    const body = { ...example('processCard', 1), paymentCardNumber: '4564710000000004' };
    await expectRefused(buildRequest(operation('processCard'), { body }), -2, /./);
  });

  it('a query parameter the operation does not take is refused naming it', async () => {
    await expectRefused(
      buildRequest(operation('searchPayToPayments'), { query: { colour: 'red' } }),
      -2,
      "Parameter 'colour' is not allowed",
    );
    await expectRefused(
      buildRequest(operation('searchPayToPayments'), { query: { from: '22/11/2026' } }),
      -2,
      /^Parameter 'from' is invalid/,
    );
  });
});

describe('a method with several forms', () => {
  const withForms = operations.filter((o) => (o.forms?.length ?? 0) > 1);
  const CARD = ['paymentCardNumber', 'paymentCardExpiry', 'paymentCardName', 'paymentCardCSC'];
  const without = (body: Record<string, unknown>, names: readonly string[]) =>
    Object.fromEntries(Object.entries(body).filter(([k]) => !names.includes(k)));
  const fieldValue = (o: (typeof operations)[number], field: string) =>
    requestExamples(o).find((e) => field in e.value)?.value[field] ?? 'x';

  /**
   * The bodies to read, per operation: each form's example, each example less each field its form
   * requires (method aside: it names the operation), each example plus each field another form
   * declares and its own does not.
   */
  function bodiesOf(o: (typeof operations)[number]): [string, Record<string, unknown>][] {
    const bodies: [string, Record<string, unknown>][] = [];
    for (const { name, value } of requestExamples(o)) {
      const form = o.requestForms!.find((f) => requestValidators[f.schema]!(value))!;
      bodies.push([name, value]);
      for (const field of doc.components.schemas[form.schema].required as string[])
        if (field !== 'method') bodies.push([`${name} without ${field}`, without(value, [field])]);
      const others = new Set(o.requestForms!.flatMap((f) => f.accepts).filter((f) => !form.accepts.includes(f)));
      for (const field of others) bodies.push([`${name} with ${field}`, { ...value, [field]: fieldValue(o, field) }]);
    }
    return bodies;
  }

  it('the gateway refuses every body as the form chooseForm picks: client and server read it alike', async () => {
    expect(withForms.map((o) => o.operationId).sort()).toEqual(['processAuth', 'processCard', 'walletProcessCard']);
    let refused = 0;
    for (const o of withForms)
      for (const [name, body] of bodiesOf(o)) {
        const chosen = chooseForm(o.requestForms!, body).schema;
        // The body as the gateway reads it: signed for the chosen form, normalised.
        const sent = normalised(o, signedBody(o, body)) as Record<string, unknown>;
        const validate = requestValidators[chosen]!;
        const answer = json(await gateway.handle(buildRequest(o, { body, signBody: true })));
        if (validate(sent)) {
          expect(Number(answer.responseCode), `${o.operationId}: ${name}`).toBeGreaterThanOrEqual(0);
          continue;
        }
        refused++;
        // The refusal the chosen form's own schema gives: a field it requires, one it takes, or one it does not.
        const expected = refusalFor(validate.errors ?? []);
        expect(
          { code: Number(answer.responseCode), message: answer.responseMessage },
          `${o.operationId}: ${name} (chooseForm: ${chosen})`,
        ).toEqual({ code: expected.code, message: expected.message });
      }
    expect(refused).toBeGreaterThan(100);
  });

  it('processCard and processAuth without any card fields name paymentCardNumber (the first form)', async () => {
    for (const id of ['processCard', 'processAuth'])
      await expectRefused(
        buildRequest(operation(id), { body: without(example(id), CARD) }),
        -3,
        "Field 'paymentCardNumber' is required",
      );
  });

  it('a payframe body with an accessToken and without its token and key is read as the payframe form: payframeToken', async () => {
    // The payframe form declares accessToken (seed §4.1) without requiring it: no 3-D Secure form's own field.
    const op = operation('processCard');
    const body = {
      ...without(example('processCard', 1), ['payframeToken', 'payframeKey']),
      accessToken: SANDBOX_ACCESS_TOKEN,
    };
    await expectRefused(buildRequest(op, { body, signBody: true }), -3, "Field 'payframeToken' is required");
    expect(chooseForm(op.requestForms!, body).schema).toBe('ProcessCardWithPayframe');
  });
});

describe('answers held to the contract', () => {
  const run = async (mode: ResponseValidationMode, change: (result: any) => unknown) => {
    const errors: string[] = [];
    const g = createGateway({
      accounts,
      responseValidation: mode,
      logger: { warn() {}, error: (message, fields) => errors.push(`${message} ${JSON.stringify(fields)}`) },
      handlers: echoHandlers([], (op, result) => (op.operationId === 'processCapture' ? change(result) : result)),
    });
    const response = await g.handle(buildRequest(operation('processCapture'), { body: example('processCapture') }));
    return { response, errors, metrics: g.metrics };
  };

  it('in development a missing result field is a 500 naming the field', async () => {
    const { response, metrics } = await run('error', ({ authCode: _a, ...rest }) => rest);
    expect(response.status).toBe(500);
    expect(json(response)).toEqual({
      responseCode: '-4',
      responseMessage: "Response of processCapture violates the contract: Field 'authCode' is required (CaptureResult)",
    });
    expect(metrics.violations).toBe(1);
  });

  it('a field the contract does not have is named too (the capture result carries only its fields)', async () => {
    const { response } = await run('error', (r) => ({ ...r, transactionAmount: '30.00' }));
    expect(json(response).responseMessage).toBe(
      "Response of processCapture violates the contract: Field 'transactionAmount' is not in the contract (CaptureResult)",
    );
  });

  it("a field that breaks its rule is named with the rule in the spec's words, never a regular expression", async () => {
    const { response } = await run('error', (r) => ({ ...r, authSettledDate: '29/11/2016' }));
    expect(json(response).responseMessage).toMatch(
      /^Response of processCapture violates the contract: Field 'authSettledDate' is invalid: must be [^^$\\]+ \(CaptureResult\)$/,
    );
  });

  it('a wrong customHash from the handler is caught; a missing one is added from its recipe', async () => {
    const wrong = await run('error', (r) => ({ ...r, customHash: 'a'.repeat(32) }));
    expect(json(wrong.response).responseMessage).toContain("Field 'customHash' is not what recipe custom gives");
    const added = await run('error', (r) => r);
    expect(json(added.response).customHash).toMatch(/^[0-9a-f]{32}$/);
  });

  it('in production it is logged and counted (log) or refused without detail (refuse)', async () => {
    const logged = await run('log', ({ authCode: _a, ...rest }) => rest);
    expect(logged.response.status).toBe(200);
    expect(json(logged.response).authCode).toBeUndefined();
    expect(logged.metrics.violations).toBe(1);
    expect(logged.errors[0]).toContain("Field 'authCode' is required");
    const refused = await run('refuse', ({ authCode: _a, ...rest }) => rest);
    expect(refused.response.status).toBe(500);
    expect(json(refused.response)).toEqual({ responseCode: '-4', responseMessage: 'Internal gateway error' });
  });

  it('an unmasked card number never leaves, whatever the mode', async () => {
    for (const mode of ['error', 'log', 'refuse'] as const) {
      const { response } = await run(mode, (r) => ({ ...r, responseMessage: 'Approved for 4564710000000004' }));
      expect(response.status).toBe(500);
      expect(String(response.body)).not.toContain('4564710000000004');
    }
  });

  it('the card-number guard flags card numbers, not timestamps or references that pass Luhn', async () => {
    const { findCardNumber } = await import('../../server-stubs/index.ts');
    for (const pan of [
      '4564710000000004',
      '5123456789012346',
      '376000000000006',
      '36430000000007',
      '2223000048400011',
      '6011000990139424',
    ])
      expect(findCardNumber(`x ${pan} y`), pan).toBe(true);
    // 1795000000004 is a millisecond timestamp that passes the Luhn check (it starts with 1). A run of
    // digits is one number from where it begins: a hex hash's run that begins with 0 holds no card.
    for (const text of [
      'CT-1795000000004',
      '456471XXXXXX0004',
      '1336-20be3569-b600-11e6',
      '4564710000000005',
      '12345678901234567890',
      '"8f1d04564710000000004e5"',
    ])
      expect(findCardNumber(text), text).toBe(false);
    // Letters glued on do not hide one (issue 39), nor digits written after it.
    for (const text of [
      '"4564710000000004"',
      'card 4564710000000004.',
      'pf-4564710000000004',
      'c4564710000000004f',
      '45647100000000040000000',
    ])
      expect(findCardNumber(text), text).toBe(true);
  });

  it('a handler that throws is a -4 with no detail, and is counted', async () => {
    const g = createGateway({
      accounts,
      handlers: {
        processCapture: () => {
          throw new Error('database is down at 10.0.0.5');
        },
      },
    });
    const response = await g.handle(buildRequest(operation('processCapture'), { body: example('processCapture') }));
    expect(response.status).toBe(500);
    expect(json(response)).toEqual({ responseCode: '-4', responseMessage: 'Internal gateway error' });
    expect(g.metrics.failures).toBe(1);
  });

  it('an operation without a handler answers -4 naming it', async () => {
    const g = createGateway({ accounts, handlers: {} });
    const response = await g.handle(buildRequest(operation('processCapture'), { body: example('processCapture') }));
    expect(json(response).responseMessage).toBe('processCapture is not implemented by this server');
  });
});

describe('synchronous and asynchronous backends', () => {
  // Every credential kind: merchant body credentials, a partner, an access token, header credentials.
  const ids = ['processCard', 'addMerchant', 'getSurcharge', 'createAgreement', 'getPayId'];
  const requests = ids.map((id) => buildRequest(operation(id), operation(id).request ? { body: example(id) } : {}));
  const later = <T>(value: T) => new Promise<T>((resolve) => setTimeout(() => resolve(value), 1));
  const asyncAccounts: Accounts = {
    find: (kind, id) => later(undefined).then(() => accounts.find(kind, id)),
    findByAccessToken: (token) => later(undefined).then(() => accounts.findByAccessToken(token)),
  };
  const asyncHandlers = Object.fromEntries(
    Object.entries(echoHandlers()).map(([id, h]) => [
      id,
      (...args: unknown[]) => later((h as (...a: unknown[]) => unknown)(...args)),
    ]),
  );

  it('respond() answers in the same turn when the accounts and handlers do, with what handle() answers', async () => {
    for (const request of requests) {
      const now = gateway.respond(request);
      expect(now).not.toBeInstanceOf(Promise);
      expect(now).toEqual(await gateway.handle(request));
      expect(Number(json(now as GatewayResponse).responseCode)).toBeGreaterThanOrEqual(0);
    }
  });

  it('with promised accounts and handlers it answers a promise of the same response', async () => {
    const g = createGateway({ accounts: asyncAccounts, handlers: asyncHandlers });
    for (const request of requests) {
      const later = g.respond(request);
      expect(later).toBeInstanceOf(Promise);
      expect(await later).toEqual(gateway.respond(request));
    }
    // A refusal found before any lookup needs no promise, whatever the backend.
    expect(g.respond({ ...requests[0]!, headers: {} })).not.toBeInstanceOf(Promise);
    const denied = await g.respond(
      buildRequest(operation('processCard'), { body: { ...example('processCard'), apiKey: 'wrongkey' } }),
    );
    expect(json(denied)).toEqual({ responseCode: '-1', responseMessage: 'Invalid authentication credentials' });
  });

  it('a handler whose promise rejects is a -4 with no detail, and is counted', async () => {
    const g = createGateway({
      accounts: asyncAccounts,
      handlers: { processCard: () => Promise.reject(new Error('timeout talking to 10.0.0.5')) },
    });
    const response = await g.respond(requests[0]!);
    expect(response.status).toBe(500);
    expect(json(response)).toEqual({ responseCode: '-4', responseMessage: 'Internal gateway error' });
    expect(g.metrics.failures).toBe(1);
  });

  it('an account lookup that fails is answered -4 by handle() (and logged), and so by the node:http adapter', async () => {
    const g = createGateway({
      accounts: { ...asyncAccounts, find: () => Promise.reject(new Error('accounts store is down')) },
      handlers: echoHandlers(),
    });
    const answered = await g.handle(requests[0]!);
    expect([answered.status, JSON.parse(String(answered.body)).responseCode]).toEqual([500, '-4']);
    const server = createNodeServer(g);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const r = requests[0]!;
      const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}${r.url}`, {
        method: r.verb,
        headers: r.headers as Record<string, string>,
        body: r.body as string,
      });
      expect(response.status).toBe(500);
      expect(await response.json()).toEqual({ responseCode: '-4', responseMessage: 'Internal gateway error' });
    } finally {
      server.close();
    }
  });
});

describe('the spec and the node:http adapter', () => {
  let base: string;
  const server = createNodeServer(gateway);
  beforeAll(async () => {
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('serves the bundled spec at /openapi.json and /openapi.yaml, and the docs at /docs', async () => {
    const spec = await (await fetch(`${base}/openapi.json`)).json();
    expect(spec.info.version).toBe(doc.info.version);
    const yaml = await fetch(`${base}/openapi.yaml`);
    expect(yaml.headers.get('content-type')).toBe('application/yaml');
    expect(await yaml.text()).toContain('openapi: 3.1.0');
    const docs = await fetch(`${base}/docs`);
    expect(docs.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(await docs.text()).toContain('__redoc_definition');
  });

  it('answers a real HTTP request end to end', async () => {
    const request = buildRequest(operation('processCapture'), { body: example('processCapture') });
    const response = await fetch(`${base}${request.url}`, {
      method: request.verb,
      headers: request.headers as Record<string, string>,
      body: request.body as string,
    });
    expect(response.status).toBe(200);
    expect((await response.json()).responseCode).toBe('0');
  });

  it('stops reading a body over the path limit and answers 413', async () => {
    const request = buildRequest(operation('createPayToPayment'), { body: example('createPayToPayment') });
    const response = await fetch(`${base}${request.url}`, {
      method: 'POST',
      headers: request.headers as Record<string, string>,
      body: 'x'.repeat(2 * 1024 * 1024),
    });
    expect(response.status).toBe(413);
  });
});
