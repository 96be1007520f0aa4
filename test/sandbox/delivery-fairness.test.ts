// Found by review: the delivery queue claimed due notifications by id (`ORDER BY id LIMIT 20`), so one
// account's backlog (a clock advance brings its retries due at once, with low ids) was served before
// any other account's notification: a thousand to one account's receiver that hangs held the whole
// instance's deliveries for about 25 minutes. Claims now take turns across the accounts. And the
// control API's advance answered as `delivered` every notification its run delivered, any account's;
// it now counts the caller's only. Counted in claim rounds and posts, never in milliseconds.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createControlClient, type ControlClient } from '../../sandbox/control-client.ts';
import { CLAIM_LIMIT } from '../../sandbox/notifier.ts';
import { until } from '../support/until.ts';
import { STORES, startSandboxOn, type TestSandbox } from './support.ts';

const OTHER = { kind: 'merchant' as const, id: 'fairother001', passphrase: 'fairpass' };

/** A payoutTransaction notification of this account queued to this address, left to the next run: its id. */
const queued = (
  t: TestSandbox,
  signer: { kind: 'merchant' | 'partner'; id: string },
  address: string,
  reference: string,
) =>
  t.sandbox.store.transaction(() =>
    t.sandbox.notifier.payoutTransaction(signer, address, `PO-${reference}`, `PTX-${reference}`, {
      payee: { name: 'P' },
      transaction: {},
      payouts: [],
    }),
  );

/** A sandbox with a second merchant (OTHER), the receiver `receive`, and the first merchant's control client. */
async function sandboxWith(url: string | undefined, receive: (address: string) => Promise<Response>) {
  const t = await startSandboxOn(url, {
    control: true,
    fetch: (async (address: string) => receive(String(address))) as unknown as typeof fetch,
  });
  const { store, clock, seed } = t.sandbox;
  await store.run(
    'INSERT INTO accounts (kind, id, api_key, passphrase, partner_id, created_at) VALUES (?, ?, ?, ?, ?, ?)',
    OTHER.kind,
    OTHER.id,
    'fairkey',
    OTHER.passphrase,
    seed.partnerUUID,
    clock.timestamp(),
  );
  const control = createControlClient({ baseUrl: t.base, accountId: seed.merchantUUID, apiKey: seed.apiKey });
  return { t, control };
}

describe.each(STORES)("one account's backlog does not hold another's notifications back ($name)", ({ url }) => {
  let t: TestSandbox;
  /** Every post's address, in the order they were made. */
  const posts: string[] = [];
  /** The posts to the backlog's address hang (while `hanging`) until the round they are in is let go, then are refused. */
  let hanging = true;
  let letGo: () => void = () => {};
  let gate = new Promise<void>((resolve) => {
    letGo = resolve;
  });
  const nextRound = () => {
    const go = letGo;
    gate = new Promise<void>((resolve) => {
      letGo = resolve;
    });
    go();
  };

  beforeAll(async () => {
    ({ t } = await sandboxWith(url, async (address) => {
      posts.push(address);
      if (address.endsWith('/hangs')) {
        if (hanging) await gate;
        throw new TypeError('fetch failed: connect ECONNREFUSED');
      }
      return new Response(null, { status: 204 });
    }));
  });
  afterAll(async () => {
    hanging = false;
    letGo();
    await t?.close();
  });

  it("delivers another account's notification queued behind a backlog in the next claim round", async () => {
    const { notifier, seed } = t.sandbox;
    const me = { kind: 'merchant' as const, id: seed.merchantUUID };
    // Three claims' worth to a receiver that hangs, all due, with the lowest ids.
    for (let i = 0; i < 3 * CLAIM_LIMIT; i++) await queued(t, me, 'https://backlog.test/hangs', `BACKLOG-${i}`);
    const run = notifier.deliverDue();
    // The first claim round is under way, every post of it hanging.
    expect(await until(() => posts.length >= CLAIM_LIMIT, 30_000)).toBe(true);
    expect(posts).toHaveLength(CLAIM_LIMIT);
    // The other account's notification is queued now (a higher id than all the backlog's).
    const id = await queued(t, OTHER, 'https://other.test/up', 'OTHER-1');
    nextRound();
    // The second claim round takes it: among its posts, not after the backlog's.
    expect(await until(() => posts.length >= 2 * CLAIM_LIMIT, 30_000)).toBe(true);
    expect(posts.slice(CLAIM_LIMIT, 2 * CLAIM_LIMIT)).toContain('https://other.test/up');
    hanging = false;
    letGo();
    await run;
    const row = await t.sandbox.store.get('SELECT delivered FROM notifications WHERE id = ?', id);
    expect(Number(row?.delivered)).toBe(1);
    // Every backlog notification had its first attempt all the same.
    expect(posts.filter((p) => p.endsWith('/hangs'))).toHaveLength(3 * CLAIM_LIMIT);
  });
});

describe.each(STORES)("the control API's advance counts the caller's deliveries only ($name)", ({ url }) => {
  let t: TestSandbox;
  let control: ControlClient;
  beforeAll(async () => {
    ({ t, control } = await sandboxWith(url, async () => new Response(null, { status: 204 })));
  });
  afterAll(() => t?.close());

  it("answers delivered 0 when the advance's run delivered only another account's notification", async () => {
    const id = await queued(t, OTHER, 'https://other.test/up', 'COUNT-OTHER');
    expect(await control.advanceClock({ seconds: 60 })).toMatchObject({ responseCode: 0, delivered: 0 });
    // The run did deliver it: it is not counted as the caller's.
    expect(Number((await t.sandbox.store.get('SELECT delivered FROM notifications WHERE id = ?', id))?.delivered)).toBe(
      1,
    );
  });

  it("answers the caller's own deliveries in a run that delivered another account's too", async () => {
    const { seed } = t.sandbox;
    await queued(t, OTHER, 'https://other.test/up', 'COUNT-OTHER-2');
    await queued(t, { kind: 'merchant', id: seed.merchantUUID }, 'https://mine.test/up', 'COUNT-MINE');
    expect(await control.advanceClock({ seconds: 60 })).toMatchObject({ responseCode: 0, delivered: 1 });
  });
});
