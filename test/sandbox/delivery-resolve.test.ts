// A clock advance makes every attempt of a notification that falls due within its span in one
// delivery run (delivery-clock.test.ts). Each attempt resolved the receiver's host name again, at
// the real moment of the run, milliseconds apart: against a resolver that answers in a second (a
// name that does not exist, asked of the network), five retries cost five seconds, and the advance
// answered only when its wait (the post time-out, 5 s) ran out. A run now resolves each name once,
// a name that does not exist too (ENOTFOUND); the next run resolves it again. A failure that passes
// (EAI_AGAIN: the resolver did not answer) is not kept: the run's next attempt asks again. SQLite only: the run's resolutions are the
// notifier's, whatever store holds the queue.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlClient } from '../../sandbox/control-client.ts';
import { bankDebit } from '../support/requests.ts';
import { merchantControl, startSandboxOn, type TestSandbox } from './support.ts';

describe('the host names of a delivery run', () => {
  let t: TestSandbox;
  let control: ControlClient;
  /** Each name the sandbox asked its resolver for, in order. */
  const asked: string[] = [];

  beforeAll(async () => {
    t = await startSandboxOn(undefined, {
      control: true,
      // The receiver refuses every connection: each attempt fails and is retried.
      fetch: (async () => {
        throw new TypeError('fetch failed: connect ECONNREFUSED');
      }) as unknown as typeof fetch,
      resolve: async (host) => {
        asked.push(host);
        if (host === 'nowhere.test')
          throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
        return ['93.184.216.34'];
      },
    });
    control = merchantControl(t);
  });
  afterAll(() => t?.close());

  for (const host of ['down.test', 'nowhere.test']) {
    it(`resolves ${host} once for the retries an advance makes in one run, and again in the next run`, async () => {
      const debit = (await t.client.processDDebit(bankDebit('6.00') as never)) as { transactionID: string };
      const { deliveries } = await control.triggerNotification({
        event: 'directDebitOutcome',
        transactionID: debit.transactionID,
        notifyURL: `https://${host}/notify`,
      });
      const id = deliveries[0]!;
      expect((await control.delivery(id)).delivery.attempts).toHaveLength(1);
      // Resolved by the trigger's own run, for its first attempt.
      const before = asked.filter((h) => h === host).length;
      expect(before).toBe(1);
      // An hour on: the retries after 1, 3, 7, 15 and 31 minutes all fall due, made in one run.
      await control.advanceClock({ seconds: 3600 });
      const d = (await control.delivery(id)).delivery;
      expect(d.attempts).toHaveLength(6);
      expect(d.attempts.map((a) => a.status)).toEqual([0, 0, 0, 0, 0, 0]);
      expect(asked.filter((h) => h === host).length - before, `resolutions of ${host} in the advance's run`).toBe(1);
    });
  }
});

describe('a resolver failure that passes (EAI_AGAIN)', () => {
  let t: TestSandbox;
  let control: ControlClient;
  let resolutions = 0;
  let posts = 0;

  beforeAll(async () => {
    t = await startSandboxOn(undefined, {
      control: true,
      // The first post is refused, so that there are retries; every later one is taken.
      fetch: (async () => {
        if (++posts === 1) throw new TypeError('fetch failed: connect ECONNREFUSED');
        return new Response('', { status: 200 });
      }) as unknown as typeof fetch,
      // The second resolution, the first of the advance's run, fails for a moment; every other answers.
      resolve: async (host) => {
        if (++resolutions === 2) throw Object.assign(new Error(`getaddrinfo EAI_AGAIN ${host}`), { code: 'EAI_AGAIN' });
        return ['93.184.216.34'];
      },
    });
    control = merchantControl(t);
  });
  afterAll(() => t?.close());

  it("costs one attempt, not the rest of the advance's run", async () => {
    const debit = (await t.client.processDDebit(bankDebit('6.00') as never)) as { transactionID: string };
    const { deliveries } = await control.triggerNotification({
      event: 'directDebitOutcome',
      transactionID: debit.transactionID,
      notifyURL: 'https://flaky.test/notify',
    });
    await control.advanceClock({ seconds: 3600 });
    const d = (await control.delivery(deliveries[0]!)).delivery;
    // Refused, then the resolver's passing failure, then delivered at the next retry of the same run.
    expect(d.attempts.map((a) => a.status)).toEqual([0, 0, 200]);
    expect(d.delivered).toBe(true);
  });
});
