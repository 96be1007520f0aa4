// The sandbox's chaos setting for a notification address (PUT /_sandbox/chaos): the sandbox itself
// delivers the account's notifications to a real receiver on the loopback under every kind of fault,
// records what it did beside each attempt, and sums the run up; the same seed gives the same faults
// to the same sequence; a receiver that takes a stale copy is named.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliveryKey } from '../../notifications/index.ts';
import { ControlError, createControlClient, type ControlClient } from '../../sandbox/control-client.ts';
import { startReceiver, type Receiver, type ReceiverKind } from '../notifications/receivers.ts';
import { startSandbox, type TestSandbox } from './support.ts';

let t: TestSandbox;
let control: ControlClient;
const N = 12;
const faults = { duplicate: 0.4, reorder: 0.3, delay: 0.3, stale: 0.4, 'bad-signature': 0.4, timeout: 0.3 };

beforeAll(async () => {
  // Posted for real (to receivers on 127.0.0.1), as npm start posts them.
  t = await startSandbox({
    control: true,
    fetch: ((url: string, init: RequestInit) => fetch(url, init)) as typeof fetch,
  });
  control = createControlClient({
    baseUrl: t.base,
    accountId: t.sandbox.seed.merchantUUID,
    apiKey: t.sandbox.seed.apiKey,
  });
});
afterAll(() => t.close());

const receivers: Receiver[] = [];
afterAll(async () => {
  for (const r of receivers) await r.close();
});

let payouts = 0;
/**
 * A receiver of this kind under chaos with this seed: N payout notifications queued to it, delivered
 * until each is delivered or given up (retries come due as the clock moves on, held ones after their
 * hold). Answers the receiver and the ids of the run's deliveries.
 */
async function run(kind: ReceiverKind, seed: number) {
  const receiver = await startReceiver(kind, {
    passphrase: t.sandbox.seed.passphrase,
    // The merchant's clock moves on below: verified on its time.
    now: () => new Date(Date.now() + t.sandbox.clock.offsetOf(`merchant:${t.sandbox.seed.merchantUUID}`)),
  });
  receivers.push(receiver);
  await control.setChaos({ notifyURL: receiver.url, faults, seed, maxDelayMs: 20 });
  const reference = `CH-${++payouts}`;
  await t.client.payouts.create({
    reference,
    notifyURL: receiver.url,
    transactions: Array.from({ length: N }, (_, i) => ({
      payee: { name: `Payee ${i}` },
      transaction: { reference: `${reference}-${i}`, amount: 1, bsb: '802950', accNumber: '123321' },
    })),
  });
  await control.completePayout(reference);
  const ids = (await control.deliveries({ latest: N })).deliveries.map((d) => d.id);
  for (let round = 0; round < 30; round++) {
    const list = await Promise.all(ids.map(async (id) => (await control.delivery(id)).delivery));
    if (list.every((d) => d.delivered || d.nextAttemptAt === null)) break;
    await t.sandbox.notifier.deliverDue();
    // A retry falls due a minute (or more) after its attempt; a held one two seconds after its hold.
    await control.advanceClock({ seconds: 61 });
    await new Promise((r) => setTimeout(r, 300));
  }
  return { receiver, ids };
}

/** Each notification's faults, by its number in the run: attempt by attempt, what the chaos did. */
async function faultsOf(ids: number[]): Promise<string[]> {
  const list = await Promise.all(ids.map(async (id) => (await control.delivery(id)).delivery));
  return list.map((d) => d.attempts.map((a) => (a.chaos ?? []).map((c) => c.kind).join('+') || '-').join(' '));
}

describe('chaos for a notification address', () => {
  let first: Awaited<ReturnType<typeof run>>;
  beforeAll(async () => {
    first = await run('correct', 7);
  }, 120_000);

  it('delivers every notification once to a correct receiver through every kind of fault, and sums up a run with no problem', async () => {
    const { receiver, ids } = first;
    const list = await Promise.all(ids.map(async (id) => (await control.delivery(id)).delivery));
    expect(list.every((d) => d.delivered)).toBe(true);
    const kinds = new Set(list.flatMap((d) => d.attempts.flatMap((a) => (a.chaos ?? []).map((c) => c.kind))));
    expect([...kinds].sort()).toEqual(['bad-signature', 'delay', 'duplicate', 'reorder', 'stale', 'timeout']);
    const keys = receiver.applied.map((n) => deliveryKey(n));
    expect(keys).toHaveLength(N);
    expect(new Set(keys).size).toBe(N);
    const [run_] = (await control.chaos()).chaos.filter((c) => c.notifyURL === receiver.url);
    expect(run_).toMatchObject({ seed: 7, notifications: N, problems: [] });
    expect(run_!.summary[0]).toMatch(
      /^Chaos summary \(seed 7; duplicate=0\.4,reorder=0\.3,delay=0\.3,stale=0\.4,bad-signature=0\.4,timeout=0\.3\): 12 notifications, \d+ posts$/,
    );
    expect(run_!.summary).toContainEqual(expect.stringMatching(/^ {2}stale +\d+ sent: \d+ 4xx \(expected 4xx\)$/));
    expect(run_!.summary.at(-1)).toMatch(/^No problems/);
  });

  it('gives the same faults to the same sequence with the same seed, and others with another seed', async () => {
    const again = await run('correct', 7);
    expect(await faultsOf(again.ids)).toEqual(await faultsOf(first.ids));
    const other = await run('correct', 8);
    expect(await faultsOf(other.ids)).not.toEqual(await faultsOf(first.ids));
  }, 120_000);

  it('names what a receiver that accepts a stale delivery took', async () => {
    const { receiver } = await run('acceptsStale', 7);
    const [run_] = (await control.chaos()).chaos.filter((c) => c.notifyURL === receiver.url);
    expect(run_!.problems.length).toBeGreaterThan(0);
    for (const p of run_!.problems)
      expect(p).toMatch(
        /^#\d+ payoutTransaction PTX-\w+: a stale copy \(a replay\) taken as real \(answered 200, expected 4xx\)$/,
      );
  }, 120_000);

  it('refuses a bad setting naming the field, stops a run answering its summary, and shows an account only its own', async () => {
    const refusal = (p: Promise<unknown>) =>
      p.then(
        () => 'accepted',
        (e: unknown) => (e instanceof ControlError ? `${e.responseCode} ${e.message}` : String(e)),
      );
    expect(await refusal(control.setChaos({ notifyURL: 'http://127.0.0.1:9/x', faults: { duplicate: 2 } }))).toBe(
      "-2 Field 'faults.duplicate' is invalid: must be at most 1",
    );
    expect(
      await refusal(control.setChaos({ notifyURL: 'http://127.0.0.1:9/x', faults: { gremlins: 1 } as never })),
    ).toBe("-2 Field 'gremlins' is not a field of this request");
    const partner = createControlClient({
      baseUrl: t.base,
      accountId: t.sandbox.seed.partnerUUID,
      apiKey: t.sandbox.seed.apiKey,
    });
    expect((await partner.chaos()).chaos).toEqual([]);
    expect(await refusal(partner.stopChaos(first.receiver.url))).toBe(
      "-2 Field 'notifyURL' is invalid: no chaos is set for this address",
    );
    const stopped = await control.stopChaos(first.receiver.url);
    expect(stopped.chaos[0]).toMatchObject({ notifyURL: first.receiver.url, notifications: N });
    expect((await control.chaos()).chaos.map((c) => c.notifyURL)).not.toContain(first.receiver.url);
  });
});
