// Retries that never pay twice, against the sandbox behind a proxy that loses answers after the
// sandbox has committed them (and, for contrast, before it sees the request).
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createGatewayClient,
  type GatewayClient,
  GatewayNetworkError,
  GatewayOutcomeUnknownError,
  recoveredBy,
  type RetryEvent,
} from '../../generated/client.ts';
import { scenarios } from '../../generated/scenarios.ts';
import { card, clientOf, customer, startSandbox, type TestSandbox } from '../sandbox/support.ts';
import { startDroppingProxy, type DroppingProxy, type Fate } from '../support/dropping-proxy.ts';
import { bankDebit } from '../support/requests.ts';
import { retryTables, unmarkedMoneyMovers } from './retry-checks.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
let t: TestSandbox;
let proxy: DroppingProxy;
let fates: Fate[] = [];
const events: RetryEvent[] = [];

beforeAll(async () => {
  t = await startSandbox();
  // Every request takes the next planned fate; requests beyond the plan pass.
  proxy = await startDroppingProxy(t.base, () => fates.shift() ?? 'pass');
});
afterAll(async () => {
  await proxy.close();
  await t.close();
});

const client = (retry = true) => {
  const s = t.sandbox.seed;
  return createGatewayClient({
    baseUrl: proxy.url,
    merchantUUID: s.merchantUUID,
    apiKey: s.apiKey,
    passphrase: s.passphrase,
    ...(retry ? { retry: { attempts: 4, baseDelayMs: 1, onRetry: (e) => void events.push(e) } } : {}),
  });
};
const charges = async (reference: string) =>
  Number(
    (await t.sandbox.store.get(
      "SELECT count(*) AS n FROM transactions WHERE reference = ? AND kind = 'purchase'",
      reference,
    ))!.n,
  );
type Purchase = Parameters<GatewayClient['processCard']>[0];
const purchase = (reference?: string, amount = '10.00'): Purchase => ({
  transactionAmount: amount,
  transactionCurrency: 'AUD',
  transactionProduct: 'Retry',
  ...(reference ? { transactionReferenceID: reference } : {}),
  ...customer,
  ...card.visa,
});

describe('a purchase whose answer is lost after the sandbox committed it', () => {
  it('without the retry layer, sending it again charges twice (what the layer prevents)', async () => {
    fates = ['dropAfter'];
    await expect(client(false).processCard(purchase('NAIVE-1'))).rejects.toBeInstanceOf(GatewayNetworkError);
    expect(await charges('NAIVE-1')).toBe(1);
    expect((await client(false).processCard(purchase('NAIVE-1'))).responseCode).toBe('0');
    expect(await charges('NAIVE-1')).toBe(2);
  });

  it('is looked up by its transactionReferenceID and answered from the record: one charge', async () => {
    fates = ['dropAfter'];
    events.length = 0;
    const answer = await client().processCard(purchase('R-1'));
    expect(await charges('R-1')).toBe(1);
    expect(proxy.seen.slice(-2).map((s) => [s.name, s.fate])).toEqual([
      ['processCard', 'dropAfter'],
      ['queryCard', 'pass'],
    ]);
    expect(answer).toMatchObject({
      responseCode: '0',
      transactionReferenceID: 'R-1',
      transactionStatus: 'approved',
      transactionAmount: '10.00',
    });
    // The same transaction the lost answer was about.
    expect((answer as { transactionID: string }).transactionID).toBe(
      JSON.parse(proxy.seen.at(-2)!.answered!).transactionID,
    );
    expect(recoveredBy(answer)).toEqual({ lookup: 'queryCard', reference: 'R-1', attempts: 2, approved: true });
    expect(events.map((e) => e.action)).toEqual(['lookup', 'recovered']);
  });

  it('gets a reference of its own when the caller gave none, so that it can be looked up', async () => {
    fates = ['dropAfter'];
    const answer = (await client().processCard(purchase(undefined, '11.00'))) as { transactionReferenceID: string };
    expect(answer.transactionReferenceID).toMatch(/^r[0-9a-f]{31}$/);
    expect(await charges(answer.transactionReferenceID)).toBe(1);
  });

  it('is sent again when the lookup finds nothing (the request never reached the sandbox): one charge', async () => {
    fates = ['dropBefore'];
    events.length = 0;
    const answer = await client().processCard(purchase('R-2'));
    expect(answer).toMatchObject({ responseCode: '0', transactionReferenceID: 'R-2' });
    expect(recoveredBy(answer)).toBeUndefined();
    expect(await charges('R-2')).toBe(1);
    expect(events.map((e) => e.action)).toEqual(['lookup', 'notFound']);
  });

  it('keeps looking up while the lookups are lost too, and gives up without resending', async () => {
    fates = ['dropAfter', 'dropAfter', 'dropAfter', 'dropAfter'];
    const error = await client()
      .processCard(purchase('R-3'))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GatewayOutcomeUnknownError);
    expect((error as GatewayOutcomeUnknownError).reference).toBe('R-3');
    expect(proxy.seen.slice(-4).map((s) => s.name)).toEqual(['processCard', 'queryCard', 'queryCard', 'queryCard']);
    expect(await charges('R-3')).toBe(1);
  });

  it('refuses to take another transaction under the same reference for its own', async () => {
    expect((await client().processCard(purchase('R-4', '10.00'))).responseCode).toBe('0');
    fates = ['dropBefore'];
    await expect(client().processCard(purchase('R-4', '12.00'))).rejects.toThrow(/transactionAmount differs/);
    expect(await charges('R-4')).toBe(1);
  });
});

describe('a declined purchase whose answer is lost', () => {
  it('is recovered as declined: the lookup found it, it was not approved', async () => {
    fates = ['dropAfter'];
    const answer = await client().processCard({ ...purchase('R-D'), ...card.lowFunds, transactionAmount: '20.00' });
    expect(answer).toMatchObject({ transactionStatus: 'declined' });
    // The purchase's own outcome, as its lost answer gave it, not the lookup's 0 for having found it.
    const direct = await client(false).processCard({
      ...purchase('R-D2'),
      ...card.lowFunds,
      transactionAmount: '20.00',
    });
    expect(Number(direct.responseCode)).toBeGreaterThan(0);
    expect(answer).toMatchObject({ responseCode: direct.responseCode, responseMessage: direct.responseMessage });
    expect(recoveredBy(answer)).toMatchObject({ lookup: 'queryCard', approved: false });
  });
});

describe('other operations', () => {
  it('a direct debit is looked up with queryDD', async () => {
    fates = ['dropAfter'];
    const answer = await client().processDDebit(bankDebit('30.00', { transactionReferenceID: 'DD-1' }));
    expect(recoveredBy(answer)?.lookup).toBe('queryDD');
    expect(answer).toMatchObject({ responseCode: '10', transactionReferenceID: 'DD-1' });
    expect(
      Number((await t.sandbox.store.get("SELECT count(*) AS n FROM direct_debits WHERE reference = 'DD-1'"))!.n),
    ).toBe(1);
  });

  it('a query marked safe is simply sent again', async () => {
    fates = ['dropAfter'];
    expect((await client().queryCard({ transactionReferenceID: 'R-1' })).responseCode).toBe('0');
    expect(proxy.seen.slice(-2).map((s) => s.name)).toEqual(['queryCard', 'queryCard']);
  });

  it('an operation with no mark (a refund) is never sent again', async () => {
    const bought = (await client().processCard(purchase('R-5'))) as { transactionID: string };
    fates = ['dropAfter'];
    await expect(
      client().refundCard({
        transactionID: bought.transactionID,
        transactionAmount: '10.00',
        transactionCurrency: 'AUD',
        refundAmount: '1.00',
      }),
    ).rejects.toBeInstanceOf(GatewayNetworkError);
    expect(proxy.seen.at(-1)!.name).toBe('refundCard');
    expect(JSON.parse(proxy.seen.at(-1)!.answered!).responseCode).toBe('0');
    expect(
      Number(
        (await t.sandbox.store.get(
          "SELECT count(*) AS n FROM transactions WHERE kind = 'refund' AND reference = 'R-5'",
        ))!.n,
      ),
    ).toBe(1);
  });

  // retry-checks.ts: test/architecture/add-method.test.ts runs them on a copy with a method added.
  it('every operation that moves money carries a retry mark naming an operation of the table', () => {
    expect(unmarkedMoneyMovers()).toEqual([]);
  });

  it("the client guide's table of retries says what the spec marks, operation by operation", async () => {
    const { documented, marked } = await retryTables();
    expect(documented).toEqual(marked);
  });
});

// The sandbox's own faults, named per request (x-sandbox-scenarios, docs/SCENARIOS.md): each fault on
// each operation that moves money, once on its first try only (a fault that passes) and once on every
// request the call makes, its lookups included (one that does not). Whatever the fault, the call never
// charges twice: a fault that passes ends in the one charge, recovered or sent again after a lookup that
// found nothing; one that does not ends in GatewayOutcomeUnknownError or a refusal, with at most the one.
describe('against every fault the sandbox can be asked for, per request', () => {
  const HEADER = scenarios.header;
  const FAULTS = Object.keys(scenarios.faults).map((name) =>
    name === 'latency' ? 'latency=50' : name === 'unavailable' ? 'unavailable=1' : name,
  );
  const rows: string[] = [];
  let cardID = '';
  beforeAll(async () => {
    cardID = (
      (await t.client.token.addCard({
        cardName: 'Jane Citizen',
        cardNumber: '4564710000000004',
        cardExpiryMonth: '02',
        cardExpiryYear: '29',
      })) as { cardID: string }
    ).cardID;
  });
  const stored = async (op: string, reference: string) =>
    Number(
      (await t.sandbox.store.get(
        op === 'processDDebit'
          ? 'SELECT count(*) AS n FROM direct_debits WHERE reference = ?'
          : "SELECT count(*) AS n FROM transactions WHERE reference = ? AND kind IN ('purchase', 'auth')",
        reference,
      ))!.n,
    );
  const movers: Record<string, (c: GatewayClient, reference: string) => Promise<unknown>> = {
    processCard: (c, reference) => c.processCard(purchase(reference)),
    processAuth: (c, reference) => c.processAuth(purchase(reference) as never),
    tokenProcessCard: (c, reference) =>
      c.token.processCard({
        cardID,
        transactionAmount: '10.00',
        transactionCurrency: 'AUD',
        transactionProduct: 'Retry',
        transactionReferenceID: reference,
      }),
    tokenProcessAuth: (c, reference) =>
      c.token.processAuth({
        cardID,
        transactionAmount: '10.00',
        transactionCurrency: 'AUD',
        transactionProduct: 'Retry',
        transactionReferenceID: reference,
      } as never),
    walletProcessCard: (c, reference) =>
      c.wallet.processCard({
        digitalWalletToken: 'wallet-token',
        transactionAmount: '10.00',
        transactionCurrency: 'AUD',
        transactionProduct: 'Retry',
        transactionReferenceID: reference,
      } as never),
    processDDebit: (c, reference) => c.processDDebit(bankDebit('10.00', { transactionReferenceID: reference })),
  };

  /**
   * A client whose requests carry the fault: the first only, or every one. A request left without an
   * answer (noAnswer) is given up once the sandbox has stored its purchase, as a client's time-out
   * would, or at once when it stores nothing (a lookup).
   */
  const faulty = (fault: string, every: boolean, op: string, reference: string, waits: number[] = []) => {
    let tries = 0;
    return clientOf(t.sandbox, t.base, {
      // The waits are recorded, not waited: a Retry-After of seconds would make this file minutes long.
      retry: { attempts: 4, baseDelayMs: 1, sleep: async (ms) => void waits.push(ms) },
      fetch: async (request) => {
        const first = tries++ === 0;
        if (!every && !first) return fetch(request);
        const faulted = new Request(request);
        faulted.headers.set(HEADER, fault);
        if (fault !== 'noAnswer') return fetch(faulted);
        const giveUp = new AbortController();
        const waiting = fetch(faulted, { signal: giveUp.signal });
        void (async () => {
          if (first) while (!(await stored(op, reference))) await new Promise((resolve) => setTimeout(resolve, 10));
          giveUp.abort(new DOMException('the client gave up', 'TimeoutError'));
        })();
        return waiting;
      },
    });
  };

  for (const fault of FAULTS)
    for (const every of [false, true])
      it(`${fault}, ${every ? 'on every request' : 'on the first try'}: no operation charges twice`, async () => {
        for (const [op, send] of Object.entries(movers)) {
          const reference = `F-${op}-${fault.split('=')[0]}-${every ? 'all' : 'once'}`;
          const ended = await send(faulty(fault, every, op, reference), reference).then(
            (answer) => {
              const a = answer as { responseCode: string };
              return recoveredBy(answer) ? `recovered ${a.responseCode}` : `answered ${a.responseCode}`;
            },
            (e: Error) => e.name,
          );
          const charges = await stored(op, reference);
          rows.push(
            `${fault.padEnd(18)} ${(every ? 'every request' : 'first try').padEnd(14)} ${op.padEnd(18)} ${ended.padEnd(28)} charges ${charges}`,
          );
          expect(charges, `${op}: ${ended}`).toBeLessThanOrEqual(1);
          const stores = scenarios.faults[fault.split('=')[0] as keyof typeof scenarios.faults].stores;
          // A fault that passes ends in the one charge, answered (the first try's own answer, or the
          // second's after a lookup that found nothing) or recovered from the lookup.
          if (!every) expect(`${ended}, charges ${charges}`, op).toMatch(/^(answered|recovered) (0|10), charges 1$/);
          if (every && !stores) expect(charges, op).toBe(0);
        }
      });

  it('examples/purchase-retry.ts, run against each fault in turn (FAULT=…), charges once', async () => {
    const run = promisify(execFile);
    // Side by side, an order of its own each: the faults that lose the answer wait out the example's
    // 2 s time-out, and those waits overlap.
    const runs = await Promise.all(
      FAULTS.map(async (fault) => {
        const order = `EX-${fault.split('=')[0]}`;
        const { stdout } = await run(process.execPath, ['examples/purchase-retry.ts'], {
          cwd: ROOT,
          env: { ...process.env, GATEWAY_URL: t.base, ORDER: order, FAULT: fault, TIMEOUT_MS: '2000' },
        });
        return { fault, order, last: stdout.trim().split('\n').at(-1)! };
      }),
    );
    for (const { fault, order, last } of runs) {
      rows.push(`${fault.padEnd(18)} example        processCard        ${last.slice(0, 60)}`);
      expect(last, fault).toMatch(
        new RegExp(`^(answer lost; queryCard found ${order}: paid, not sent again|paid: 1336-)`),
      );
      expect(await stored('processCard', order), fault).toBe(1);
    }
  }, 60_000);

  it('waits what a 503 asks for (Retry-After, within maxDelayMs) before it looks up and sends again', async () => {
    const waits: number[] = [];
    const answer = await faulty('unavailable=3', false, 'processCard', 'F-RETRY-AFTER', waits).processCard(
      purchase('F-RETRY-AFTER'),
    );
    expect(answer.responseCode).toBe('0');
    expect(waits).toEqual([3000]);
  });

  afterAll(() => {
    console.log(
      `the retry layer against each fault (fault, where, operation, how the call ended, charges):\n  ${rows.join('\n  ')}`,
    );
  });
});
