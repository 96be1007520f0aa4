// The example clients in examples/php, examples/python and examples/ruby, each written the way the
// public clients of its language build their requests, run every operation against a started
// sandbox and against the mock, through a proxy that records what went over the wire. Each answer is
// checked as the client read it (approved, declined, refused with its negative code) and as it was
// sent (form-encoded to the client's paths, an XML answer with the mwResponse root).
// The account and the test cards are the sandbox's, read from the spec (info.x-sandbox) and the
// sandbox's test-card table, and passed to the clients: none of them holds a credential or a card.
import { spawnSync } from 'node:child_process';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { unzipSync } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMock } from '../../mock/run.ts';
import { sharedPrism } from '../support/shared-servers.ts';
import { TEST_CARDS } from '../../sandbox/data.ts';
import { createSandbox } from '../../sandbox/index.ts';
import { protocols } from '../../generated/protocols.ts';
import { instantOf } from '../../runtime/gateway-time.ts';
import { doc, ROOT } from '../support/contract.ts';
import { exampleSession, type ExampleSession, LANGUAGES, missing, type Language } from './interpreters.ts';
import { startRecordingProxy, type Exchange, type RecordingProxy } from './recording-proxy.ts';

const account = doc.info['x-sandbox'] as { merchantUUID: string; apiKey: string; passphrase: string };

/** A test card by its outcome, expiry as MMYY: the approved one chosen among those not yet expired. */
function card(outcome: string): { card: string; expiry: string; csc: string } {
  const now = new Date();
  const current = (mmyy: string) =>
    Number(mmyy.slice(2)) * 100 + Number(mmyy.slice(0, 2)) >=
    (now.getUTCFullYear() % 100) * 100 + now.getUTCMonth() + 1;
  const [number, c] = Object.entries(TEST_CARDS).find(
    ([, c]) => c.outcome === outcome && c.expiry !== 'any' && (outcome !== 'approved' || current(c.expiry)),
  )!;
  return { card: number, expiry: c.expiry, csc: c.csc };
}
const approvedCard = card('approved');
const expiredCard = card('expired');

/** Each operation of the examples and the gateway method it calls. */
const METHODS: Record<string, string> = {
  purchase: 'processCard',
  authorise: 'processAuth',
  capture: 'processCapture',
  refund: 'refundCard',
  void: 'processVoid',
  queryCard: 'queryCard',
  addCard: 'addCard',
  cardInfo: 'cardInfo',
  tokenPurchase: 'processCard',
  getSettlement: 'getSettlement',
};
const VAULT = new Set(['addCard', 'cardInfo', 'tokenPurchase']);

/**
 * Where each language's public clients post, and whether the body names the method: the PHP drivers
 * (kevupton) /token/{method}, ActiveMerchant /token//{method}, both without a method field; the
 * Python client a method field everywhere; every other call /post/ with a method field.
 */
function wire(language: Language, operation: string): { path: string; methodField: boolean } {
  const method = METHODS[operation]!;
  if (!VAULT.has(operation)) return { path: '/post/', methodField: true };
  if (language === 'php') return { path: `/token/${method}`, methodField: false };
  if (language === 'ruby') return { path: `/token//${method}`, methodField: false };
  return { path: '/token/', methodField: true };
}

/** The request and the answer of one exchange, checked as the language's clients put them on the wire. */
function checkWire(language: Language, operation: string, exchange: Exchange) {
  const expected = wire(language, operation);
  const sent = new URLSearchParams(exchange.body);
  const seen = `${language} ${operation}: ${exchange.path} ${exchange.body}`;
  expect(exchange.path, seen).toBe(expected.path);
  expect(exchange.contentType, seen).toMatch(/^application\/x-www-form-urlencoded/);
  expect(sent.get('method'), seen).toBe(expected.methodField ? METHODS[operation] : null);
  expect(new Set(sent.keys()).size, `${seen}: no name twice`).toBe([...sent.keys()].length);
  if (language === 'php') expect(exchange.accept, seen).toBe('text/xml');
  if (operation === 'getSettlement' && exchange.status === 200) return;
  const form = protocols.byId('form')!;
  expect(exchange.answerType, seen).toBe(form.answerType);
  // The answer as the wire has it, read strictly: the clients' reading of it must be the same fields.
  const read = form.readAnswer(exchange.answer.toString('utf8'));
  if ('error' in read) throw new Error(`${seen}: the answer is not an mwResponse document: ${read.error}`);
  return read.ok;
}

interface Target {
  name: 'sandbox' | 'mock';
  url: string;
  close(): Promise<void>;
}

/**
 * The sandbox at a Tuesday morning in Sydney: a purchase the clients make settles that day, so the
 * settlement file they read lists it whatever the hour the tests run (from the 18:00 cut-off, or on
 * a weekend, it would settle on the next business day: docs/RULES.md).
 */
const SANDBOX_TIME = '2026-12-01 10:00:00';

async function sandboxTarget(): Promise<Target> {
  const sandbox = await createSandbox({ dbPath: ':memory:', env: {} });
  sandbox.clock.advance(instantOf(SANDBOX_TIME, 'Australia/Sydney').getTime() - sandbox.clock.now().getTime());
  const server = sandbox.server();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    name: 'sandbox',
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      await new Promise((resolve) => server.close(resolve));
      await sandbox.close();
    },
  };
}

async function mockTarget(): Promise<Target> {
  const mock = await startMock({ port: 0, host: '127.0.0.1', prism: await sharedPrism() });
  return { name: 'mock', url: mock.url, close: async () => mock.close() };
}

describe.each([
  ['sandbox', sandboxTarget],
  ['mock', mockTarget],
] as const)('the example clients against the %s', (targetName, start) => {
  let target: Target;
  beforeAll(async () => {
    target = await start();
  }, 60_000);
  afterAll(() => target?.close());

  describe.each(LANGUAGES)('%s', (language) => {
    const why = missing(language);
    let proxy: RecordingProxy;
    /** examples/<language>/run.<ext>, its interpreter started once for all of this target's operations. */
    let example: ExampleSession;
    beforeAll(async () => {
      if (why) return;
      proxy = await startRecordingProxy(target.url);
      example = exampleSession(language, 'run', {
        MW_BASE_URL: proxy.url,
        MW_MERCHANT_UUID: account.merchantUUID,
        MW_API_KEY: account.apiKey,
        MW_PASSPHRASE: account.passphrase,
      });
    });
    afterAll(async () => {
      await example?.close();
      await proxy?.close();
    });

    /** Runs one operation of the example; answers what the client read and what the wire carried. */
    async function run(operation: string, args: Record<string, string>) {
      const before = proxy.exchanges.length;
      const read = (await example.run([operation, ...Object.entries(args).map(([k, v]) => `${k}=${v}`)])) as Record<
        string,
        string | number | boolean
      >;
      expect(proxy.exchanges.length, `${operation}: one request`).toBe(before + 1);
      const exchange = proxy.exchanges[before]!;
      const onWire = checkWire(language, operation, exchange);
      if (onWire) expect(read, `${language} ${operation} read the answer's elements`).toEqual(onWire);
      return { read, exchange };
    }
    const approved = (read: Record<string, unknown>) => expect(read.responseCode, JSON.stringify(read)).toBe('0');
    // The Python client's own test pays in lower-case 'aud' (the gateway reads currency codes upper-cased).
    const currency = language === 'python' ? 'aud' : 'AUD';
    const order = { amount: '10.00', currency };
    const state: Record<string, string> = {};
    const sandboxOnly = targetName === 'sandbox';
    const test = it.skipIf(why);
    const note = why ? ` (skipped: ${why})` : '';

    test(`purchase (processCard) is approved${note}`, async () => {
      const { read, exchange } = await run('purchase', { ...order, ...approvedCard });
      approved(read);
      expect(read.transactionID).toMatch(/\S/);
      state.purchase = String(read.transactionID);
      // ActiveMerchant sends the address fields it has no value for as empty strings.
      if (language === 'ruby') expect(exchange.body).toContain('customerIP=&customerPhone=&customerEmail=');
    });

    test(`authorise then capture (processAuth, processCapture)${note}`, async () => {
      const auth = await run('authorise', { ...order, ...approvedCard });
      approved(auth.read);
      approved((await run('capture', { ...order, transactionID: String(auth.read.transactionID) })).read);
    });

    test(`refund (refundCard) of the purchase${note}`, async () => {
      approved((await run('refund', { ...order, transactionID: state.purchase! })).read);
    });

    test(`void (processVoid) of a purchase${note}`, async () => {
      const purchase = await run('purchase', { ...order, ...approvedCard });
      approved(purchase.read);
      approved((await run('void', { transactionID: String(purchase.read.transactionID), amount: order.amount })).read);
    });

    test(`queryCard finds the purchase${note}`, async () => {
      const { read } = await run('queryCard', { transactionID: state.purchase! });
      approved(read);
      if (sandboxOnly) expect(read.transactionID).toBe(state.purchase);
    });

    test(`addCard, then a token purchase without cardKey and one with cardKey and cardKeyReplace${note}`, async () => {
      const added = await run('addCard', { ...approvedCard, name: 'Jane Citizen' });
      approved(added.read);
      expect(added.read.cardID).toMatch(/^[A-Z0-9]+$/);
      expect(added.read.cardKey).toMatch(/^[A-Za-z0-9]+$/);
      state.cardID = String(added.read.cardID);
      approved((await run('tokenPurchase', { ...order, cardID: state.cardID })).read);
      const rotated = await run('tokenPurchase', {
        ...order,
        cardID: state.cardID,
        cardKey: String(added.read.cardKey),
        cardKeyReplace: `${language}Key${Date.now()}`,
      });
      approved(rotated.read);
    });

    test(`cardInfo reads the stored card${note}`, async () => {
      const { read } = await run('cardInfo', { cardID: state.cardID! });
      approved(read);
      if (sandboxOnly) expect(read.cardID).toBe(state.cardID);
    });

    it.skipIf(why || !sandboxOnly)(
      `a purchase with the expired test card is declined (code above zero)${sandboxOnly ? note : ' (the mock does not know test cards)'}`,
      async () => {
        const { read } = await run('purchase', { ...order, ...expiredCard });
        expect(Number(read.responseCode), JSON.stringify(read)).toBeGreaterThan(0);
      },
    );

    test(`a purchase with an amount that is not a decimal is refused -2 naming transactionAmount${note}`, async () => {
      const { read } = await run('purchase', { ...order, amount: '10.0', ...approvedCard });
      expect(read.responseCode, JSON.stringify(read)).toBe('-2');
      expect(read.responseMessage).toContain('transactionAmount');
    });

    it.skipIf(why || !sandboxOnly)(
      `a refund of an unknown transaction is refused (negative code)${sandboxOnly ? note : ' (the mock keeps no transactions)'}`,
      async () => {
        const { read } = await run('refund', { ...order, transactionID: 'invalid-transaction-id' });
        expect(Number(read.responseCode), JSON.stringify(read)).toBeLessThan(0);
      },
    );

    test(`getSettlement answers a zip holding the settlement CSV${note}`, async () => {
      const { read, exchange } = await run('getSettlement', { from: '2000-01-01', to: '2099-12-31' });
      expect(read, JSON.stringify(read)).toMatchObject({ httpStatus: 200, zip: true });
      const files = unzipSync(new Uint8Array(exchange.answer));
      const csv = new TextDecoder().decode(Object.values(files)[0]!);
      if (sandboxOnly) expect(csv).toContain(state.purchase!);
      else expect(csv.split('\n')[0]).toMatch(/\w/);
    });
  });
});

describe('examples/<language>/run, as a reader runs it by hand', () => {
  // Python ended in a KeyError traceback, PHP in an uncaught TypeError with its stack trace; Ruby sends
  // the request with the value missing and prints the sandbox's -3 naming it.
  for (const [language, command, script] of [
    ['python', 'python3', 'run.py'],
    ['php', 'php', 'run.php'],
  ] as const)
    it.skipIf(missing(language))(
      `${language} names the argument an operation lacks in one line, with no trace (refund without transactionID)`,
      () => {
        const run = spawnSync(command, [script, 'refund', 'amount=1.00', 'currency=AUD'], {
          cwd: path.join(ROOT, 'examples', language),
          encoding: 'utf8',
          env: {
            ...process.env,
            MW_BASE_URL: 'http://127.0.0.1:9',
            MW_MERCHANT_UUID: 'm',
            MW_API_KEY: 'k',
            MW_PASSPHRASE: 'p',
          },
        });
        expect(run.status).toBe(1);
        expect(run.stdout).toBe('');
        expect(run.stderr).toBe(`refund needs transactionID=... (${command} ${script} refund name=value ...)\n`);
      },
    );
});
