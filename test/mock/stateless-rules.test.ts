// The mock keeps every rule that needs no state, as the sandbox keeps it, in both wire modes: a wrong,
// missing or unknown credential or hash refused with the sandbox's refusal word for word; echoed fields
// as sent (the card masked as the sandbox masks it), sums that add up, result hashes computed from
// their recipes; a card number in a free-text field refused; access tokens it issues taken back,
// others refused; an operator's accounts known.
// Each request is sent to the mock and to an in-process sandbox, and the two answers compared.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashRecipes } from '../../generated/hash-recipes.ts';
import { buildRequest, operation, requestExamples, sandbox as sandboxCreds } from '../../contract/index.ts';
import { startMock } from '../../mock/run.ts';
import { sharedPrism } from '../support/shared-servers.ts';
import { computeHash } from '../../runtime/signing.ts';
import { createSandbox } from '../../sandbox/index.ts';
import { maskCardNumber, protocols, type GatewayRequest } from '../../server-stubs/index.ts';

const operator = {
  kind: 'merchant' as const,
  id: 'operator-merchant-1',
  apiKey: 'opkey123',
  passphrase: 'operator-pass',
};

let mock: Awaited<ReturnType<typeof startMock>>;
let sandbox: Awaited<ReturnType<typeof createSandbox>>;
beforeAll(async () => {
  sandbox = await createSandbox({ dbPath: ':memory:', env: { ...process.env } });
  mock = await startMock({ port: 0, host: '127.0.0.1', accounts: [operator], prism: await sharedPrism() });
});
afterAll(async () => {
  await mock?.close();
  await sandbox?.close();
});

interface Read {
  status: number;
  type: string;
  answer: Record<string, unknown>;
}

const readBack = (status: number, type: string, text: string): Read => {
  const read = protocols.answeredIn(type)?.readAnswer(text);
  if (!read || !('ok' in read)) throw new Error(`HTTP ${status} ${type}: ${text.slice(0, 300)}`);
  return { status, type: type.split(';')[0]!, answer: read.ok };
};

async function toMock(request: GatewayRequest): Promise<Read> {
  const response = await fetch(mock.url + request.url, {
    method: request.verb,
    headers: Object.fromEntries(Object.entries(request.headers).filter(([, v]) => v !== undefined)) as Record<
      string,
      string
    >,
    body: (request.body as string | undefined) ?? null,
    signal: AbortSignal.timeout(20_000),
  });
  return readBack(response.status, response.headers.get('content-type') ?? '', await response.text());
}

async function toSandbox(request: GatewayRequest): Promise<Read> {
  const response = await sandbox.gateway.handle(request);
  return readBack(response.status, response.headers['content-type'] ?? '', String(response.body));
}

const card = operation('processCard');
const cardExample = requestExamples(card)[0]!.value;
const wires = ['json', 'form'] as const;

describe('the mock refuses credentials and hashes as the sandbox does', () => {
  const cases: Record<string, (body: Record<string, unknown>) => Record<string, unknown>> = {
    'a wrong hash': (b) => ({ ...b, hash: '0'.repeat(32) }),
    'no hash': ({ hash: _, ...b }) => b,
    'a wrong api key': (b) => ({ ...b, apiKey: 'wrongkey' }),
    'an unknown merchant': (b) => ({ ...b, merchantUUID: 'nosuchmerchant1' }),
  };
  for (const wire of wires)
    for (const [name, change] of Object.entries(cases))
      it(`${name} (${wire})`, async () => {
        const request = buildRequest(card, { body: change(cardExample), wire });
        const [fromMock, fromSandbox] = [await toMock(request), await toSandbox(request)];
        expect(fromMock).toEqual(fromSandbox);
        expect(Number(fromMock.answer.responseCode)).toBeLessThan(0);
      });

  for (const wire of wires)
    it(`a card number in a free-text field, in any spelling, refused -2 naming it (${wire})`, async () => {
      for (const [field, text] of [
        ['custom1', 'card 4564 7100 0000 0004'],
        ['transactionProduct', 'x4564-7100-0000-0004y'],
        ['customerName', 'Jane 4564.7100.0000.0004'],
      ]) {
        const request = buildRequest(card, { body: { ...cardExample, [field!]: text }, signBody: true, wire });
        const [fromMock, fromSandbox] = [await toMock(request), await toSandbox(request)];
        expect(fromMock, field).toEqual(fromSandbox);
        expect(String(fromMock.answer.responseMessage)).toContain(`'${field}'`);
      }
    });

  it('a wrong message hash header, a wrong api key header and an unknown merchant header (the NPP paths)', async () => {
    const op = operation('listPayIds');
    for (const headers of [
      { 'svc-messagehash': 'f'.repeat(64) },
      { 'svc-apikey': 'wrongkey' },
      { 'svc-merchantid': 'nosuchmerchant1' },
    ]) {
      const request = buildRequest(op, { headers });
      const [fromMock, fromSandbox] = [await toMock(request), await toSandbox(request)];
      expect(fromMock, JSON.stringify(headers)).toEqual(fromSandbox);
      expect(fromMock.answer.responseCode).toBe(-1);
    }
  });

  it('an access token it did not issue is refused -1; the one its getAccessToken answers is taken', async () => {
    const surcharge = operation('getSurcharge');
    const body = requestExamples(surcharge)[0]!.value;
    const forged = buildRequest(surcharge, { body: { ...body, accessToken: 'not-issued-by-the-gateway' } });
    const [fromMock, fromSandbox] = [await toMock(forged), await toSandbox(forged)];
    expect(fromMock).toEqual(fromSandbox);
    expect(fromMock.answer.responseCode).toBe('-1');
    const token = String(
      (
        await toMock(
          buildRequest(operation('getAccessToken'), {
            body: requestExamples(operation('getAccessToken'))[0]!.value,
          }),
        )
      ).answer.accessToken,
    );
    const taken = await toMock(buildRequest(surcharge, { body: { ...body, accessToken: token } }));
    expect(taken.answer.responseCode).toBe('0');
    // Another mock's token for another merchant's id is no token: its proof is keyed by the passphrase.
    const [prefix, , proof] = token.split('.');
    const other = `${prefix}.${Buffer.from(operator.id).toString('base64url')}.${proof}`;
    expect((await toMock(buildRequest(surcharge, { body: { ...body, accessToken: other } }))).answer.responseCode).toBe(
      '-1',
    );
  });

  it("knows the operator's accounts (--accounts): signed with the account's passphrase taken, with another refused", async () => {
    const own = { ...cardExample, merchantUUID: operator.id, apiKey: operator.apiKey };
    const signed = buildRequest(card, { body: own, signBody: true, passphrase: operator.passphrase });
    expect((await toMock(signed)).answer.responseCode).toBe('0');
    const otherPassphrase = buildRequest(card, { body: own, signBody: true, passphrase: sandboxCreds.passphrase });
    expect((await toMock(otherPassphrase)).answer).toEqual({
      responseCode: '-1',
      responseMessage: 'Invalid authentication credentials',
    });
  });
});

describe("the mock's answer keeps the rules of the request it answers", () => {
  const sent = {
    ...cardExample,
    transactionAmount: '12.34',
    transactionReferenceID: 'order-4711',
    custom1: 'gift wrap',
    custom3: 'third',
    paymentCardNumber: '5123450000000008',
  };
  for (const wire of wires)
    it(`echoes what was sent, masks the card as the sandbox masks it, signs customHash (${wire})`, async () => {
      const request = buildRequest(card, { body: sent, signBody: true, wire });
      const [fromMock, fromSandbox] = [await toMock(request), await toSandbox(request)];
      expect(fromMock.type).toBe(fromSandbox.type);
      expect(fromMock.answer).toMatchObject({
        responseCode: '0',
        transactionAmount: '12.34',
        transactionReferenceID: 'order-4711',
        custom1: 'gift wrap',
        custom3: 'third',
        paymentCardNumber: maskCardNumber('5123450000000008'),
      });
      // Every echoed field as the sandbox answers it (custom2, not sent, too).
      for (const field of ['transactionReferenceID', 'custom1', 'custom2', 'custom3'])
        expect(fromMock.answer[field], field).toEqual(fromSandbox.answer[field]);
      const recipe = card.resultHashes.find((h) => h.name === 'customHash')!;
      const read = fromMock.answer;
      expect(read.customHash).toBe(
        computeHash(hashRecipes[recipe.recipe], sandboxCreds.passphrase, [{ customHash: undefined }, read, sent]),
      );
    });

  it('a total is the sum of its parts, the amount as sent (getSurcharge)', async () => {
    const surcharge = operation('getSurcharge');
    const token = String(
      (
        await toMock(
          buildRequest(operation('getAccessToken'), {
            body: requestExamples(operation('getAccessToken'))[0]!.value,
          }),
        )
      ).answer.accessToken,
    );
    const body = { ...requestExamples(surcharge)[0]!.value, accessToken: token, transactionAmount: '12.34' };
    const { answer } = await toMock(buildRequest(surcharge, { body }));
    expect(answer.transactionAmount).toBe('12.34');
    const cents = (v: unknown) => Math.round(Number(v) * 100);
    expect(cents(answer.totalAmount)).toBe(cents(answer.transactionAmount) + cents(answer.surchargeAmount));
  });
});
