// Three sandbox instances (separate OS processes, started as `npm start` starts them) on one database,
// driven from the outside through HTTP with the package's own signing client, requests spread
// round-robin over the instances as a load balancer without stickiness spreads them:
// - 200-way races on one row: one card-key rotation wins; captures stop at the authorised amount;
//   refunds stop at the purchase; PayID refunds stop at the payment; one last PayTo payment cancels
//   its agreement; a payout transaction is returned once (through the control API);
// - kill -9 of one instance while the three deliver notifications: every notification still
//   arrives, and a duplicate only where the dead instance had one in flight.
// On one SQLite file always; on PostgreSQL too when PGW_TEST_DATABASE_URL is set.
// PGW_INSTANCES_BROKEN=1 runs the same checks on instances whose transactions are dropped, and
// PGW_INSTANCES_BROKEN=at-most-once on instances that mark a notification delivered when they claim
// it (test/support/broken-instance.ts): then they must fail.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isApproved } from '../../generated/client.ts';
import { CLAIM_LIMIT } from '../../sandbox/notifier.ts';
import { approved } from '../support/approved.ts';
import { doc } from '../support/contract.ts';
import {
  killed,
  PG_URL,
  recordedAttempts,
  postgresDatabase,
  SKIP_PG,
  sqliteDatabase,
  startDeployment,
  startReceiver,
  type Database,
  type Deployment,
} from '../support/instances.ts';
import { until } from '../support/until.ts';

// PGW_INSTANCES_BROKEN=1 (transactions dropped) or at-most-once: the instances break that rule.
const BROKEN = ({ '1': 'transactions', transactions: 'transactions', 'at-most-once': 'at-most-once' } as const)[
  process.env.PGW_INSTANCES_BROKEN ?? ''
];
// The kill test needs the notifier on the delivery queue (sandbox/delivery-queue.ts: one instance
// claims a notification, under a lease). Until then every instance posts every due notification
// (measured: 8,061 posts for 300 notifications), so it runs only when asked: PGW_INSTANCES_KILL=1.
const QUEUED =
  /delivery-queue/.test(readFileSync(new URL('../../sandbox/notifier.ts', import.meta.url), 'utf8')) ||
  process.env.PGW_INSTANCES_KILL === '1';
const SKIP_KILL =
  'skipped: sandbox/notifier.ts does not claim from the delivery queue yet, each instance posts every notification; PGW_INSTANCES_KILL=1 runs it anyway';
const RACERS = 200;
/** How long a notification's post may take in these instances: no post is in flight longer. */
const POST_TIMEOUT_MS = 1_500;
const credentials = doc.info['x-sandbox'] as {
  merchantUUID: string;
  partnerUUID: string;
  apiKey: string;
  passphrase: string;
};
const customer = doc.info['x-sandbox'].customer;
const visa = { ...doc.info['x-sandbox'].testCard, paymentCardName: customer.customerName };

type Answer = { responseCode: string | number; responseMessage?: string };
/** How many answers of each responseCode (and message, for refusals): a -4 or a network error shows here. */
const tally = (answers: Answer[]) => {
  const t: Record<string, number> = {};
  for (const a of answers) {
    const k = Number(a.responseCode) < 0 ? `${a.responseCode} ${a.responseMessage}` : String(a.responseCode);
    t[k] = (t[k] ?? 0) + 1;
  }
  return t;
};
const race = <T>(n: number, f: (i: number) => Promise<T>) => Promise.all(Array.from({ length: n }, (_, i) => f(i)));

function threeInstances(open: () => Promise<Database>) {
  let d: Deployment;
  beforeAll(async () => {
    // A killed instance's claims come back after their lease: 5 s here, not the default minute. A live
    // instance must settle each claim inside its lease, posts and store writes included, on a loaded
    // machine too (at 3 s, with the notifier every 250 ms, SQLite's survivors settled late under a
    // load of 14: another instance took their claims and posted them again). A post may take 1.5 s
    // here (5 s by default; the receiver answers in 20 ms); the notifier runs every 500 ms, not every
    // second (sandbox/waits.ts). A payout's NPP attempt ends, and its notification falls due, after
    // 200 ms, not 2 s.
    d = await startDeployment(await open(), credentials, 3, {
      env: {
        PGW_SANDBOX_NPP_MS: '200',
        PGW_NOTIFY_POST_TIMEOUT_MS: String(POST_TIMEOUT_MS),
        PGW_NOTIFY_LEASE_MS: '5000',
        PGW_NOTIFY_EVERY_MS: '500',
      },
      ...(BROKEN ? { broken: BROKEN } : {}),
    });
  }, 120_000);
  afterAll(async () => {
    await d?.stop();
  });

  it('three processes answer, and each reads what another stored', async () => {
    expect(new Set(d.instances.map((i) => i.child.pid)).size).toBe(3);
    const sold = approved(
      await d.clients[0]!.processCard({
        transactionAmount: '12.34',
        transactionCurrency: 'AUD',
        transactionProduct: 'Shared',
        ...customer,
        ...visa,
      }),
    );
    expect(sold.responseCode).toBe('0');
    for (const client of d.clients.slice(1))
      expect(await client.queryCard({ transactionID: sold.transactionID })).toMatchObject({
        responseCode: '0',
        transactionAmount: '12.34',
      });
  });

  it(`${RACERS} card-key rotations of one stored card at once: exactly one wins, and the card's key is the winner's`, async () => {
    const added = (await d.spread(0).token.addCard({
      cardName: 'Race',
      cardNumber: '4564710000000004',
      cardExpiryMonth: '02',
      cardExpiryYear: '29',
    })) as { responseCode: string; cardID: string; cardKey: string };
    expect(added.responseCode).toBe('0');
    const replacement = (i: number) => `Race${String(i).padStart(12, '0')}`;
    const answers = await race(RACERS, (i) =>
      d.spread(i).token.processCard({
        cardID: added.cardID,
        cardKey: added.cardKey,
        cardKeyReplace: replacement(i),
        transactionAmount: '1.00',
        transactionCurrency: 'AUD',
        transactionProduct: 'Race',
      }),
    );
    expect(tally(answers)).toEqual({
      '0': 1,
      "-2 Field 'cardKey' is invalid: does not match the stored card": RACERS - 1,
    });
    const winner = replacement(answers.findIndex((a) => isApproved(a)));
    // Every instance now knows the card by the winner's key, and by no other.
    for (const client of d.clients) {
      expect((await client.token.cardInfo({ cardID: added.cardID, cardKey: winner })).responseCode).toBe('0');
      expect((await client.token.cardInfo({ cardID: added.cardID, cardKey: added.cardKey })).responseCode).toBe('-2');
    }
  });

  it(`an authorisation of 100.00 and ${RACERS} captures of 1.00 at once: exactly 100 approved, 100.00 captured`, async () => {
    const auth = approved(
      await d.spread(0).processAuth({
        transactionAmount: '100.00',
        transactionCurrency: 'AUD',
        transactionProduct: 'Deposit',
        ...customer,
        ...visa,
      }),
    );
    expect(auth.responseCode).toBe('0');
    const answers = await race(RACERS, (i) =>
      d.spread(i).processCapture({
        transactionID: auth.transactionID,
        transactionAmount: '100.00',
        transactionCurrency: 'AUD',
        captureAmount: '1.00',
      }),
    );
    expect(tally(answers)).toEqual({
      '0': 100,
      "-2 Field 'captureAmount' is invalid: Capture amount is greater than the transaction amount": RACERS - 100,
    });
    for (const client of d.clients)
      expect(await client.queryCard({ transactionID: auth.transactionID })).toMatchObject({
        responseCode: '0',
        capturedAmount: '100.00',
      });
  });

  it(`a purchase of 50.00 and ${RACERS} refunds of 1.00 at once: refunds stop at 50.00`, async () => {
    const sold = approved(
      await d.spread(1).processCard({
        transactionAmount: '50.00',
        transactionCurrency: 'AUD',
        transactionProduct: 'Refunded',
        ...customer,
        ...visa,
      }),
    );
    expect(sold.responseCode).toBe('0');
    const answers = await race(RACERS, (i) =>
      d.spread(i).refundCard({
        transactionID: sold.transactionID,
        transactionAmount: '50.00',
        transactionCurrency: 'AUD',
        refundAmount: '1.00',
      }),
    );
    expect(tally(answers)).toEqual({
      '0': 50,
      "-2 Field 'refundAmount' is invalid: Refund amount is greater than the amount captured": RACERS - 50,
    });
    for (const client of d.clients)
      expect(await client.queryCard({ transactionID: sold.transactionID })).toMatchObject({
        responseCode: '0',
        refundedAmount: '50.00',
      });
  });

  it(`${RACERS} creates of one PayID at once: one is made, every other is told it is already registered`, async () => {
    const payId = `taken-${Date.now()}@merchant.payid.test`;
    const answers = await race(RACERS, (i) => d.spread(i).payid.create({ payId, name: `Racer ${i}` }));
    expect(tally(answers)).toEqual({ '0': 1, "-2 Field 'payId' is invalid: already registered": RACERS - 1 });
  });

  it(`a PayID payment of 42.00 and ${RACERS} refunds of 0.50 at once: refunds stop at 42.00`, async () => {
    const payId = `race-${Date.now()}@merchant.payid.test`;
    expect((await d.spread(2).payid.create({ payId, name: 'Race' })).responseCode).toBe(0);
    const listed = (await d.spread(0).payid.listTransactions(payId, {})) as {
      result: { transactions: { transactionId: string; amount: number }[] };
    };
    const payment = listed.result.transactions[0]!;
    expect(payment.amount).toBe(42);
    const answers = await race(RACERS, (i) =>
      d.spread(i).payid.refundTransaction(payment.transactionId, { amount: 0.5 }),
    );
    expect(tally(answers as Answer[])).toEqual({
      '0': 84,
      "-2 Field 'amount' is invalid: refunds would exceed the payment": RACERS - 84,
    });
    for (const client of d.clients) {
      const after = (await client.payid.listTransactions(payId, {})) as {
        result: { transactions: { refundedAmount?: number; status: string }[] };
      };
      expect(after.result.transactions[0]).toMatchObject({ refundedAmount: 42, status: 'refunded' });
    }
  });

  it(`a PayTo agreement and ${RACERS} last payments at once: one is made and cancels the agreement, the others find it cancelled`, async () => {
    const created = (await d.spread(0).payto.createAgreement({
      payer: { name: 'Jane', account: { name: 'Jane', bsb: '802950', accountNumber: '123321' } },
      agreement: { payment: { type: 'BALN', frequency: 'ADHO', maximum: 100 } },
    })) as { result: { agreementIdentification: string; status: string } };
    expect(created.result.status).toBe('active');
    const id = created.result.agreementIdentification;
    const answers = await race(RACERS, (i) =>
      d.spread(i).payto.createPayment(id, {
        payer: { name: 'Jane' },
        transaction: { reference: `LAST-${i}`, amount: 1, lastPayment: true },
      }),
    );
    expect(tally(answers as Answer[])).toEqual({
      '0': 1,
      "-2 Field 'agreementIdentification' is invalid: the agreement is cancelled": RACERS - 1,
    });
    for (const client of d.clients)
      expect(
        ((await client.payto.searchPayments({ agreementIdentification: id })) as { result: { payments: unknown[] } })
          .result.payments,
      ).toHaveLength(1);
  });

  it(`a paid payout transaction returned ${RACERS} times at once through the control API: once`, async () => {
    const created = (await d.spread(1).payouts.create({
      reference: 'RET-1',
      transactions: [
        {
          payee: { name: 'P' },
          transaction: { reference: 'RET-1-0', amount: 5, bsb: '802950', accNumber: '123321' },
        },
      ],
    })) as { result: { payoutId: string; transactions: { transactionId: string; status: string }[] } };
    const { payoutId, transactions } = created.result;
    expect(transactions[0]!.status).toBe('pending');
    // Its NPP attempt ended now through one instance's control API: every instance sees it approved.
    await d.controls[0]!.completePayout(payoutId);
    const settled = await Promise.allSettled(
      Array.from({ length: RACERS }, (_, i) =>
        d.controls[i % d.controls.length]!.returnPayoutTransaction(payoutId, transactions[0]!.transactionId),
      ),
    );
    expect(
      tally(
        settled.map((s) =>
          s.status === 'fulfilled'
            ? { responseCode: 0 }
            : { responseCode: -2, responseMessage: (s.reason as Error).message },
        ),
      ),
    ).toEqual({
      '0': 1,
      "-2 Field 'transactionId' is invalid: its last attempt is returned; only a paid (approved) transaction can be returned":
        RACERS - 1,
    });
    for (const client of d.clients) {
      const status = (await client.payouts.getTransactionStatus(payoutId, transactions[0]!.transactionId)) as {
        result: { payouts: { status: string }[] };
      };
      expect(status.result.payouts.map((p) => p.status)).toEqual(['returned']);
    }
  });

  // Last: it kills an instance. 30 payouts of 10 transactions, each transaction one payoutTransaction
  // notification to a receiver that takes 20 ms to answer; one instance is killed -9 once a third have
  // arrived. At-least-once: each must arrive; one may arrive twice only when the dead instance posted it
  // and died before recording it: once before the kill, once from a survivor after it.
  it.skipIf(!QUEUED)(
    `kill -9 of one instance while the three deliver 300 notifications: every one arrives, duplicates only from the dead one${QUEUED ? '' : ` (${SKIP_KILL})`}`,
    async () => {
      const keyOf = (body: any) => `${body.payoutId}/${body.result.transaction.reference}`;
      const receiver = await startReceiver(keyOf);
      try {
        const payouts = await race(30, (p) =>
          d.spread(p).payouts.create({
            reference: `KILL-${p}`,
            notifyURL: receiver.url,
            transactions: Array.from({ length: 10 }, (_, t) => ({
              payee: { name: `Payee ${t}` },
              transaction: { reference: `KILL-${p}-${t}`, amount: 1, bsb: '802950', accNumber: '123321' },
            })),
          }),
        );
        const expected = new Map<string, { payoutId: string; transactionId: string }>();
        for (const [p, created] of payouts.entries()) {
          const result = (
            created as { result: { payoutId: string; transactions: { transactionId: string; reference: string }[] } }
          ).result;
          expect(result.transactions).toHaveLength(10);
          for (const t of result.transactions) expect(t.reference).toMatch(new RegExp(`^KILL-${p}-\\d$`));
          for (const t of result.transactions)
            expected.set(`${result.payoutId}/${t.reference}`, {
              payoutId: result.payoutId,
              transactionId: t.transactionId,
            });
        }
        expect(expected.size).toBe(300);

        expect(await until(() => receiver.deliveries.length >= 100, 60_000)).toBe(true);
        // Not at the arrival itself: the instances post their batches in step, so the 100th arrival
        // is often the end of the victim's batch, and a kill then finds it between batches, holding
        // no claim (measured on the at-most-once variant: its posts at -0.1 s, the kill at 0, its next
        // claim at +0.02 s). 400 ms later it is inside its next batch.
        await new Promise((r) => setTimeout(r, 400));
        const victim = d.instances[1]!;
        const killAt = Date.now();
        await killed(victim);

        const arrived = () => new Set(receiver.deliveries.map((x) => x.key));
        // Done when every notification has arrived and the survivors' store records each delivered
        // (one the dead instance posted but never recorded is posted again once its lease runs out).
        const survivors = d.clients.filter((_, i) => i !== victim.index);
        const unrecorded = new Map(expected);
        const allRecorded = async () => {
          const keys = [...unrecorded.keys()];
          const records = await Promise.all(
            keys.map((k, i) =>
              survivors[i % survivors.length]!.payouts.getTransactionNotify(
                unrecorded.get(k)!.payoutId,
                unrecorded.get(k)!.transactionId,
              ),
            ),
          );
          records.forEach((r, i) => {
            if ((r as { result?: { delivered?: boolean } }).result?.delivered) unrecorded.delete(keys[i]!);
          });
          return unrecorded.size === 0;
        };
        const deadline = killAt + 120_000;
        await until(() => arrived().size >= expected.size, deadline - Date.now());
        await until(allRecorded, Math.max(0, deadline - Date.now()), 500);
        // Late duplicates, if any, land now: a post still in flight ends within its time-out.
        await new Promise((r) => setTimeout(r, POST_TIMEOUT_MS));

        const missing = [...expected.keys()].filter((k) => !arrived().has(k));
        const strangers = [...arrived()].filter((k) => !expected.has(k));
        const byKey = new Map<string, typeof receiver.deliveries>();
        for (const x of receiver.deliveries) byKey.set(x.key, [...(byKey.get(x.key) ?? []), x]);
        const duplicated = [...byKey.values()].filter((list) => list.length > 1);
        // A duplicate is explained by the attempts the store recorded for it (a post that timed out
        // under load is recorded, then made again) and at most one post that was never recorded: the
        // dead instance's, made before the kill. Those can only be among the one batch it had claimed
        // (CLAIM_LIMIT). No time window decides which post was the dead one's: the receiver, in this
        // process, may read a post the dead instance sent before the kill only after it (seen on CI),
        // and the dead instance's record may come a second or more after its post.
        const attempts = new Map(
          (await recordedAttempts(d.db)).map((r) => [keyOf(JSON.parse(r.body)), Number(r.attempts)]),
        );
        const unrecordedPosts = (list: { key: string }[]) => list.length - (attempts.get(list[0]!.key) ?? 0);
        const unexplained = duplicated
          .filter((list) => unrecordedPosts(list) > 1)
          .map((list) => `${list[0]!.key} ×${list.length} (${attempts.get(list[0]!.key)} recorded)`);
        const lostWithTheDead = duplicated.filter((list) => unrecordedPosts(list) === 1).length;
        console.info(
          `kill -9 (${BROKEN ? `broken: ${BROKEN}, ` : ''}${d.db.kind}): ${receiver.deliveries.length} posts for ${expected.size} notifications, ${duplicated.length} duplicated (${unexplained.length} not explained by the kill), ${missing.length} missing, ${unrecorded.size} not recorded delivered ${Math.round((Date.now() - killAt) / 1000)} s after the kill`,
        );
        expect({ missing: missing.length, strangers }).toEqual({ missing: 0, strangers: [] });
        expect(unexplained.slice(0, 10)).toEqual([]);
        expect(lostWithTheDead, 'posts never recorded: more than the dead instance had claimed').toBeLessThanOrEqual(
          CLAIM_LIMIT,
        );
        // The survivors' store agrees: every notification is recorded delivered, after one attempt or more.
        expect(unrecorded.size).toBe(0);
        expect([...expected.keys()].filter((k) => !((attempts.get(k) ?? 0) >= 1))).toEqual([]);
      } finally {
        await receiver.close();
      }
    },
    240_000,
  );
}

describe(`three sandbox instances on one SQLite file${BROKEN ? ` (broken: ${BROKEN})` : ''}`, () => {
  threeInstances(async () => sqliteDatabase());
});

describe.skipIf(!PG_URL)(
  `three sandbox instances on one PostgreSQL database${PG_URL ? '' : ` (${SKIP_PG})`}${BROKEN ? ` (broken: ${BROKEN})` : ''}`,
  () => {
    threeInstances(() => postgresDatabase(PG_URL!, 'instances'));
  },
);
