// The docs' try-it console in a real headless Chromium, against a sandbox started as `npm start`
// starts it, every host but the loopback unresolvable and Chromium's background networking off, the
// page opened in each of the three ways a reader gets it: from disk (Origin null, which the default no
// longer trusts: the sandbox is started with PGW_SANDBOX_ALLOWED_ORIGINS=null,loopback, as docs/DEPLOY.md
// says to), served by the sandbox itself (/docs), and served by `payment-gateway docs`
// (a server of its own, which is no sandbox). Each console fills its operation's example, signs it in
// the page with the runtime's signer and shows the answer, a refusal's field and rule, and the
// preimage of each hash; the sandbox the reader names is remembered; when nothing answers, or what
// answers is no sandbox, the console says so. Every request the page makes is recorded, and none may
// leave for another host. A screenshot of the console after a token payment is saved as
// test-results/try-it.png (docs/images/try-it.png is a copy of one, shown in docs/CLIENT-TEAMS.md).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operation } from '../../contract/index.ts';
import { hashRecipes } from '../../generated/hash-recipes.ts';
import { canonicalJson, computeHash, hashPreimage, portableDigests } from '../../runtime/signing.ts';
import { chromiumMissing, sharedBrowser } from '../support/browser.ts';
import { doc, ROOT } from '../support/contract.ts';
import { type SandboxProcess, startSandboxProcess } from '../support/sandbox-process.ts';

const PAGE = pathToFileURL(path.join(ROOT, 'generated/docs/index.html')).href;
const { merchantUUID, apiKey, passphrase } = doc.info['x-sandbox'];

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
  const failed: string[] = [];
  const pageErrors: string[] = [];

  /** `payment-gateway docs --sandbox` the started sandbox: its address (started with the rest, read by its test). */
  let docsAddress: Promise<string>;
  // The two sandboxes, the docs server and the browser's connection started side by side: each start
  // is mostly a wait (a process that loads and listens, a connection to the run's Chromium). Each is
  // kept as it comes, so that afterAll stops it whichever other start failed.
  beforeAll(async () => {
    const started = await Promise.allSettled([
      startSandboxProcess({
        PGW_DB: ':memory:',
        PGW_QUIET: '1',
        PGW_SANDBOX_ALLOWED_ORIGINS: 'null,loopback',
      }).then((s) => {
        sandbox = s;
        docsAddress = startDocs(['--sandbox', s.base]);
        // Read by its test, which fails with the reason; not a rejection nobody handles meanwhile.
        docsAddress.catch(() => undefined);
      }),
      startSandboxProcess({
        PGW_DB: ':memory:',
        PGW_QUIET: '1',
        PGW_SANDBOX_ALLOWED_ORIGINS: 'https://docs.example.com',
      }).then((s) => {
        shared = s;
      }),
      sharedBrowser().then((b) => {
        browser = b;
      }),
    ]);
    const notStarted = started.find((r) => r.status === 'rejected');
    if (notStarted) throw notStarted.reason;
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    page.on('request', (r) => requests.push(r.url()));
    page.on('response', (r) => r.status() === 404 && failed.push(r.url()));
    page.on('pageerror', (e) => pageErrors.push(String(e)));
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    sandbox?.child.kill('SIGTERM');
    shared?.child.kill('SIGTERM');
    docsServer?.kill('SIGTERM');
  });

  /** `payment-gateway docs` started as a reader starts it, on a port the system picks; its address. */
  let docsServer: ChildProcess | undefined;
  async function startDocs(args: string[]): Promise<string> {
    const child = spawn(process.execPath, [path.join(ROOT, 'cli/main.ts'), 'docs', '--port', '0', ...args], {
      cwd: ROOT,
      env: { ...process.env, PGW_SANDBOX_URL: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    docsServer = child;
    let out = '';
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    return new Promise((resolve, reject) => {
      child.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        const m = /API reference on (http:\/\/\S+?)\/ /.exec(out);
        if (m) resolve(m[1]!);
      });
      child.once('exit', (code) => reject(new Error(`payment-gateway docs exited (${code}):\n${out}`)));
    });
  }

  /** A loopback port nothing listens on: the system gives it, and it is closed at once. */
  const closedPort = (): Promise<number> =>
    new Promise((resolve) => {
      const server = net.createServer().listen(0, '127.0.0.1', () => {
        const { port } = server.address() as net.AddressInfo;
        server.close(() => resolve(port));
      });
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
    expect(await error.innerText()).toBe(
      `Could not read an answer from ${shared.base}: something answers there but does not allow this page's origin (null: the docs opened from disk). If it is the sandbox, allow the origin: see PGW_SANDBOX_ALLOWED_ORIGINS in docs/DEPLOY.md.`,
    );
  });

  it('says in words when no sandbox answers at the address given', async () => {
    const console_ = await open('processCard');
    const nowhere = `http://127.0.0.1:${await closedPort()}`;
    await console_.getByTestId('try-it-url').fill(nowhere);
    await console_.getByTestId('try-it-send').click();
    const error = console_.getByTestId('try-it-error');
    await error.waitFor({ timeout: 30_000 });
    expect(await error.innerText()).toMatch(
      new RegExp(
        `^No sandbox answers at ${nowhere.replace(/[.]/g, '\\.')} \\(.+\\)\\. Start one \\(npm start, or payment-gateway sandbox: ${doc.servers![0]!.variables!.base_url!.default.replace(/[.]/g, '\\.')} by default\\) or give the address of a running one above\\.$`,
      ),
    );
  });

  it('remembers the sandbox the reader named: a page opened again sends there', async () => {
    const console_ = await open('listPayIds'); // open() names the started sandbox
    await page.reload();
    const again = page.locator('details.pgw-try-it[data-operation="processCard"]');
    await page.goto(pageOf('processCard'));
    await again.waitFor({ state: 'attached', timeout: 60_000 });
    if ((await again.getAttribute('open')) === null) await again.locator('summary').click();
    expect(await again.getByTestId('try-it-url').inputValue()).toBe(sandbox.base);
    expect(await send(again)).toBe('Approved (responseCode 0)');
    void console_;
  });

  it('served by `payment-gateway docs`, sends to the sandbox it names (--sandbox), not to the docs server', async () => {
    const docs = await docsAddress;
    await page.goto(pageOf('processCard', `${docs}/`));
    const console_ = page.locator('details.pgw-try-it[data-operation="processCard"]');
    await console_.waitFor({ state: 'attached', timeout: 60_000 });
    await console_.locator('summary').click();
    expect(await console_.getByTestId('try-it-url').inputValue()).toBe(sandbox.base);
    expect(await send(console_)).toBe('Approved (responseCode 0)');
    expect(await console_.getByTestId('try-it-request').innerText()).toBe(`POST ${sandbox.base}/post`);
    // Named the docs server itself, it says that is no sandbox, not a bare 404.
    await console_.getByTestId('try-it-url').fill(docs);
    await console_.getByTestId('try-it-send').click();
    const error = console_.getByTestId('try-it-error');
    await error.waitFor({ timeout: 30_000 });
    expect(await error.innerText()).toBe(
      `${docs} answered HTTP 404 without a gateway answer: it is not a sandbox (the docs' own server answers so). Give the sandbox's address above (npm start runs one at ${doc.servers![0]!.variables!.base_url!.default}).`,
    );
    // What this page remembers is its own: opened again, it sends where the reader last said.
    await page.reload();
    await console_.waitFor({ state: 'attached', timeout: 60_000 });
    if ((await console_.getAttribute('open')) === null) await console_.locator('summary').click();
    expect(await console_.getByTestId('try-it-url').inputValue()).toBe(docs);
  });

  it('carries its own icon, so that no server is asked for /favicon.ico (a 404 in every console)', async () => {
    // The browser fetches a page's icon itself, unseen by the page's requests: the page must name one
    // it holds. Here, still the page `payment-gateway docs` served.
    const icon = await page.evaluate(async () => {
      const link = document.querySelector<HTMLLinkElement>('link[rel~="icon"]');
      if (!link) return undefined;
      const answer = await fetch(link.href);
      return {
        href: link.href.slice(0, 5),
        type: answer.headers.get('content-type'),
        size: (await answer.blob()).size,
      };
    });
    expect(icon).toMatchObject({ href: 'data:', type: 'image/svg+xml' });
    expect(icon!.size).toBeGreaterThan(100);
    expect(failed.filter((u) => !u.endsWith('/post'))).toEqual([]);
  });

  it('made no request to any host but the loopback, and the page threw nothing', () => {
    // The sandboxes, the docs server, and the closed port the console was told to try.
    const loopback = (u: string) => u.startsWith('http://127.0.0.1:');
    expect(requests.filter(loopback).length).toBeGreaterThanOrEqual(8);
    const elsewhere = requests.filter((u) => !/^(file|data|blob):/.test(u) && !loopback(u));
    expect(elsewhere).toEqual([]);
    expect(pageErrors).toEqual([]);
  });
});
