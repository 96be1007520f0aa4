// The sandbox's waits (sandbox/waits.ts): how long an instance holds a notification it claimed (a
// minute, or PGW_NOTIFY_LEASE_MS), how long a post may take (5 s, PGW_NOTIFY_POST_TIMEOUT_MS), how
// often the notifier runs (1 s, PGW_NOTIFY_EVERY_MS), how long a stop waits (10 s,
// PGW_SANDBOX_CLOSE_GRACE_MS), how long a payout's NPP attempt is pending (2 s, PGW_SANDBOX_NPP_MS) and
// how long a streamed answer waits for a client that takes none of it (a minute, PGW_SANDBOX_ANSWER_STALL_MS).
// Tests shorten them to prove them without sitting through them; the lease is never as short as a post may take, so that a live instance keeps its claim while it posts.
import { describe, expect, it } from 'vitest';
import { SettingRefused } from '../../sandbox/setting-refused.ts';
import { DEFAULT_WAITS, waitsFromEnv } from '../../sandbox/waits.ts';

describe('the sandbox waits the environment may shorten', () => {
  it('default to a minute of lease, 5 s per post, a run every second, a 10 s grace, 2 s of NPP and a minute of stalled answer', () => {
    expect(waitsFromEnv({})).toEqual({
      leaseMs: 60_000,
      postTimeoutMs: 5_000,
      deliveryEveryMs: 1_000,
      closeGraceMs: 10_000,
      nppMs: 2_000,
      answerStallMs: 60_000,
    });
    expect(waitsFromEnv({ PGW_NOTIFY_LEASE_MS: '' })).toEqual(DEFAULT_WAITS);
  });

  it('take whole milliseconds, the lease above the post time-out', () => {
    expect(waitsFromEnv({ PGW_NOTIFY_LEASE_MS: '6000' }).leaseMs).toBe(6000);
    expect(
      waitsFromEnv({
        PGW_NOTIFY_POST_TIMEOUT_MS: '1000',
        PGW_NOTIFY_LEASE_MS: '1500',
        PGW_NOTIFY_EVERY_MS: '100',
        PGW_SANDBOX_CLOSE_GRACE_MS: '500',
        PGW_SANDBOX_NPP_MS: '50',
        PGW_SANDBOX_ANSWER_STALL_MS: '250',
      }),
    ).toEqual({
      leaseMs: 1500,
      postTimeoutMs: 1000,
      deliveryEveryMs: 100,
      closeGraceMs: 500,
      nppMs: 50,
      answerStallMs: 250,
    });
  });

  it('refuse anything else in one line naming the variable and the rule', () => {
    for (const bad of ['5000', '100', '6000.5', 'soon', '-1', '1e4'])
      expect(() => waitsFromEnv({ PGW_NOTIFY_LEASE_MS: bad })).toThrow(
        `PGW_NOTIFY_LEASE_MS must be whole milliseconds above 5000 (longer than a post may take): got '${bad}'`,
      );
    // The lease's floor is the post time-out asked for.
    expect(() => waitsFromEnv({ PGW_NOTIFY_POST_TIMEOUT_MS: '2000', PGW_NOTIFY_LEASE_MS: '2000' })).toThrow(
      "PGW_NOTIFY_LEASE_MS must be whole milliseconds above 2000 (longer than a post may take): got '2000'",
    );
    for (const [name, rule] of [
      ['PGW_NOTIFY_POST_TIMEOUT_MS', 'a post needs some time'],
      ['PGW_NOTIFY_EVERY_MS', 'the notifier needs a pause between runs'],
      ['PGW_SANDBOX_CLOSE_GRACE_MS', 'a stop gives work under way some time'],
      ['PGW_SANDBOX_NPP_MS', 'an NPP attempt is pending for a while'],
      ['PGW_SANDBOX_ANSWER_STALL_MS', 'a client needs some time to read'],
    ]) {
      let refusal: unknown;
      try {
        waitsFromEnv({ [name!]: '0' });
      } catch (error) {
        refusal = error;
      }
      expect(refusal).toBeInstanceOf(SettingRefused);
      expect(refusal).toMatchObject({
        setting: name,
        message: `${name} must be whole milliseconds above 0 (${rule}): got '0'`,
      });
    }
  });
});
