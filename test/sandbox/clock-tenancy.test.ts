// Finding: one account moving the clock moved it for every account, although the control API says
// each account changes only its own data. Each account has its own clock: a sequence of advances by
// several accounts leaves each at the sum of its own, on every instance sharing the store; an
// account's access token expires on its own time, not on another's; each account's answers are dated
// (their HTTP Date header) on its own time, the gateway's and the control API's alike.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGatewayClient } from '../../generated/client.ts';
import { createControlClient, type ControlClient } from '../../sandbox/control-client.ts';
import { startSandbox, type TestSandbox } from './support.ts';

let t: TestSandbox;
const accounts: { id: string; control: ControlClient }[] = [];

beforeAll(async () => {
  t = await startSandbox({ control: true });
  const { store, clock, seed } = t.sandbox;
  // Two more merchants of the sandbox partner, and the partner itself: four clocks.
  for (const id of ['tenant0000a1', 'tenant0000b2'])
    await store.run(
      'INSERT INTO accounts (kind, id, api_key, passphrase, partner_id, created_at) VALUES (?, ?, ?, ?, ?, ?)',
      'merchant',
      id,
      'tenantkey',
      'tenantpass',
      seed.partnerUUID,
      clock.timestamp(),
    );
  for (const [id, apiKey] of [
    [seed.merchantUUID, seed.apiKey],
    ['tenant0000a1', 'tenantkey'],
    ['tenant0000b2', 'tenantkey'],
    [seed.partnerUUID, seed.apiKey],
  ] as const)
    accounts.push({ id, control: createControlClient({ baseUrl: t.base, accountId: id, apiKey }) });
});
afterAll(() => t.close());

const offset = async (c: ControlClient) => ((await c.clock()) as { offsetSeconds: number }).offsetSeconds;

describe('a clock per account', () => {
  it('each account moves its own time only', async () => {
    const expected = new Map<string, number>();
    for (const a of accounts) expected.set(a.id, await offset(a.control));
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 3 }), fc.integer({ min: 1, max: 90_000 })), {
          minLength: 1,
          maxLength: 6,
        }),
        async (moves) => {
          for (const [who, seconds] of moves) {
            const a = accounts[who]!;
            await a.control.advanceClock({ seconds });
            expected.set(a.id, expected.get(a.id)! + seconds);
          }
          for (const a of accounts)
            expect(Math.abs((await offset(a.control)) - expected.get(a.id)!), a.id).toBeLessThanOrEqual(1);
        },
      ),
      { seed: 2821, numRuns: 15 },
    );
  });

  it("an access token expires on its merchant's time, not on another account's", async () => {
    const { store, seed } = t.sandbox;
    await store.run(
      'INSERT INTO access_tokens (token, merchant_id, amount, currency, expires_at) VALUES (?, ?, ?, ?, ?)',
      'attenancy0000001',
      seed.merchantUUID,
      '1.00',
      'AUD',
      // ten minutes after the merchant's now
      await (async () => {
        const now = (await accounts[0]!.control.clock()) as { now: string };
        return new Date(Date.parse(`${now.now.replace(' ', 'T')}Z`) + 600_000)
          .toISOString()
          .slice(0, 19)
          .replace('T', ' ');
      })(),
    );
    const { storeAccounts } = await import('../../sandbox/accounts.ts');
    const lookup = storeAccounts(store, t.sandbox.clock);
    await accounts[1]!.control.advanceClock({ days: 1 }); // another merchant's day passes
    expect(await lookup.findByAccessToken('attenancy0000001')).toMatchObject({ id: seed.merchantUUID });
    await accounts[0]!.control.advanceClock({ seconds: 601 }); // its own ten minutes
    expect(await lookup.findByAccessToken('attenancy0000001')).toBeUndefined();
  });

  it("dates each account's answers on its own time: the Date header of the gateway and of the control API", async () => {
    const { seed } = t.sandbox;
    const keys = [
      [seed.merchantUUID, seed.apiKey, seed.passphrase],
      ['tenant0000a1', 'tenantkey', 'tenantpass'],
    ] as const;
    await accounts[1]!.control.advanceClock({ days: 3 });
    for (const [i, [merchantUUID, apiKey, passphrase]] of keys.entries()) {
      let date = '';
      const client = createGatewayClient({
        baseUrl: t.base,
        merchantUUID,
        apiKey,
        passphrase,
        fetch: async (request) => {
          const response = await fetch(request);
          date = response.headers.get('date') ?? '';
          return response;
        },
      });
      const token = await client.getAccessToken({ transactionAmount: '1.00', transactionCurrency: 'AUD' });
      expect(Number(token.responseCode), merchantUUID).toBe(0);
      const answered = Date.parse(date);
      const response = await fetch(`${t.base}/_sandbox/clock`, {
        headers: { authorization: `Basic ${btoa(`${merchantUUID}:${apiKey}`)}` },
      });
      const own = Date.parse(`${((await response.json()) as { now: string }).now.replace(' ', 'T')}Z`);
      // Whole seconds on both sides, a request apart.
      expect(Math.abs(answered - own), merchantUUID).toBeLessThanOrEqual(2000);
      expect(Math.abs(Date.parse(response.headers.get('date') ?? '') - own), merchantUUID).toBeLessThanOrEqual(1000);
      if (i === 1) expect(answered - Date.now()).toBeGreaterThan(3 * 86_400_000 - 60_000);
    }
  });
});
