// Retries that never pay twice, against the sandbox behind a proxy that loses answers after the
// sandbox has committed them (and, for contrast, before it sees the request).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createGatewayClient,
  type GatewayClient,
  GatewayNetworkError,
  GatewayOutcomeUnknownError,
  recoveredBy,
  type RetryEvent,
} from '../../generated/client.ts';
import { card, customer, startSandbox, type TestSandbox } from '../sandbox/support.ts';
import { startDroppingProxy, type DroppingProxy, type Fate } from '../support/dropping-proxy.ts';
import { bankDebit } from '../support/requests.ts';
import { retryTables, unmarkedMoneyMovers } from './retry-checks.ts';

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
