// notifications/index.ts against what the sandbox really posts: each webhook's raw body and
// headers, recorded at the sandbox's fetch, verified; then the same deliveries tampered with.
import { zipSync } from 'fflate';
import { createControlClient } from '../../sandbox/control-client.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instantOf, wallTime } from '../../runtime/gateway-time.ts';
import {
  DEFAULT_TOLERANCE_SECONDS,
  notificationDelivery,
  NotificationDispatcher,
  NotificationError,
  memoryDuplicateCheck,
  parseNotification,
  signTestNotification,
  verifyNotification,
  webhooks,
  type Notification,
} from '../../notifications/index.ts';
import { startSandbox, type TestSandbox } from '../sandbox/support.ts';
import { approved } from '../support/approved.ts';
import { widgetsMerchant } from '../support/requests.ts';
import { writeSample } from '../support/samples.ts';

interface Raw {
  url: string;
  body: string;
  headers: Record<string, string>;
}
const raw: Raw[] = [];
let t: TestSandbox;
const passphrase = () => t.sandbox.seed.passphrase;

beforeAll(async () => {
  t = await startSandbox({
    control: true,
    fetch: (async (url: string, init: RequestInit) => {
      raw.push({ url, body: String(init.body), headers: init.headers as Record<string, string> });
      return new Response(null, { status: 204 });
    }) as typeof fetch,
  });
});
afterAll(() => t.close());

async function delivered(url: string): Promise<Raw[]> {
  await t.sandbox.notifier.deliverDue();
  return raw.filter((r) => r.url === url);
}

function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    if (error instanceof NotificationError) return error.reason;
    throw error;
  }
  return 'accepted';
}

describe('every webhook the spec declares, as the sandbox sends it', () => {
  const sent: Record<string, Raw> = {};
  beforeAll(async () => {
    const payout = await t.client.payouts.create({
      reference: 'N-1',
      notifyURL: 'https://m.test/payouts',
      transactions: [
        {
          payee: { name: 'P' },
          transaction: { reference: 'N-1-1', amount: 12.5, bsb: '802950', accNumber: '13131313' },
        },
      ],
    });
    expect(payout.responseCode).toBe(0);
    // Notified once its attempts have ended (NPP declined, then DE returned): ended now through the control API.
    await createControlClient({
      baseUrl: t.base,
      accountId: t.sandbox.seed.merchantUUID,
      apiKey: t.sandbox.seed.apiKey,
    }).completePayout('N-1');
    sent.payoutTransaction = (await delivered('https://m.test/payouts'))[0]!;
    await t.client.processDDebitAuth({
      customerName: 'Jane',
      paymentAccountBSB: '802950',
      paymentAccountName: 'Jane',
      paymentAccountNumber: '123321',
      transactionAmount: '20.00',
      transactionCurrency: 'AUD',
      returnURL: 'https://m.test/return',
      notifyURL: 'https://m.test/dd',
      hashSalt: 'pepper',
    });
    sent.directDebitOutcome = (await delivered('https://m.test/dd'))[0]!;
    const { cardID, cardKey } = approved(
      await t.client.token.addCard({
        cardName: 'Batch',
        cardNumber: '4564710000000004',
        cardExpiryMonth: '02',
        cardExpiryYear: '29',
      }),
    );
    const csv = `transactionReferenceID,transactionAmount,transactionCurrency,transactionProduct,cardID,cardKey\nB-1,5.00,AUD,Box,${cardID},${cardKey}\n`;
    await t.client.processBatch({
      batchFile: Buffer.from(zipSync({ 'b.csv': new TextEncoder().encode(csv) })).toString('base64'),
      batchNotifyURL: 'https://m.test/batch',
    });
    sent.batchNotify = (await delivered('https://m.test/batch'))[0]!;
    await t.client.partner.addMerchant(widgetsMerchant);
    sent.merchantCreated = (await delivered('https://partner.test/notify'))[0]!;
  });

  it('has a delivery of each', () => {
    expect(Object.keys(sent).sort()).toEqual(Object.keys(webhooks).sort());
  });

  it('dates each notification in its own zone (x-operation.receive.occurredAt), as docs/CLIENT-TEAMS.md lists them', () => {
    // A receiver in another language reads the time by these rules: a payout's lastUpdated is Sydney's
    // wall clock, not UTC (the guide once said every notification was dated in UTC).
    const rows: string[] = [];
    for (const [event, hook] of Object.entries(webhooks)) {
      const at = (hook as { occurredAt?: { at: string; zone: string } }).occurredAt;
      if (!at) {
        rows.push(`${event.padEnd(20)} carries no time of its own`);
        continue;
      }
      let value: unknown = JSON.parse(sent[event]!.body);
      for (const part of at.at.split('.'))
        value = Array.isArray(value) ? value.at(Number(part)) : (value as Record<string, unknown>)[part];
      // Read in its zone, the time is the sandbox's now (within the minute the deliveries took).
      const now = t.sandbox.clock.now();
      expect(Math.abs(instantOf(String(value), at.zone).getTime() - now.getTime()), event).toBeLessThan(60_000);
      rows.push(`${event.padEnd(20)} ${at.at} in ${at.zone} wall time (YYYY-MM-DD HH:MM:SS)`);
    }
    writeSample('notification-times', rows.join('\n'), 'docs/CLIENT-TEAMS.md');
  });

  for (const event of Object.keys(webhooks)) {
    describe(event, () => {
      const options = { passphrase: () => passphrase(), hashSalt: 'pepper' };
      it('verifies as sent', () => {
        const v = verifyNotification(sent[event]!.body, sent[event]!.headers, options);
        expect(v.notification.event).toBe(event);
      });
      it('refuses a tampered body', () => {
        const body = JSON.parse(sent[event]!.body);
        const field = Object.keys(body).find((k) => k !== 'event' && k !== 'hash')!;
        body[field] = typeof body[field] === 'string' ? `${body[field]}x` : { tampered: true };
        expect(refusal(() => verifyNotification(JSON.stringify(body), sent[event]!.headers, options))).toBe(
          'badSignature',
        );
      });
      it('refuses a signature made with another passphrase', () => {
        expect(
          refusal(() =>
            verifyNotification(sent[event]!.body, sent[event]!.headers, {
              ...options,
              passphrase: 'not-the-passphrase',
            }),
          ),
        ).toBe('badSignature');
      });
      it('round-trips through the test-signature generator', () => {
        const body = JSON.parse(sent[event]!.body) as Notification;
        const signed = signTestNotification(body, { passphrase: passphrase(), hashSalt: 'pepper' });
        if (webhooks[event as keyof typeof webhooks].signature.in === 'header') {
          expect(signed.headers['SVC-MESSAGEHASH']).toBe(sent[event]!.headers['SVC-MESSAGEHASH']);
        } else {
          expect(JSON.parse(signed.body).hash).toBe(JSON.parse(sent[event]!.body).hash);
        }
      });
    });
  }

  it('refuses a header-signed notification without its header, and one with a wrong header', () => {
    const p = sent.payoutTransaction!;
    expect(
      refusal(() => verifyNotification(p.body, { 'content-type': 'application/json' }, { passphrase: passphrase() })),
    ).toBe('missingSignature');
    expect(
      refusal(() => verifyNotification(p.body, { 'svc-messagehash': 'ab'.repeat(32) }, { passphrase: passphrase() })),
    ).toBe('badSignature');
  });

  it('needs the hashSalt for a direct debit outcome, and refuses another salt', () => {
    const d = sent.directDebitOutcome!;
    expect(refusal(() => verifyNotification(d.body, d.headers, { passphrase: passphrase() }))).toBe('needsHashSalt');
    expect(refusal(() => verifyNotification(d.body, d.headers, { passphrase: passphrase(), hashSalt: 'salt' }))).toBe(
      'badSignature',
    );
  });

  it('refuses a notification dated outside the replay window, by the time it carries', () => {
    const p = sent.payoutTransaction!;
    const at = verifyNotification(p.body, p.headers, { passphrase: passphrase() }).occurredAt!;
    expect(Math.abs(at.getTime() - t.sandbox.clock.now().getTime())).toBeLessThan(10_000);
    const later = new Date(at.getTime() + 301_000);
    expect(
      refusal(() =>
        verifyNotification(p.body, p.headers, { passphrase: passphrase(), now: later, toleranceSeconds: 300 }),
      ),
    ).toBe('stale');
    expect(
      refusal(() =>
        verifyNotification(p.body, p.headers, { passphrase: passphrase(), now: later, toleranceSeconds: 600 }),
      ),
    ).toBe('accepted');
    // `now` may be asked at each delivery (a sandbox whose clock was moved on).
    expect(
      refusal(() =>
        verifyNotification(p.body, p.headers, { passphrase: passphrase(), now: () => later, toleranceSeconds: 300 }),
      ),
    ).toBe('stale');
    // A notification that carries no time has no window.
    const d = sent.directDebitOutcome!;
    expect(
      refusal(() =>
        verifyNotification(d.body, d.headers, { passphrase: passphrase(), hashSalt: 'pepper', now: new Date(0) }),
      ),
    ).toBe('accepted');
  });

  it("accepts by default the gateway's last retry, sent as late as its schedule allows, and nothing older", () => {
    // x-notification-delivery: retried after 1, 2, 4, 8 and 16 minutes, each post up to its time-out. A
    // 300 s window (the default before) refused every retry after the third as stale: a receiver down
    // for ten minutes lost what was sent meanwhile.
    const p = sent.payoutTransaction!;
    const at = verifyNotification(p.body, p.headers, { passphrase: passphrase() }).occurredAt!;
    const { retryAfterMinutes, timeoutSeconds } = notificationDelivery;
    const lastRetry =
      retryAfterMinutes.reduce((sum: number, m) => sum + m * 60, 0) + retryAfterMinutes.length * timeoutSeconds;
    const at_ = (seconds: number) => new Date(at.getTime() + seconds * 1000);
    expect(
      refusal(() => verifyNotification(p.body, p.headers, { passphrase: passphrase(), now: at_(lastRetry) })),
    ).toBe('accepted');
    expect(DEFAULT_TOLERANCE_SECONDS).toBeGreaterThanOrEqual(lastRetry);
    expect(
      refusal(() =>
        verifyNotification(p.body, p.headers, { passphrase: passphrase(), now: at_(DEFAULT_TOLERANCE_SECONDS + 1) }),
      ),
    ).toBe('stale');
  });

  it('acknowledges a notification older than one handled about the same subject without handling it (out of order)', async () => {
    const seen: string[] = [];
    const dispatcher = new NotificationDispatcher({ passphrase: passphrase() }).on(
      'payoutTransaction',
      (n) => void seen.push(String(n.result.payouts.at(-1)?.status)),
    );
    const body = JSON.parse(sent.payoutTransaction!.body) as Notification & { event: 'payoutTransaction' };
    const last = body.result.payouts.at(-1)!;
    // The returned state, then the approval it followed, delivered late.
    const newer = structuredClone(body);
    Object.assign(newer.result.payouts.at(-1)!, { status: 'returned' });
    const older = structuredClone(body);
    Object.assign(older.result.payouts.at(-1)!, {
      status: 'approved',
      lastUpdated: wallTime(
        new Date(
          verifyNotification(sent.payoutTransaction!.body, sent.payoutTransaction!.headers, {
            passphrase: passphrase(),
          }).occurredAt!.getTime() - 60_000,
        ),
        'Australia/Sydney',
      ),
    });
    expect(last.status).toBe('returned');
    const post = (n: Notification) => {
      const signed = signTestNotification(n, { passphrase: passphrase() });
      return dispatcher.handle(signed.body, signed.headers);
    };
    expect((await post(newer)).status).toBe('handled');
    expect((await post(older)).status).toBe('outdated');
    expect(seen).toEqual(['returned']);
    // Without an order check every notification reaches the handlers, late or not.
    const history = new NotificationDispatcher({ passphrase: passphrase(), order: false }).on(
      'payoutTransaction',
      (n) => void seen.push(String(n.result.payouts.at(-1)?.status)),
    );
    for (const n of [newer, older]) {
      const signed = signTestNotification(n, { passphrase: passphrase() });
      expect((await history.handle(signed.body, signed.headers)).status).toBe('handled');
    }
    expect(seen).toEqual(['returned', 'returned', 'approved']);
  });

  it('refuses what is not a notification of the contract, naming the field', () => {
    expect(refusal(() => parseNotification('not json'))).toBe('malformed');
    expect(refusal(() => parseNotification('{"event":"chargeback"}'))).toBe('unknownEvent');
    expect(() => parseNotification('{"event":"batchNotify","batchUUID":"x","status":"completed"}')).toThrow(
      "Field 'transactions' is required",
    );
  });

  it('dispatches by event and by kind, once per delivery even when the gateway repeats it', async () => {
    const seen: string[] = [];
    const dispatcher = new NotificationDispatcher({ passphrase: passphrase(), duplicates: memoryDuplicateCheck() })
      .on('payoutTransaction', (n) => void seen.push(`payout ${n.payoutId}`))
      .on('payoutReturned', (n) => void seen.push(`returned ${n.result.transaction.reference}`))
      .on('batchNotify', (n) => void seen.push(`batch ${n.batchUUID}`));
    const p = sent.payoutTransaction!;
    expect((await dispatcher.handle(p.body, p.headers)).status).toBe('handled');
    // The sandbox resends it (Resend Notifications): the same delivery key, handled once.
    const payoutId = JSON.parse(p.body).payoutId;
    await t.client.payouts.resendNotifications(payoutId);
    const again = (await delivered('https://m.test/payouts')).at(-1)!;
    expect(again).not.toBe(p);
    expect((await dispatcher.handle(again.body, again.headers)).status).toBe('duplicate');
    const tampered = await dispatcher.handle(p.body.replace('N-1-1', 'N-1-2'), p.headers);
    expect(tampered.status).toBe('refused');
    expect(seen).toEqual([`payout ${payoutId}`, 'returned N-1-1']);
  });

  it('handles a delivery again when its handler failed the first time', async () => {
    let calls = 0;
    const dispatcher = new NotificationDispatcher({ passphrase: passphrase() }).on('payoutTransaction', () => {
      if (++calls === 1) throw new Error('database down');
    });
    const p = sent.payoutTransaction!;
    await expect(dispatcher.handle(p.body, p.headers)).rejects.toThrow('database down');
    expect((await dispatcher.handle(p.body, p.headers)).status).toBe('handled');
  });
});
