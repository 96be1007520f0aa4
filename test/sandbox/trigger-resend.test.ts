// The control API's notifications about an object the account already has (POST /notifications with
// `for` and `set`), its resend (POST /deliveries/{id}/resend) and its list of the latest deliveries:
// each signed as the gateway signs it (verified here with the receiver library), each scoped to the
// caller (another account's object or delivery is not found, and nothing is stored).
import { zipSync } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kindOf, verifyNotification, type Notification } from '../../notifications/index.ts';
import { ControlError, createControlClient, type ControlClient } from '../../sandbox/control-client.ts';
import { loadSpec } from '../../sandbox/index.ts';
import { Notifier } from '../../sandbox/notifier.ts';
import { approved } from '../support/approved.ts';
import { bankDebit, widgetsMerchant } from '../support/requests.ts';
import { card, counts, startSandbox, type TestSandbox } from './support.ts';

let t: TestSandbox;
let control: ControlClient;
/** A second merchant of the same partner (its own objects, its own deliveries). */
let other: ControlClient;
const posted: { url: string; body: string; headers: Record<string, string> }[] = [];
const passphrase = () => t.sandbox.seed.passphrase;

beforeAll(async () => {
  t = await startSandbox({
    control: true,
    fetch: (async (url: string, init: RequestInit) => {
      posted.push({ url, body: String(init.body), headers: init.headers as Record<string, string> });
      return new Response(null, { status: 204 });
    }) as typeof fetch,
  });
  const account = (accountId: string) =>
    createControlClient({ baseUrl: t.base, accountId, apiKey: t.sandbox.seed.apiKey });
  control = account(t.sandbox.seed.merchantUUID);
  const created = (await t.client.partner.addMerchant(widgetsMerchant)) as { requestReference: string };
  const row = await t.sandbox.store.get(
    'SELECT merchant_id FROM merchant_requests WHERE reference = ?',
    created.requestReference,
  );
  other = account(row!.merchant_id);
});
afterAll(() => t.close());

const refusalOf = (p: Promise<unknown>) =>
  p.then(
    () => 'accepted',
    (e: unknown) => (e instanceof ControlError ? `${e.responseCode} ${e.message}` : String(e)),
  );
/** What the sandbox posted for a delivery, verified as a receiver verifies it. */
async function sentAs(id: number, options: { hashSalt?: string } = {}): Promise<Notification> {
  const { delivery } = await control.delivery(id);
  const raw = posted.filter((p) => p.body === delivery.body).at(-1)!;
  expect(raw.url).toBe(delivery.url);
  return verifyNotification(raw.body, raw.headers, { passphrase: passphrase(), ...options }).notification;
}

async function payout(reference: string, accNumbers: string[], notifyURL = 'https://m.test/payouts') {
  await t.client.payouts.create({
    reference,
    notifyURL,
    transactions: accNumbers.map((accNumber, i) => ({
      payee: { name: `Payee ${i}` },
      transaction: { reference: `${reference}-${i}`, amount: 2, bsb: '802950', accNumber },
    })),
  });
  await control.completePayout(reference);
  await t.sandbox.notifier.deliverDue();
}

describe('a notification about an object the account has', () => {
  it("a whole payout: one notification for each transaction, to the payout's own address", async () => {
    await payout('FOR-1', ['123321', '123321']);
    const answer = await control.triggerNotification({ event: 'payoutTransaction', for: 'FOR-1' });
    expect(answer.deliveries).toHaveLength(2);
    const sent = await Promise.all(answer.deliveries.map((id) => sentAs(id)));
    expect(sent.map((n) => n.event === 'payoutTransaction' && n.result.transaction.reference)).toEqual([
      'FOR-1-0',
      'FOR-1-1',
    ]);
    expect((await control.delivery(answer.deliveries[0]!)).delivery.url).toBe('https://m.test/payouts');
  });

  it('a payout transaction by its reference, with its last attempt set to returned: a payoutReturned, signed over what was set', async () => {
    const answer = await control.triggerNotification({
      event: 'payoutTransaction',
      for: 'FOR-1-1',
      notifyURL: 'https://m.test/elsewhere',
      set: { 'result.payouts.-1.status': 'returned' },
    });
    const n = await sentAs(answer.deliveries[0]!);
    expect(kindOf(n)).toBe('payoutReturned');
    expect((await control.delivery(answer.deliveries[0]!)).delivery.url).toBe('https://m.test/elsewhere');
  });

  it('an authorisation, declined with a code of its own: the hash in the body made after the change, with its hashSalt', async () => {
    const auth = (await t.client.processDDebitAuth({
      customerName: 'Jane',
      paymentAccountBSB: '802950',
      paymentAccountName: 'Jane',
      paymentAccountNumber: '123321',
      transactionAmount: '20.00',
      transactionCurrency: 'AUD',
      returnURL: 'https://m.test/return',
      notifyURL: 'https://m.test/dd',
      hashSalt: 'pepper',
    } as never)) as { fingerprint: string };
    const answer = await control.triggerNotification({
      event: 'directDebitOutcome',
      for: auth.fingerprint,
      set: { status: 'declined', responseCode: '51', responseMessage: 'Insufficient funds' },
    });
    expect(await sentAs(answer.deliveries[0]!, { hashSalt: 'pepper' })).toMatchObject({
      transactionID: auth.fingerprint,
      status: 'declined',
      responseCode: '51',
    });
  });

  it('a card purchase made in a batch: its batch, with every line declined', async () => {
    const { cardID, cardKey } = approved(
      await t.client.token.addCard({
        cardName: 'B',
        cardNumber: card.visa.paymentCardNumber,
        cardExpiryMonth: '02',
        cardExpiryYear: '29',
      }),
    );
    const csv = `transactionReferenceID,transactionAmount,transactionCurrency,transactionProduct,cardID,cardKey\nFB-1,5.00,AUD,Box,${cardID},${cardKey}\n`;
    const batch = (await t.client.processBatch({
      batchFile: Buffer.from(zipSync({ 'b.csv': new TextEncoder().encode(csv) })).toString('base64'),
      batchNotifyURL: 'https://m.test/batch',
    })) as { batchUUID: string };
    const line = (await t.sandbox.store.get(
      'SELECT id FROM transactions WHERE merchant_id = ? AND reference = ?',
      t.sandbox.seed.merchantUUID,
      'FB-1',
    ))!;
    const answer = await control.triggerNotification({
      event: 'batchNotify',
      for: line.id,
      set: { 'transactions.*.responseCode': '51', 'transactions.*.responseMessage': 'Insufficient funds' },
    });
    expect(await sentAs(answer.deliveries[0]!)).toMatchObject({
      batchUUID: batch.batchUUID,
      transactions: [{ transactionID: line.id, responseCode: '51', responseMessage: 'Insufficient funds' }],
    });
  });

  it("a merchant request: sent as the partner's, signed with its passphrase", async () => {
    const partner = createControlClient({
      baseUrl: t.base,
      accountId: t.sandbox.seed.partnerUUID,
      apiKey: t.sandbox.seed.apiKey,
    });
    const request = (await t.sandbox.store.get(
      "SELECT reference FROM merchant_requests WHERE status = 'approved' LIMIT 1",
    ))!;
    const answer = await partner.triggerNotification({
      event: 'merchantCreated',
      for: request.reference,
      set: { status: 'declined' },
    });
    const { delivery } = await partner.delivery(answer.deliveries[0]!);
    expect(JSON.parse(delivery.body)).toMatchObject({ requestReference: request.reference, status: 'declined' });
    expect(delivery.url).toBe('https://partner.test/notify');
  });

  it('refuses a field the spec does not let a trigger set, and a value its field does not take, naming each; nothing is stored', async () => {
    const before = await counts(t.sandbox);
    expect(
      await refusalOf(
        control.triggerNotification({ event: 'payoutTransaction', for: 'FOR-1', set: { payoutId: 'PAY-x' } }),
      ),
    ).toBe(
      "-2 Field 'set.payoutId' is invalid: a payoutTransaction notification's payoutId cannot be set; these can: result.payouts.-1.status, result.payouts.-1.lastUpdated",
    );
    expect(
      await refusalOf(
        control.triggerNotification({
          event: 'payoutTransaction',
          for: 'FOR-1',
          set: { 'result.payouts.-1.status': 'bounced' },
        }),
      ),
    ).toBe(
      "-2 Field 'set.result.payouts.-1.status' is invalid: must be one of pending, approved, declined, returned, returnDeclined",
    );
    expect(
      await refusalOf(
        control.triggerNotification({
          event: 'payoutTransaction',
          for: 'FOR-1',
          set: { 'result.payouts.-1.lastUpdated': 'yesterday' },
        }),
      ),
    ).toMatch(
      /^-2 Field 'set\.result\.payouts\.-1\.lastUpdated' is invalid: must be a date and time as YYYY-MM-DD HH:MM:SS/,
    );
    expect(await refusalOf(control.triggerNotification({ event: 'payoutTransaction' }))).toBe(
      "-3 Field 'for' is required",
    );
    expect(await counts(t.sandbox)).toEqual(before);
  });

  it("finds another account's objects nowhere: refused as not found, as an object that does not exist is", async () => {
    const before = await counts(t.sandbox);
    const theirs = (await other.deliveries()).deliveries.length;
    for (const [event, id] of [
      ['payoutTransaction', 'FOR-1'],
      ['batchNotify', (await t.sandbox.store.get('SELECT id FROM batches LIMIT 1'))!.id],
      [
        'directDebitOutcome',
        (await t.sandbox.store.get('SELECT fingerprint FROM dd_authorisations LIMIT 1'))!.fingerprint,
      ],
    ] as const) {
      const refused = await refusalOf(other.triggerNotification({ event, for: id, notifyURL: 'https://m.test/x' }));
      expect(refused).toMatch(/^-2 Field 'for' is invalid: no such /);
      expect(
        await refusalOf(other.triggerNotification({ event, for: `${id}-nope`, notifyURL: 'https://m.test/x' })),
      ).toBe(refused);
    }
    expect(await counts(t.sandbox)).toEqual(before);
    expect((await other.deliveries()).deliveries).toHaveLength(theirs);
  });

  it('refuses an object without a notification address of its own when none is given', async () => {
    const debit = (await t.client.processDDebit(bankDebit('6.00') as never)) as { transactionID: string };
    expect(
      await refusalOf(control.triggerNotification({ event: 'directDebitOutcome', for: debit.transactionID })),
    ).toBe("-3 Field 'notifyURL' is required: the direct debit has no notification address of its own");
  });
});

describe('resend and the latest deliveries', () => {
  it('sends a delivery again as a new one that names it, with the same body and signature; to another address when asked', async () => {
    const { deliveries } = await control.deliveries({ latest: 1 });
    const first = deliveries[0]!;
    const again = await control.resendDelivery(first.id);
    const elsewhere = await control.resendDelivery(first.id, { notifyURL: 'https://m.test/replay' });
    const [a, b] = [
      (await control.delivery(again.deliveries[0]!)).delivery,
      (await control.delivery(elsewhere.deliveries[0]!)).delivery,
    ];
    expect(a).toMatchObject({
      resentFrom: first.id,
      body: first.body,
      headers: first.headers,
      url: first.url,
      delivered: true,
    });
    expect(b).toMatchObject({ resentFrom: first.id, body: first.body, url: 'https://m.test/replay' });
    expect((await control.deliveries({ latest: 2 })).deliveries.map((d) => d.id)).toEqual([a.id, b.id]);
  });

  it('a resend that arrives as a delivery run is ending is delivered before it answers, not left to the next run', async () => {
    // The run under way has just looked for due notifications and found none: the resend queued now
    // joins it. Its caller must still see its delivery attempted (the CLI prints "delivered"), so the
    // wait is for a run that starts after the notification was queued.
    await payout('RACE-1', ['123321']);
    const first = (await control.deliveries({ latest: 1 })).deliveries[0]!;
    const { store, notifier } = t.sandbox;
    const transaction = store.transaction.bind(store);
    const runs = notifier.deliverDue.bind(notifier);
    let asked = 0;
    notifier.deliverDue = () => {
      asked++;
      return runs();
    };
    let resent: Promise<{ deliveries: number[] }> | undefined;
    store.transaction = (async (work: () => Promise<unknown>) => {
      const result = await transaction(work);
      if (!resent && Array.isArray(result) && result.length === 0) {
        const before = asked;
        resent = control.resendDelivery(first.id);
        for (let i = 0; i < 10_000 && asked === before; i++) await new Promise((r) => setTimeout(r, 1));
      }
      return result;
    }) as typeof store.transaction;
    try {
      await notifier.deliverDue();
      const queued = (await resent!).deliveries[0]!;
      expect((await control.delivery(queued)).delivery).toMatchObject({ resentFrom: first.id, delivered: true });
    } finally {
      store.transaction = transaction;
      notifier.deliverDue = runs;
    }
  });

  it("resends none of another account's deliveries: not found, and nothing queued", async () => {
    const mine = (await control.deliveries({ latest: 1 })).deliveries[0]!;
    const before = await counts(t.sandbox);
    expect(await refusalOf(other.resendDelivery(mine.id))).toBe(
      "-2 Field 'id' is invalid: no such delivery of this account",
    );
    expect(await refusalOf(control.resendDelivery(999_999))).toBe(
      "-2 Field 'id' is invalid: no such delivery of this account",
    );
    expect(await counts(t.sandbox)).toEqual(before);
  });

  it('refuses a latest out of 1 to 100', async () => {
    expect(await refusalOf(control.deliveries({ latest: 0 }))).toBe(
      "-2 Field 'latest' is invalid: must be an integer from 1 to 100",
    );
  });
});

describe('stopping the deliveries', () => {
  it('waits for a run that follows the one under way: none is left running when stop() resolves', async () => {
    const notifier: any = new Notifier({} as never, {} as never, loadSpec(), (async () => new Response('')) as never);
    let started = 0;
    let active = 0;
    const ends: (() => void)[] = [];
    notifier.deliverClaimed = () => {
      started++;
      active++;
      return new Promise<number>((done) =>
        ends.push(() => {
          active--;
          done(0);
        }),
      );
    };
    void notifier.deliverDue(); // a run under way
    void notifier.deliverDue(); // a resend meanwhile: a run to follow it
    const stopped = notifier.stop().then(() => ({ started, active }));
    ends.shift()!();
    // The run under way ends; whatever follows must be over (or not started) when stop() answers.
    const seen = await stopped;
    for (const end of ends) end();
    expect(seen.active).toBe(0);
  });
});
