// How long an instance holds a notification it claimed: a minute, or PGW_NOTIFY_LEASE_MS (the kill
// test shortens it so that a dead instance's claims come back in seconds), never as short as a post
// may take, so that a live instance keeps its claim while it posts.
import { describe, expect, it } from 'vitest';
import { DEFAULT_LEASE_MS, leaseFromEnv } from '../../sandbox/notifier.ts';

describe('PGW_NOTIFY_LEASE_MS', () => {
  it('defaults to a minute and takes whole milliseconds above the 5 s a post may take', () => {
    expect(leaseFromEnv({})).toBe(DEFAULT_LEASE_MS);
    expect(DEFAULT_LEASE_MS).toBe(60_000);
    expect(leaseFromEnv({ PGW_NOTIFY_LEASE_MS: '6000' })).toBe(6000);
  });

  it('refuses anything else in one line naming the variable and the rule', () => {
    for (const bad of ['5000', '100', '6000.5', 'soon', '-1'])
      expect(() => leaseFromEnv({ PGW_NOTIFY_LEASE_MS: bad })).toThrow(
        `PGW_NOTIFY_LEASE_MS must be whole milliseconds above 5000 (longer than a post may take): got '${bad}'`,
      );
  });
});
