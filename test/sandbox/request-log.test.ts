// The team's own request log (GET /_sandbox/requests, sandbox/request-log.ts): a team whose hash is
// wrong reads, with nothing but its merchantUUID and api key, which check failed, by which recipe and
// over which text (the passphrase a placeholder), computes the hash itself and is approved, without
// the operator. Nothing in the log signs a request: no hash sent or expected, nothing derived from the
// passphrase, no card number. Each account sees its own lines only; the filters and the follow work.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildRequest, operation, requestExamples } from '../../contract/index.ts';
import { hashRecipes } from '../../generated/hash-recipes.ts';
import { scenarios } from '../../generated/scenarios.ts';
import { computeHash, PASSPHRASE_MD5_PLACEHOLDER } from '../../runtime/signing.ts';
import { ControlError, createControlClient, type ControlClient } from '../../sandbox/control-client.ts';
import { widgetsMerchant } from '../support/requests.ts';
import { KEEP } from '../../sandbox/request-log.ts';
import { merchantControl, type ControlledSandbox, startSandboxWithControl } from './support.ts';

let t: ControlledSandbox;
let log: ControlClient;
beforeAll(async () => {
  t = await startSandboxWithControl();
  log = t.control;
});
afterAll(() => t.close());

const md5 = (text: string) => createHash('md5').update(text).digest('hex');
const example = (id: string) => structuredClone(requestExamples(operation(id))[0]!.value) as Record<string, unknown>;
async function send(
  id: string,
  body: Record<string, unknown>,
  options: { headers?: Record<string, string>; wire?: 'form' } = {},
) {
  const r = buildRequest(operation(id), { body, ...options });
  const response = await fetch(t.base + r.url, { method: r.verb, headers: r.headers as never, body: r.body as string });
  return response.text();
}
/** Everything a line of the log says, as one text. */
const everything = (value: unknown) => JSON.stringify(value);

describe('a team fixes a wrong hash from its own log, without the operator', () => {
  it('reads the check, the recipe and the text hashed, computes the hash and is approved', async () => {
    const { merchantUUID, passphrase } = t.sandbox.seed;
    // The team's first try: md5 over the fields as it sends them, in its own case, with no lowering.
    const body: Record<string, unknown> = { ...example('processCard'), transactionReferenceID: 'LOG-FIX-1' };
    body.hash = md5(`${md5(passphrase)}${merchantUUID}${body.transactionAmount}${body.transactionCurrency}`);
    expect(JSON.parse(await send('processCard', body)).responseCode).toBe('-1');

    const [line] = (await log.requests({ operation: 'processCard', outcome: 'refused', latest: 1 })).requests;
    expect(line).toMatchObject({
      operation: 'processCard',
      responseCode: '-1',
      outcome: 'refused',
      errorCode: 'PGW_ERR_CREDENTIALS',
      explanation: {
        check: 'hash',
        field: 'hash',
        recipe: 'transaction',
        formula: expect.stringMatching(
          /^md5\(lower\(md5\(passphrase\) \+ merchantUUID \+ transactionAmount \+ transactionCurrency\)\)/,
        ),
        preimage: `${PASSPHRASE_MD5_PLACEHOLDER}${merchantUUID}10.00aud`,
      },
    });
    // What the team does with it: its own md5(passphrase) where the placeholder is, md5 of that.
    const fixed = md5(line!.explanation!.preimage!.replace(PASSPHRASE_MD5_PLACEHOLDER, md5(passphrase)));
    const answer = JSON.parse(await send('processCard', { ...body, transactionReferenceID: 'LOG-FIX-2', hash: fixed }));
    expect(answer.responseCode).toBe('0');
  });

  it('a header hash (SVC-MESSAGEHASH): the canonical text it was computed over, keyed by a placeholder', async () => {
    const r = buildRequest(operation('listPayIds'), { headers: { 'svc-messagehash': 'f'.repeat(64) } });
    await fetch(t.base + r.url, { method: r.verb, headers: r.headers as never });
    const [line] = (await log.requests({ operation: 'listPayIds', latest: 1 })).requests;
    expect(line!.explanation).toEqual({
      check: 'hash',
      field: 'SVC-MESSAGEHASH',
      recipe: 'message',
      formula: expect.any(String),
      preimage: '{}',
      key: '{passphrase}',
    });
  });

  it('a form client is explained the same way', async () => {
    const body = { ...example('processCard'), transactionReferenceID: 'LOG-FORM', hash: '0'.repeat(32) };
    expect(await send('processCard', body, { wire: 'form' })).toContain('<responseCode>-1</responseCode>');
    const [line] = (await log.requests({ latest: 1 })).requests;
    expect(line).toMatchObject({ wire: 'form', explanation: { check: 'hash', recipe: 'transaction' } });
  });
});

describe('nothing in the log signs a request', () => {
  it('no hash sent or expected, no passphrase or anything made from it, no api key, no card number', async () => {
    const { merchantUUID, passphrase, apiKey } = t.sandbox.seed;
    const blacklisted = { ...example('queryBlacklistedCard'), secureHash: '1'.repeat(32) };
    await send('queryBlacklistedCard', blacklisted);
    const lines = (await log.requests({ latest: 500 })).requests;
    const text = everything(lines);
    const signedBody = { ...example('processCard'), merchantUUID };
    for (const secret of [
      passphrase,
      md5(passphrase),
      apiKey,
      '0'.repeat(32),
      '1'.repeat(32),
      computeHash(hashRecipes.transaction, passphrase, signedBody),
      computeHash(hashRecipes.blacklist, passphrase, blacklisted),
    ])
      expect(text).not.toContain(secret);
    expect(text).not.toMatch(/(?<![0-9A-Za-z])[2-6]\d{12,18}(?![0-9A-Za-z])/);
    // The blacklist recipe hashes the card number: its text shows it masked.
    // The blacklist recipe hashes the card number: its text shows it masked (lowered, as the recipe lowers it).
    expect(lines.at(-1)!.explanation!.preimage).toBe(
      `${PASSPHRASE_MD5_PLACEHOLDER}${merchantUUID}516320xxxxxx00161229`,
    );
    expect(text).not.toContain('5163200000000016');
  });

  it("a card number sent in a free-text field is masked in the line, and a request's control characters escaped", async () => {
    await send('processCard', {
      ...example('processCard'),
      method: 'processCard',
      customerName: 'Jane 4564 7100 0000 0004',
    });
    await send('processCard', { ...example('processCard'), method: 'no\u0007such\nmethod' });
    const text = everything((await log.requests({ latest: 2 })).requests);
    expect(text).not.toMatch(/4564.?7100.?0000.?0004/);
    const control = '[\\u0000-\\u001f]';
    expect(text).not.toMatch(new RegExp(control));
  });
});

describe("each account's own lines, and no other's", () => {
  it("another merchant's requests are in its log only; a request with a wrong api key is in none", async () => {
    const created = (await t.client.partner.addMerchant(widgetsMerchant)) as { requestReference: string };
    const { merchantUUID: other } = (await t.client.partner.checkMerchant({
      requestReference: created.requestReference,
    })) as { merchantUUID: string };
    const theirs = createControlClient({ baseUrl: t.base, accountId: other, apiKey: t.sandbox.seed.apiKey });
    const ours = (await log.requests({ latest: 500 })).requests.length;
    // Theirs: a purchase signed right, and one with a wrong hash. A request naming them with a wrong key: nobody's.
    const body = { ...example('processCard'), merchantUUID: other, transactionReferenceID: 'LOG-OTHER' };
    const r = buildRequest(operation('processCard'), { body, signBody: true });
    await fetch(t.base + r.url, { method: 'POST', headers: r.headers as never, body: r.body as string });
    await send('processCard', { ...body, hash: '0'.repeat(32) });
    await send('processCard', { ...body, apiKey: 'notthekey' });
    await send('processCard', { ...example('processCard'), apiKey: 'notthekey' });
    const lines = (await theirs.requests()).requests;
    expect(lines.map((l) => [l.operation, l.responseCode])).toEqual([
      ['processCard', '0'],
      ['processCard', '-1'],
    ]);
    expect((await log.requests({ latest: 500 })).requests.length).toBe(ours);
    // The partner sees its own requests (addMerchant, checkMerchant), not its merchants'.
    const partner = createControlClient({
      baseUrl: t.base,
      accountId: t.sandbox.seed.partnerUUID,
      apiKey: t.sandbox.seed.apiKey,
    });
    expect(new Set((await partner.requests()).requests.map((l) => l.operation))).toEqual(
      new Set(['addMerchant', 'checkMerchant']),
    );
  });

  it('a request refused before its credentials are read is the account whose id and api key it carried', async () => {
    const { transactionAmount: _, ...missing } = example('processCard');
    await send('processCard', { ...missing, transactionReferenceID: 'LOG-MISSING' });
    expect((await log.requests({ latest: 1 })).requests[0]).toMatchObject({
      responseCode: '-3',
      explanation: { check: 'schema', field: 'transactionAmount', rule: 'required' },
    });
    const before = (await log.requests({ latest: 500 })).requests.length;
    await send('processCard', { ...missing, apiKey: 'notthekey' });
    expect((await log.requests({ latest: 500 })).requests.length).toBe(before);
  });

  it('the control API answers only with the account’s own credentials', async () => {
    const stranger = merchantControl(t, 'wrong');
    await expect(stranger.requests()).rejects.toBeInstanceOf(ControlError);
  });
});

describe('filters and follow', () => {
  it('by operation, outcome, time and id; the scenario each asked for is on its line', async () => {
    const since = new Date(Date.now() - 1000).toISOString();
    const body = { ...example('processCard'), transactionReferenceID: 'LOG-SC' };
    const signed = buildRequest(operation('processCard'), {
      body,
      signBody: true,
      headers: { [scenarios.header]: 'expired' },
    });
    await fetch(t.base + signed.url, { method: 'POST', headers: signed.headers as never, body: signed.body as string });
    const [declined] = (await log.requests({ operation: 'processCard', outcome: 'declined', since, latest: 1 }))
      .requests;
    expect(declined).toMatchObject({ responseCode: '4', outcome: 'declined', scenario: 'expired' });
    expect((await log.requests({ after: declined!.id })).requests).toEqual([]);
    expect((await log.requests({ until: '2000-01-01T00:00:00Z' })).requests).toEqual([]);
    expect((await log.requests({ outcome: 'declined', since })).requests.every((l) => l.outcome === 'declined')).toBe(
      true,
    );
  });

  it('follows: a long poll answers as soon as a line after `after` is written', async () => {
    const [last] = (await log.requests({ latest: 1 })).requests;
    const waiting = log.requests({ after: last!.id, waitSeconds: 30 });
    await send('queryBIN', { ...example('queryBIN'), hash: '0'.repeat(32) });
    const { requests } = await waiting;
    expect(requests.map((l) => l.operation)).toEqual(['queryBIN']);
  });

  it(`keeps each account's newest ${KEEP} lines: older ones go as new ones come`, async () => {
    const { transactionAmount: _, ...missing } = example('queryBIN');
    const request = buildRequest(operation('queryBIN'), { body: { ...missing, cardBin: 'x' } });
    for (let i = 0; i < KEEP + 5; i++) await t.sandbox.gateway.handle(request);
    const lines = (await log.requests({ latest: 500 })).requests;
    const kept = await t.sandbox.store.get<{ n: number; first: number }>(
      'SELECT count(*) AS n, min(id) AS first FROM request_log WHERE account_kind = ? AND account_id = ?',
      'merchant',
      t.sandbox.seed.merchantUUID,
    );
    expect(Number(kept!.n)).toBe(KEEP);
    expect(Number(kept!.first)).toBe(lines.at(-1)!.id - KEEP + 1);
  });

  it('refuses a filter it cannot read, naming it', async () => {
    await expect(log.requests({ outcome: 'lost' as never })).rejects.toThrow(
      /Field 'outcome' is invalid: must be one of approved, declined, pending, refused/,
    );
    await expect(log.requests({ since: 'yesterday' })).rejects.toThrow(/Field 'since' is invalid/);
  });
});
