// The sandbox control API over HTTP, through its typed client: clock, forced outcomes, payout
// returns, triggered notifications, deliveries (long poll), reset, and the guard that keeps it off
// anything but a sandbox.
import { readFileSync } from 'node:fs';
import SwaggerParser from '@apidevtools/swagger-parser';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyNotification } from '../../notifications/index.ts';
import { onAccountTime } from '../../sandbox/clock-store.ts';
import { ControlError, createControlClient, type ControlClient } from '../../sandbox/control-client.ts';
import { card, counts, customer, startSandbox, type TestSandbox } from './support.ts';
import { bankDebit } from '../support/requests.ts';

let t: TestSandbox;
let control: ControlClient;
let status = 204;
const raw: { url: string; body: string; headers: Record<string, string> }[] = [];

beforeAll(async () => {
  t = await startSandbox({
    control: true,
    fetch: (async (url: string, init: RequestInit) => {
      raw.push({ url, body: String(init.body), headers: init.headers as Record<string, string> });
      return new Response(null, { status });
    }) as typeof fetch,
  });
  control = createControlClient({
    baseUrl: t.base,
    accountId: t.sandbox.seed.merchantUUID,
    apiKey: t.sandbox.seed.apiKey,
  });
});
afterAll(() => t.close());

const purchase = (reference: string) =>
  ({
    transactionAmount: '10.00',
    transactionCurrency: 'AUD',
    transactionProduct: 'Control',
    transactionReferenceID: reference,
    ...customer,
    ...card.visa,
  }) as never;
/** The merchant's time: each account has its own clock (clock-store.ts). */
const merchantNow = () =>
  onAccountTime(t.sandbox.store, t.sandbox.clock, { kind: 'merchant', id: t.sandbox.seed.merchantUUID }, () =>
    t.sandbox.clock.now(),
  );
const refusalOf = (p: Promise<unknown>) =>
  p.then(
    () => 'accepted',
    (e: unknown) => (e instanceof ControlError ? `${e.responseCode} ${e.message}` : String(e)),
  );

describe('its document', () => {
  it('is valid OpenAPI 3.1 and is no part of the gateway contract', async () => {
    const doc = parse(readFileSync('sandbox/control.openapi.yaml', 'utf8'));
    await expect(SwaggerParser.validate(structuredClone(doc))).resolves.toBeTruthy();
    const gateway = JSON.parse(readFileSync('generated/openapi.json', 'utf8'));
    for (const p of Object.keys(doc.paths)) expect(Object.keys(gateway.paths)).not.toContain(p);
    expect(JSON.stringify(gateway)).not.toContain('_sandbox');
  });

  it('is served by the sandbox', async () => {
    expect(await (await fetch(`${t.base}/_sandbox/openapi.yaml`)).text()).toBe(
      readFileSync('sandbox/control.openapi.yaml', 'utf8'),
    );
  });
});

describe('authentication', () => {
  it("refuses a call without the account's credentials, or with another apiKey", async () => {
    expect(await (await fetch(`${t.base}/_sandbox/clock`)).json()).toEqual({
      responseCode: -1,
      responseMessage: expect.stringContaining('Invalid credentials'),
    });
    const wrong = createControlClient({
      baseUrl: t.base,
      accountId: t.sandbox.seed.merchantUUID,
      apiKey: 'not-the-key',
    });
    expect(await refusalOf(wrong.clock())).toMatch(/^-1 /);
  });
});

describe('the clock', () => {
  it('moves on: a pending direct debit settles', async () => {
    const debit = (await t.client.processDDebit(bankDebit('5.00') as never)) as {
      transactionID: string;
      responseCode: string;
    };
    expect(debit.responseCode).toBe('10');
    const before = (await control.clock()).offsetSeconds;
    const moved = await control.advanceClock({ days: 2 });
    expect(moved.offsetSeconds - before).toBeGreaterThanOrEqual(2 * 86_400 - 1);
    expect((await t.client.queryDD({ transactionID: debit.transactionID })).responseCode).toBe('0');
  });

  it('moves on: an access token expires', async () => {
    const token = (await t.client.getAccessToken({
      transactionAmount: '1.00',
      transactionCurrency: 'AUD',
    } as never)) as { responseCode: string; token?: string; accessToken?: string };
    expect(token.responseCode).toBe('0');
    const value = token.accessToken ?? token.token!;
    const expires = (await t.sandbox.store.get('SELECT expires_at FROM access_tokens WHERE token = ?', value))!
      .expires_at as string;
    expect(t.sandbox.gateway === undefined).toBe(false);
    const live = async () =>
      t.sandbox.store.get(
        'SELECT 1 AS ok FROM access_tokens WHERE token = ? AND expires_at > ?',
        value,
        (await merchantNow()).toISOString().slice(0, 19).replace('T', ' '),
      );
    expect(await live()).toBeTruthy();
    await control.advanceClock({
      seconds: Math.ceil((Date.parse(`${expires.replace(' ', 'T')}Z`) - (await merchantNow()).getTime()) / 1000) + 1,
    });
    expect(await live()).toBeFalsy();
  });

  it('refuses a bad move, naming the field and the rule, and changes nothing', async () => {
    const before = (await control.clock()).offsetSeconds;
    expect(await refusalOf(control.advanceClock({ days: -1 }))).toBe("-2 Field 'days' is invalid: must be at least 1");
    expect(await refusalOf(control.advanceClock({ hours: 1 } as never))).toBe(
      "-2 Field 'hours' is not a field of this request",
    );
    expect(await refusalOf(control.advanceClock({}))).toBe('-3 The body names no field');
    expect(
      await (
        await fetch(`${t.base}/_sandbox/clock/advance`, {
          method: 'POST',
          headers: { authorization: `Basic ${btoa(`${t.sandbox.seed.merchantUUID}:${t.sandbox.seed.apiKey}`)}` },
          body: '{"days": ',
        })
      ).json(),
    ).toEqual({ responseCode: -2, responseMessage: 'The body is not JSON' });
    expect(
      await (
        await fetch(`${t.base}/_sandbox/clock/advance`, {
          method: 'POST',
          headers: { authorization: `Basic ${btoa(`${t.sandbox.seed.merchantUUID}:${t.sandbox.seed.apiKey}`)}` },
          body: `{"days": 1, "pad": "${'x'.repeat(20_000)}"}`,
        })
      ).json(),
    ).toEqual({ responseCode: -2, responseMessage: 'The body is invalid: larger than 16384 bytes' });
    expect((await control.clock()).offsetSeconds).toBe(before);
  });
});

describe('forced outcomes', () => {
  it('declines the next purchase with the chosen bank answer, and only the next', async () => {
    await control.forceNextOutcome({ operationId: 'processCard', outcome: 'insufficientFunds' });
    expect(await t.client.processCard(purchase('F-1'))).toMatchObject({
      responseCode: '5',
      responseMessage: 'Insufficient funds',
      authResponseCode: '51',
    });
    expect(await t.client.queryCard({ transactionReferenceID: 'F-1' })).toMatchObject({
      transactionStatus: 'declined',
      capturedAmount: '0.00',
    });
    expect((await t.client.processCard(purchase('F-2'))).responseCode).toBe('0');
  });

  it('dishonours a direct debit: queryDD answers it declined, and its outcome is notified, hashed with the salt', async () => {
    const debit = (await t.client.processDDebit(bankDebit('7.00', { transactionReferenceID: 'DH-1' }) as never)) as {
      transactionID: string;
    };
    raw.length = 0;
    await control.dishonourDirectDebit(debit.transactionID, { notifyURL: 'https://m.test/dd', hashSalt: 'pepper' });
    expect(await t.client.queryDD({ transactionReferenceID: 'DH-1' })).toMatchObject({
      responseCode: '7',
      responseMessage: 'Transaction declined',
    });
    await t.sandbox.notifier.deliverDue();
    const note = raw.find((r) => r.url === 'https://m.test/dd')!;
    expect(
      verifyNotification(note.body, note.headers, { passphrase: t.sandbox.seed.passphrase, hashSalt: 'pepper' })
        .notification,
    ).toMatchObject({ status: 'declined', responseCode: '7', transactionID: debit.transactionID });
    expect(await refusalOf(control.dishonourDirectDebit(debit.transactionID))).toBe(
      "-2 Field 'transactionID' is invalid: the debit is already dishonoured",
    );
    expect(await refusalOf(control.dishonourDirectDebit('1336-nope'))).toBe(
      "-2 Field 'transactionID' is invalid: no such direct debit of this merchant",
    );
  });

  it('returns a paid payout transaction and notifies it (payoutReturned), signed', async () => {
    const payout = (await t.client.payouts.create({
      reference: 'C-1',
      notifyURL: 'https://m.test/c',
      transactions: [
        { payee: { name: 'P' }, transaction: { reference: 'C-1-1', amount: 9, bsb: '802950', accNumber: '123321' } },
      ],
    })) as { result: { payoutId: string; transactions: { transactionId: string }[] } };
    // Still pending on NPP: nothing to return yet. completePayout ends its attempts now (approved).
    expect(await refusalOf(control.returnPayoutTransaction(payout.result.payoutId, 'C-1-1'))).toMatch(/pending/);
    expect((await control.completePayout('C-1')).responseCode).toBe(0);
    expect(
      (
        (await t.client.payouts.getTransactionStatus(payout.result.payoutId, 'C-1-1')) as {
          result: { payouts: { status: string }[] };
        }
      ).result.payouts.map((p) => p.status),
    ).toEqual(['approved']);
    expect(await refusalOf(control.completePayout('NO-SUCH-PAYOUT'))).toMatch(/^-2 Field 'payoutId' is invalid/);
    await t.sandbox.notifier.deliverDue();
    raw.length = 0;
    const returned = await control.returnPayoutTransaction(payout.result.payoutId, 'C-1-1');
    expect((returned.result as { payouts: { status: string }[] }).payouts.at(-1)!.status).toBe('returned');
    expect(
      (
        (await t.client.payouts.getTransactionStatus(payout.result.payoutId, 'C-1-1')) as {
          result: { payouts: { status: string }[] };
        }
      ).result.payouts.at(-1)!.status,
    ).toBe('returned');
    await t.sandbox.notifier.deliverDue();
    const note = raw.find((r) => r.url === 'https://m.test/c')!;
    // The sandbox clock is days ahead by now: the receiver compares with the sandbox's time.
    expect(
      verifyNotification(note.body, note.headers, { passphrase: t.sandbox.seed.passphrase, now: await merchantNow() })
        .kind,
    ).toBe('payoutReturned');
    expect(await refusalOf(control.returnPayoutTransaction(payout.result.payoutId, 'C-1-1'))).toBe(
      "-2 Field 'transactionId' is invalid: its last attempt is returned; only a paid (approved) transaction can be returned",
    );
  });
});

describe('notifications and deliveries', () => {
  it('triggers a declared notification and lists it with its attempts; a failing receiver is retried as the clock moves', async () => {
    const debit = (await t.client.processDDebit(bankDebit('6.00') as never)) as { transactionID: string };
    const { deliveries: before } = await control.deliveries();
    const last = before.at(-1)?.id ?? 0;
    status = 500;
    await control.triggerNotification({
      event: 'directDebitOutcome',
      transactionID: debit.transactionID,
      notifyURL: 'https://m.test/down',
    });
    await t.sandbox.notifier.deliverDue();
    status = 204;
    const [d] = (await control.deliveries({ after: last })).deliveries;
    expect(d).toMatchObject({
      event: 'directDebitOutcome',
      subject: debit.transactionID,
      delivered: false,
      attempts: [{ status: 500 }],
    });
    expect(JSON.parse(d!.body).transactionID).toBe(debit.transactionID);
    expect((await control.advanceClock({ seconds: 61 })).delivered).toBeGreaterThanOrEqual(1);
    expect((await control.delivery(d!.id)).delivery).toMatchObject({
      delivered: true,
      attempts: [{ status: 500 }, { status: 204 }],
    });
    expect(
      await refusalOf(
        control.triggerNotification({ event: 'chargeback', transactionID: 'x', notifyURL: 'https://m.test/' } as never),
      ),
    ).toMatch(/^-2 Field 'event' is invalid/);
    expect(
      await refusalOf(
        control.triggerNotification({
          event: 'batchNotify',
          transactionID: 'no-such-batch',
          notifyURL: 'https://m.test/',
        }),
      ),
    ).toBe("-2 Field 'transactionID' is invalid: no such batch");
  });

  it('long-polls: a waiting list answers as soon as a notification is queued', async () => {
    const { deliveries } = await control.deliveries();
    const after = deliveries.at(-1)?.id ?? 0;
    const waiting = control.deliveries({ after, waitSeconds: 10 });
    await new Promise((r) => setTimeout(r, 100));
    await t.client.payouts.create({
      reference: 'LP-1',
      notifyURL: 'https://m.test/lp',
      transactions: [
        { payee: { name: 'P' }, transaction: { reference: 'LP-1-1', amount: 3, bsb: '802950', accNumber: '123321' } },
      ],
    });
    // Its notification is queued when its attempts end: completed now through the control API.
    await control.completePayout('LP-1');
    const got = await waiting;
    expect(got.deliveries.map((d) => d.url)).toEqual(['https://m.test/lp']);
    expect(got.deliveries[0]!.headers['SVC-MESSAGEHASH']).toMatch(/^[0-9a-f]{64}$/);
  });

  it('shows an account its own deliveries only', async () => {
    const partner = createControlClient({
      baseUrl: t.base,
      accountId: t.sandbox.seed.partnerUUID,
      apiKey: t.sandbox.seed.apiKey,
    });
    expect((await partner.deliveries()).deliveries.every((d) => d.event === 'merchantCreated')).toBe(true);
  });
});

describe('reset', () => {
  it('deletes what the merchant did, puts its clock back on real time, and keeps the account, which still transacts', async () => {
    const other = await t.sandbox.store.all('SELECT count(*) AS n FROM accounts');
    await control.advanceClock({ days: 3 });
    expect((await control.clock()).offsetSeconds).toBeGreaterThanOrEqual(3 * 86_400 - 5);
    const result = await control.resetMerchant(t.sandbox.seed.merchantUUID);
    // Its clock is back on real time: a clock only moves on, so this is how a team starts again.
    expect(Math.abs((await control.clock()).offsetSeconds)).toBeLessThanOrEqual(5);
    expect(result.deleted.transactions).toBeGreaterThan(0);
    const left = await counts(t.sandbox);
    for (const table of ['transactions', 'direct_debits', 'payouts', 'payout_transactions', 'notifications', 'cards'])
      expect(left[table], table).toBe(0);
    expect(await t.sandbox.store.all('SELECT count(*) AS n FROM accounts')).toEqual(other);
    expect((await t.client.processCard(purchase('AFTER-RESET'))).responseCode).toBe('0');
    expect(await refusalOf(control.resetMerchant('someoneelse00'))).toBe(
      "-2 Field 'merchantUUID' is invalid: a merchant resets its own data only",
    );
  });
});

describe('the guard', () => {
  for (const [what, options] of [
    ['not asked for', { control: false, env: {} }],
    ['NODE_ENV=production, even when asked for', { control: true, env: { NODE_ENV: 'production' } }],
    ['PGW_SANDBOX_CONTROL=off, even when asked for', { control: true, env: { PGW_SANDBOX_CONTROL: 'off' } }],
  ] as const) {
    it(`is off when ${what}`, async () => {
      const off = await startSandbox(options);
      try {
        expect(off.sandbox.control).toBeUndefined();
        const answer = await fetch(`${off.base}/_sandbox/clock`, {
          headers: { authorization: `Basic ${btoa(`${off.sandbox.seed.merchantUUID}:${off.sandbox.seed.apiKey}`)}` },
        });
        expect(answer.status).toBe(404);
        expect(await answer.text()).not.toContain('"now"');
      } finally {
        await off.close();
      }
    });
  }
});
