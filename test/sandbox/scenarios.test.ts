// Scenarios per request (x-sandbox-scenarios, docs/SCENARIOS.md): a request names an outcome of its
// operation or a fault of its connection, in the header or in the base URL's path (the form clients),
// and only it gets it; what the sandbox stores is what it answered, and each fault stores or not as the
// spec says. Over HTTP, with the clients' own fetch.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildRequest, operation, requestExamples } from '../../contract/index.ts';
import { scenarios } from '../../generated/scenarios.ts';
import { createControlClient } from '../../sandbox/control-client.ts';
import { card, clientOf, customer, startSandbox, type TestSandbox } from './support.ts';

let t: TestSandbox;
beforeAll(async () => {
  t = await startSandbox({ control: true });
});
afterAll(() => t.close());

const HEADER = scenarios.header;
const example = (id: string) => structuredClone(requestExamples(operation(id))[0]!.value);
const stored = async (reference: string) =>
  Number((await t.sandbox.store.get('SELECT count(*) AS n FROM transactions WHERE reference = ?', reference))!.n);
/** A signed purchase with this reference, sent with the scenario header (or to a base URL with the prefix). */
function purchase(reference: string, scenario?: string, options: { wire?: 'form'; prefix?: string } = {}) {
  const r = buildRequest(operation('processCard'), {
    body: { ...example('processCard'), transactionReferenceID: reference },
    signBody: true,
    ...(options.wire ? { wire: options.wire } : {}),
    ...(scenario ? { headers: { [HEADER]: scenario } } : {}),
  });
  return fetch(`${t.base}${options.prefix ?? ''}${r.url}`, {
    method: r.verb,
    headers: r.headers as Record<string, string>,
    body: r.body as string,
    signal: AbortSignal.timeout(30_000),
  });
}
/** How the request ended for the client: its answer, or the error fetch gave. */
async function ending(sent: Promise<Response>): Promise<{ status?: number; body?: string; error?: string }> {
  try {
    const response = await sent;
    return { status: response.status, body: await response.text() };
  } catch (e) {
    const error = e as Error & { cause?: { code?: string } };
    return { error: `${error.name} ${error.cause?.code ?? error.message}` };
  }
}
const withScenario = (scenario: string) => clientOf(t.sandbox, t.base, { headers: { [HEADER]: scenario } });

describe('an outcome asked for in the header', () => {
  it('is answered and stored as the bank would have it: queryCard finds the decline', async () => {
    const response = await purchase('SC-EXPIRED', 'expired');
    expect(response.headers.get(HEADER)).toBe('expired');
    const answer = await response.json();
    expect(answer).toMatchObject({
      responseCode: '4',
      responseMessage: 'Card has expired',
      authCode: '',
      authResponseCode: '54',
    });
    const found = (await t.client.queryCard({ transactionReferenceID: 'SC-EXPIRED' })) as Record<string, unknown>;
    expect(found).toMatchObject({ transactionStatus: 'declined', transactionResponseCode: '4' });
  });

  it('only for that request: the same purchase without it is approved', async () => {
    expect((await (await purchase('SC-PLAIN')).json()).responseCode).toBe('0');
  });

  it('through the typed client, every card outcome of the spec, each with its network code', async () => {
    for (const outcome of scenarios.operations.processCard.outcomes) {
      const answer = (await withScenario(outcome.name).processCard({
        transactionAmount: '10.00',
        transactionCurrency: 'AUD',
        transactionProduct: 'Scenario',
        ...customer,
        ...card.visa,
      })) as Record<string, unknown>;
      expect([answer.responseCode, answer.responseMessage, answer.authResponseCode], outcome.name).toEqual([
        String(outcome.responseCode),
        outcome.responseMessage,
        outcome.set?.authResponseCode,
      ]);
    }
  });

  it("3D Secure: a checkEnrollment answered not enrolled opens a session checkTDSAuth refuses; enrolled, an Amex's session authenticates", async () => {
    const { accessToken } = (await t.client.getAccessToken({
      transactionAmount: '10.00',
      transactionCurrency: 'AUD',
    })) as { accessToken: string };
    const enrol = (scenario: string, number: string) =>
      withScenario(scenario).checkEnrollment({
        accessToken,
        transactionAmount: '10.00',
        transactionCurrency: 'AUD',
        paymentCardNumber: number,
        paymentCardExpiry: '0629',
        paymentCardName: 'Jane Citizen',
        returnURL: 'https://merchant.test/3ds',
      } as never) as Promise<Record<string, string>>;
    const visa = await enrol('notEnrolled', '4564710000000004');
    expect(visa).toMatchObject({ responseCode: '0', enrolled: 'N' });
    expect(visa.acsURL).toBeUndefined();
    const cardData = {
      paymentCardNumber: '4564710000000004',
      paymentCardExpiry: '0629',
      paymentCardName: 'Jane Citizen',
    };
    const refused = (await t.client.checkTDSAuth({
      accessToken,
      threeDSToken: visa.threeDSToken,
      ...cardData,
    } as never)) as {
      responseCode: string;
    };
    expect(refused.responseCode).toBe('-2');
    const amex = await enrol('enrolled', '376000000000006');
    expect(amex.enrolled).toBe('Y');
    const auth = (await withScenario('rejected').checkTDSAuth({
      accessToken,
      threeDSToken: amex.threeDSToken,
      ...cardData,
    } as never)) as Record<string, string>;
    expect(auth).toMatchObject({ responseCode: '0', threeDSStatus: 'R', threeDSEci: '07' });
    expect(auth.threeDSCavv).toBeUndefined();
  });

  it('a name the operation does not have is refused -2 naming the header and the names it takes; nothing stored', async () => {
    const answer = await (await purchase('SC-BAD', 'pending')).json();
    expect(answer.responseCode).toBe('-2');
    expect(answer.responseMessage).toMatch(
      /^Header 'SVC-SANDBOX-SCENARIO' is invalid: 'pending' is neither an outcome of processCard \(approved, .*\) nor a fault \(latency, .*\)$/,
    );
    for (const [bad, why] of [
      ['latency=0', 'latency=0: its milliseconds must be a whole number from 1 to 20000'],
      ['expired,noReply', 'names two outcomes (expired, noReply); one at most'],
      ['answerLost=3', 'the fault answerLost takes no value'],
    ])
      expect((await (await purchase(`SC-BAD-${bad}`, bad)).json()).responseMessage).toBe(
        `Header 'SVC-SANDBOX-SCENARIO' is invalid: ${why}`,
      );
    expect(await stored('SC-BAD')).toBe(0);
  });

  it('a request refused before processing is refused as usual: the scenario is not applied', async () => {
    const r = buildRequest(operation('processCard'), {
      body: { ...example('processCard'), transactionReferenceID: 'SC-HASH', hash: '0'.repeat(32) },
      headers: { [HEADER]: 'answerLost' },
    });
    const response = await fetch(t.base + r.url, {
      method: 'POST',
      headers: r.headers as never,
      body: r.body as string,
    });
    expect(response.headers.get(HEADER)).toBeNull();
    expect((await response.json()).responseCode).toBe('-1');
  });

  it("leaves the account's forced outcome (the control API's, shared) to the next request that asks for none", async () => {
    const control = createControlClient({
      baseUrl: t.base,
      accountId: t.sandbox.seed.merchantUUID,
      apiKey: t.sandbox.seed.apiKey,
    });
    await control.forceNextOutcome({ operationId: 'processCard', outcome: 'noReply' });
    expect((await (await purchase('SC-OWN', 'approved')).json()).responseCode).toBe('0');
    expect((await (await purchase('SC-NEXT')).json()).responseCode).toBe('3');
  });
});

describe('the form clients, which cannot add a header', () => {
  it('reach it through the base URL: /_scenario/NAME/ before the path, answered in XML', async () => {
    const response = await purchase('SC-FORM', undefined, { wire: 'form', prefix: '/_scenario/insufficientFunds' });
    const xml = await response.text();
    expect(xml).toMatch(
      /^<\?xml[^>]*>\n<mwResponse><responseCode>5<\/responseCode><responseMessage>Insufficient funds</,
    );
    expect(xml).toContain('<authResponseCode>51</authResponseCode>');
    expect(await stored('SC-FORM')).toBe(1);
  });

  it('a name the operation does not have, put in the base URL, is refused naming the base URL, not the header; nothing stored', async () => {
    const message = async (reference: string, scenario: string | undefined, prefix: string) => {
      const xml = await (await purchase(reference, scenario, { wire: 'form', prefix })).text();
      return /<responseMessage>([^<]*)<\/responseMessage>/.exec(xml)?.[1];
    };
    expect(await message('SC-FORM-BAD', undefined, '/_scenario/pending')).toMatch(
      /^The scenario in the base URL \(\/_scenario\/NAME\/\) is invalid: 'pending' is neither an outcome of processCard \(approved, .*\) nor a fault \(latency, .*\)$/,
    );
    // Both ways at once: the part at fault is named, or both when only their combination is wrong.
    expect(await message('SC-FORM-BAD2', 'expired', '/_scenario/latency=0')).toBe(
      'The scenario in the base URL (/_scenario/NAME/) is invalid: latency=0: its milliseconds must be a whole number from 1 to 20000',
    );
    expect(await message('SC-FORM-BAD3', 'pending', '/_scenario/expired')).toMatch(
      /^Header 'SVC-SANDBOX-SCENARIO' is invalid: 'pending' is neither/,
    );
    expect(await message('SC-FORM-BAD4', 'expired', '/_scenario/noReply')).toBe(
      "Header 'SVC-SANDBOX-SCENARIO' with the scenario in the base URL (/_scenario/NAME/) is invalid: names two outcomes (expired, noReply); one at most",
    );
    for (const reference of ['SC-FORM-BAD', 'SC-FORM-BAD2', 'SC-FORM-BAD3', 'SC-FORM-BAD4'])
      expect(await stored(reference)).toBe(0);
  });

  it("and the card outcomes through the amount, as the real service's 102.33", async () => {
    for (const outcome of scenarios.operations.processCard.outcomes.filter((o) => o.amount)) {
      const r = buildRequest(operation('processCard'), {
        body: { ...example('processCard'), transactionAmount: outcome.amount },
        signBody: true,
        wire: 'form',
      });
      const xml = await (
        await fetch(t.base + r.url, { method: 'POST', headers: r.headers as never, body: r.body as string })
      ).text();
      expect(xml, outcome.name).toContain(
        `<responseCode>${outcome.responseCode}</responseCode><responseMessage>${outcome.responseMessage}</responseMessage>`,
      );
    }
  });
});

describe('faults of the connection, each storing what the spec says it stores', () => {
  const cases: [string, string, (e: Awaited<ReturnType<typeof ending>>) => void][] = [
    ['resetBeforeCommit', 'a reset, nothing stored', (e) => expect(e.error).toBe('TypeError ECONNRESET')],
    ['resetAfterCommit', 'a reset after the commit', (e) => expect(e.error).toBe('TypeError ECONNRESET')],
    ['answerLost', 'the connection closed with no answer', (e) => expect(e.error).toBe('TypeError UND_ERR_SOCKET')],
    ['truncated', 'half an answer', (e) => expect(e.error).toBe('TypeError UND_ERR_SOCKET')],
    ['internalError', 'the -4, nothing stored', (e) => expect(JSON.parse(e.body!).responseCode).toBe('-4')],
  ];
  for (const [name, what, check] of cases)
    it(`${name}: ${what}`, async () => {
      const reference = `SC-F-${name}`;
      check(await ending(purchase(reference, name)));
      const stores = name === 'internalError' ? false : scenarios.faults[name as 'answerLost'].stores;
      expect(await stored(reference)).toBe(stores ? 1 : 0);
    });

  it('truncated: the head says the whole length, the body is cut', async () => {
    const response = await purchase('SC-F-TRUNC2', 'truncated');
    expect(response.status).toBe(200);
    expect(Number(response.headers.get('content-length'))).toBeGreaterThan(100);
    await expect(response.text()).rejects.toThrow();
  });

  it('unavailable=7: HTTP 503 with Retry-After 7, the -4 in the caller’s wire format, nothing stored', async () => {
    const json = await purchase('SC-F-503', 'unavailable=7');
    expect([json.status, json.headers.get('retry-after')]).toEqual([503, '7']);
    expect((await json.json()).responseCode).toBe('-4');
    const form = await purchase('SC-F-503', 'unavailable', { wire: 'form' });
    expect([form.status, form.headers.get('retry-after')]).toEqual([503, '1']);
    expect(await form.text()).toMatch(/<responseCode>-4<\/responseCode>/);
    expect(await stored('SC-F-503')).toBe(0);
  });

  it('noAnswer: stored, and no answer until the client gives up', async () => {
    const e = await ending(
      (async () => {
        const r = buildRequest(operation('processCard'), {
          body: { ...example('processCard'), transactionReferenceID: 'SC-F-HOLD' },
          signBody: true,
          headers: { [HEADER]: 'noAnswer' },
        });
        const until = async () => {
          while (!(await stored('SC-F-HOLD'))) await new Promise((resolve) => setTimeout(resolve, 20));
        };
        const controller = new AbortController();
        // The client gives up once the purchase is stored: it has waited long enough to know none is coming.
        void until().then(() => setTimeout(() => controller.abort(), 200));
        return fetch(t.base + r.url, {
          method: 'POST',
          headers: r.headers as never,
          body: r.body as string,
          signal: controller.signal,
        });
      })(),
    );
    expect(e.error).toMatch(/^AbortError/);
    expect(await stored('SC-F-HOLD')).toBe(1);
  });

  it('latency: the answer is held while another request is answered', async () => {
    const slow = purchase('SC-F-SLOW', 'expired,latency=3000');
    let slowDone = false;
    void slow.then(() => (slowDone = true));
    while (!(await stored('SC-F-SLOW'))) await new Promise((resolve) => setTimeout(resolve, 20));
    expect((await (await purchase('SC-F-FAST')).json()).responseCode).toBe('0');
    expect(slowDone).toBe(false);
    const answer = await slow;
    expect(answer.headers.get(HEADER)).toBe('expired,latency=3000');
    expect((await answer.json()).responseCode).toBe('4');
  });
});

describe('an operator turns them off', () => {
  it('PGW_SANDBOX_SCENARIOS=off: a request that asks for one is refused -2, never served as if it had not', async () => {
    const off = await startSandbox({ env: { PGW_SANDBOX_SCENARIOS: 'off' } });
    try {
      const r = buildRequest(operation('processCard'), {
        body: { ...example('processCard'), transactionReferenceID: 'SC-OFF' },
        signBody: true,
        headers: { [HEADER]: 'expired' },
      });
      const answer = await (
        await fetch(off.base + r.url, { method: 'POST', headers: r.headers as never, body: r.body as string })
      ).json();
      expect(answer).toEqual({
        responseCode: '-2',
        responseMessage:
          "Header 'SVC-SANDBOX-SCENARIO' is invalid: scenarios are turned off on this sandbox (PGW_SANDBOX_SCENARIOS=off)",
      });
      // A form client's base URL is named as the place it put the scenario.
      const form = buildRequest(operation('processCard'), {
        body: { ...example('processCard'), transactionReferenceID: 'SC-OFF' },
        signBody: true,
        wire: 'form',
      });
      const xml = await (
        await fetch(`${off.base}/_scenario/expired${form.url}`, {
          method: 'POST',
          headers: form.headers as never,
          body: form.body as string,
        })
      ).text();
      expect(xml).toContain(
        '<responseMessage>The scenario in the base URL (/_scenario/NAME/) is invalid: scenarios are turned off on this sandbox (PGW_SANDBOX_SCENARIOS=off)</responseMessage>',
      );
      expect(
        Number((await off.sandbox.store.get("SELECT count(*) AS n FROM transactions WHERE reference = 'SC-OFF'"))!.n),
      ).toBe(0);
    } finally {
      await off.close();
    }
  });
});
