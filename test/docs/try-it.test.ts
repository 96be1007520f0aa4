// The docs' try-it console in a real headless Chromium, against a sandbox started as `npm start`
// starts it, the docs opened from disk (Origin null, the sandbox's default allows it), every host but
// the loopback unresolvable and Chromium's background networking off. Each console fills its
// operation's example, signs it in the page with the runtime's signer and shows the answer, a
// refusal's field and rule, and the preimage of each hash; every request the page makes is recorded,
// and none may leave for another host. A screenshot of the console after a token payment is saved as
// test-results/try-it.png (docs/images/try-it.png is a copy of one, shown in docs/CLIENT-TEAMS.md).
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operation } from '../../contract/index.ts';
import { hashRecipes } from '../../generated/hash-recipes.ts';
import { canonicalJson, computeHash, hashPreimage, portableDigests } from '../../runtime/signing.ts';
import { ensureChromium, launchChromium } from '../support/browser.ts';
import { doc, ROOT } from '../support/contract.ts';
import { type SandboxProcess, startSandboxProcess } from '../support/sandbox-process.ts';

const PAGE = pathToFileURL(path.join(ROOT, 'generated/docs/index.html')).href;
const { merchantUUID, apiKey, passphrase } = doc.info['x-sandbox'];

/** Why the browser test cannot run here, if it cannot: Chromium is missing and cannot be installed. */
function chromiumMissing(): string | undefined {
  try {
    ensureChromium();
    return undefined;
  } catch (error) {
    return `Chromium is missing and could not be installed (${error instanceof Error ? error.message.split('\n')[0] : String(error)})`;
  }
}
const missing = chromiumMissing();

/** The page of an operation in the docs: its tag's slug and its operationId, in lower case. */
const pageOf = (operationId: string, docs = PAGE) =>
  `${docs}#/${operation(operationId).tags[0]!.toLowerCase().replace(/\s+/g, '-')}/${operationId.toLowerCase()}`;

describe.skipIf(missing !== undefined)(`the try-it console${missing ? ` (skipped: ${missing})` : ''}`, () => {
  let sandbox: SandboxProcess;
  /** A sandbox shared elsewhere: it allows its docs' origin only, not the docs opened from disk. */
  let shared: SandboxProcess;
  let browser: Browser;
  let page: Page;
  const requests: string[] = [];
  const pageErrors: string[] = [];

  beforeAll(async () => {
    sandbox = await startSandboxProcess({ PGW_DB: ':memory:', PGW_QUIET: '1' });
    shared = await startSandboxProcess({
      PGW_DB: ':memory:',
      PGW_QUIET: '1',
      PGW_SANDBOX_ALLOWED_ORIGINS: 'https://docs.example.com',
    });
    browser = await launchChromium(['--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1']);
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    page.on('request', (r) => requests.push(r.url()));
    page.on('pageerror', (e) => pageErrors.push(String(e)));
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    sandbox?.child.kill('SIGTERM');
    shared?.child.kill('SIGTERM');
  });

  /** Opens an operation's page and its console, pointed at the started sandbox. */
  async function open(operationId: string): Promise<Locator> {
    await page.goto(pageOf(operationId));
    const console_ = page.locator(`details.pgw-try-it[data-operation="${operationId}"]`);
    await console_.waitFor({ state: 'attached', timeout: 60_000 });
    if ((await console_.getAttribute('open')) === null) await console_.locator('summary').click();
    await console_.getByTestId('try-it-url').fill(sandbox.base);
    return console_;
  }

  async function send(console_: Locator): Promise<string> {
    await console_.getByTestId('try-it-send').click();
    const verdict = console_.getByTestId('try-it-verdict');
    await verdict.waitFor({ timeout: 30_000 });
    return verdict.innerText();
  }

  const body = async (console_: Locator) => JSON.parse(await console_.getByTestId('try-it-body').inputValue());
  const setBody = (console_: Locator, value: unknown) =>
    console_.getByTestId('try-it-body').fill(JSON.stringify(value, null, 2));
  const answer = async (console_: Locator) => JSON.parse(await console_.getByTestId('try-it-answer').innerText());

  it("fills the example and the sandbox's published credentials, and defaults to the spec's server", async () => {
    await page.goto(pageOf('processCard'));
    const console_ = page.locator('details.pgw-try-it[data-operation="processCard"]');
    await console_.waitFor({ state: 'attached', timeout: 60_000 });
    await console_.locator('summary').click();
    expect(await console_.getByTestId('try-it-url').inputValue()).toBe(doc.servers![0]!.variables!.base_url!.default);
    expect(await console_.getByTestId('try-it-merchantUUID').inputValue()).toBe(merchantUUID);
    expect(await console_.getByTestId('try-it-apiKey').inputValue()).toBe(apiKey);
    expect(await console_.getByTestId('try-it-passphrase').inputValue()).toBe(passphrase);
    // The example less what the console fills in: method, credentials and hash.
    const example = doc.components.examples.processCard.value;
    const { method: _m, merchantUUID: _id, apiKey: _key, hash: _hash, ...caller } = example as Record<string, unknown>;
    expect(await body(console_)).toEqual(caller);
  });

  it('signs a card purchase in the page: approved, with the preimage the transaction recipe hashed', async () => {
    const console_ = await open('processCard');
    expect(await send(console_)).toBe('Approved (responseCode 0)');
    const result = await answer(console_);
    expect(result).toMatchObject({ responseCode: '0', transactionAmount: '10.00' });
    expect(result.paymentCardNumber).toMatch(/^\d{6}X+\d{4}$/);
    const fields = { merchantUUID, transactionAmount: '10.00', transactionCurrency: 'AUD' };
    const preimage = hashPreimage(hashRecipes.transaction, passphrase, fields);
    expect(await console_.getByTestId('try-it-preimage').innerText()).toBe(preimage);
    const sent = JSON.parse((await console_.getByTestId('try-it-sent').textContent()) ?? '');
    expect(sent).toMatchObject({ method: 'processCard', merchantUUID, apiKey });
    expect(sent.hash).toBe(computeHash(hashRecipes.transaction, passphrase, fields));
  });

  it('refuses an edited field, naming the field and the rule; a wrong passphrase is still -1', async () => {
    const console_ = await open('processCard');
    await setBody(console_, { ...(await body(console_)), transactionAmount: 'ten dollars' });
    expect(await send(console_)).toBe('Refused (responseCode -2): nothing was processed');
    expect(await console_.getByTestId('try-it-field').innerText()).toBe('transactionAmount');
    expect(await console_.getByTestId('try-it-rule').innerText()).toMatch(/^must be /);

    await setBody(console_, { ...(await body(console_)), transactionAmount: '10.00' });
    await console_.getByTestId('try-it-passphrase').fill('not-the-passphrase');
    expect(await send(console_)).toBe('Refused (responseCode -1): nothing was processed');
    expect(await answer(console_)).toEqual({
      responseCode: '-1',
      responseMessage: 'Invalid authentication credentials',
    });
    expect(await console_.getByTestId('try-it-field').innerText()).toBe('(none: the request as a whole)');
    await console_.getByTestId('try-it-passphrase').fill(passphrase);
  });

  it("asks the sandbox for a scenario, and reads back the reader's own request log: the scenario, a hash refused with its recipe and text", async () => {
    const console_ = await open('processCard');
    await console_.getByTestId('try-it-scenario').selectOption('expired');
    expect(await send(console_)).toBe('Processed, declined or pending (responseCode 4)');
    expect(await answer(console_)).toMatchObject({ responseMessage: 'Card has expired', authResponseCode: '54' });
    expect(await console_.getByTestId('try-it-headers').innerText()).toContain('SVC-SANDBOX-SCENARIO: expired');
    await console_.getByTestId('try-it-scenario').selectOption('');
    await console_.getByTestId('try-it-passphrase').fill('not-the-passphrase');
    expect(await send(console_)).toBe('Refused (responseCode -1): nothing was processed');
    await console_.getByTestId('try-it-passphrase').fill(passphrase);
    const log = console_.locator('div.pgw-try-it-log');
    await log.getByTestId('try-it-log-read').click();
    const lines = log.getByTestId('try-it-log-line');
    await lines.first().waitFor({ timeout: 30_000 });
    const newest = await lines.first().innerText();
    expect(newest.split('\n')).toEqual([
      expect.stringMatching(/^#\d+ \S+ processCard -1 refused PGW_ERR_CREDENTIALS$/),
      'Invalid authentication credentials',
      'check hash, field hash',
      expect.stringMatching(/^recipe transaction: md5\(lower\(md5\(passphrase\) \+ merchantUUID/),
      `computed over: {md5(passphrase)}${merchantUUID}10.00aud`,
    ]);
    expect(await lines.nth(1).innerText()).toMatch(/ processCard 4 declined \[scenario expired\]$/);
  });

  it('sends a payout with its two credential headers and the message hash over the canonical JSON', async () => {
    const console_ = await open('createPayouts');
    expect(await send(console_)).toBe('Approved (responseCode 0)');
    const headers = Object.fromEntries(
      (await console_.getByTestId('try-it-headers').innerText()).split('\n').map((l) => l.split(': ')),
    );
    expect(headers).toMatchObject({ 'SVC-MERCHANTID': merchantUUID, 'SVC-API-KEY': apiKey, 'SVC-API-VERSION': '2.0' });
    const sent = JSON.parse((await console_.getByTestId('try-it-sent').textContent()) ?? '');
    const preimage = await console_.getByTestId('try-it-preimage').innerText();
    expect(preimage).toBe(canonicalJson(sent));
    expect(headers['SVC-MESSAGEHASH']).toBe(portableDigests.hmacSha256Hex(passphrase, preimage));
    expect((await answer(console_)).responseCode).toBe(0);
  });

  it('signs the query parameters it sends, and only those (an empty one is neither sent nor hashed)', async () => {
    const console_ = await open('searchPayToPayments');
    expect(await console_.getByTestId('try-it-param-status').inputValue()).toBe('approved');
    expect(await send(console_)).toBe('Approved (responseCode 0)');
    expect(await console_.getByTestId('try-it-request').innerText()).toBe(
      `GET ${sandbox.base}/npp/payto/payments?status=approved`,
    );
    expect(await console_.getByTestId('try-it-preimage').innerText()).toBe('{"status":"approved"}');
  });

  it('pays with a stored card: addCard, then a token payment with its cardID and cardKey (the screenshot)', async () => {
    const add = await open('addCard');
    expect(await send(add)).toBe('Approved (responseCode 0)');
    const { cardID, cardKey } = await answer(add);
    expect(cardID).toMatch(/\w+/);

    const pay = await open('tokenProcessCard');
    await setBody(pay, { ...(await body(pay)), cardID, cardKey });
    expect(await send(pay)).toBe('Approved (responseCode 0)');
    expect(await answer(pay)).toMatchObject({ responseCode: '0' });
    expect(await pay.getByTestId('try-it-preimage').innerText()).toContain(merchantUUID);
    mkdirSync(path.join(ROOT, 'test-results'), { recursive: true });
    await pay.screenshot({ path: path.join(ROOT, 'test-results/try-it.png') });
  });

  it("served by the sandbox itself (/docs), sends to the page's own origin", async () => {
    await page.goto(pageOf('listPayIds', `${sandbox.base}/docs`));
    const console_ = page.locator('details.pgw-try-it[data-operation="listPayIds"]');
    await console_.waitFor({ state: 'attached', timeout: 60_000 });
    await console_.locator('summary').click();
    expect(await console_.getByTestId('try-it-url').inputValue()).toBe(sandbox.base);
    expect(await send(console_)).toBe('Approved (responseCode 0)');
    expect(await console_.getByTestId('try-it-request').innerText()).toBe(`GET ${sandbox.base}/npp/payid`);
  });

  it('says why when a sandbox does not allow the page (its preflight refused), and what to set', async () => {
    const console_ = await open('processCard');
    await console_.getByTestId('try-it-url').fill(shared.base);
    await console_.getByTestId('try-it-send').click();
    const error = console_.getByTestId('try-it-error');
    await error.waitFor({ timeout: 30_000 });
    expect(await error.innerText()).toMatch(
      /^Could not reach http:\/\/127\.0\.0\.1:\d+ \(.+\)\. Is the sandbox running \(npm start\)\? It must allow this page's origin \(null: the docs opened from disk\): see PGW_SANDBOX_ALLOWED_ORIGINS in docs\/DEPLOY\.md\.$/,
    );
  });

  it('made no request to any host but the loopback, and the page threw nothing', () => {
    const loopback = (u: string) => u.startsWith(`${sandbox.base}/`) || u.startsWith(`${shared.base}/`);
    expect(requests.filter(loopback).length).toBeGreaterThanOrEqual(8);
    const elsewhere = requests.filter((u) => !/^(file|data|blob):/.test(u) && !loopback(u));
    expect(elsewhere).toEqual([]);
    expect(pageErrors).toEqual([]);
  });
});
