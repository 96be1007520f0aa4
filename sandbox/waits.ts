// The sandbox's waits that the environment may shorten: how long a notification's claim holds, how
// long one post may take, how often the notifier looks for due work, how long a stop waits for
// connections and work under way, how long a payout's NPP attempt is pending, how long a streamed
// answer may wait for a client that takes none of it. A deployment keeps the defaults; a test sets them short so that
// it proves the lease, the time-out and the grace without sitting through them (docs/DEPLOY.md).
import { notificationDelivery } from '../generated/webhooks.ts';
import { SettingRefused } from './setting-refused.ts';

/** The waits, in milliseconds. */
export interface Waits {
  /** How long an instance holds a notification it claimed (sandbox time). */
  leaseMs: number;
  /** How long a notification's post may take before it counts as failed. */
  postTimeoutMs: number;
  /** How often the notifier runs its due work and delivers what is due. */
  deliveryEveryMs: number;
  /** How long a stop waits for requests, deliveries and batches under way before it closes them. */
  closeGraceMs: number;
  /** How long a payout's NPP attempt stays pending before its outcome (sandbox time). */
  nppMs: number;
  /** How long a streamed answer (a settlement zip) waits for a client that takes none of it before its connection is closed. */
  answerStallMs: number;
}

export const DEFAULT_WAITS: Readonly<Waits> = {
  leaseMs: 60_000,
  // The gateway's own (x-notification-delivery).
  postTimeoutMs: notificationDelivery.timeoutSeconds * 1000,
  deliveryEveryMs: 1_000,
  closeGraceMs: 10_000,
  // Inferred: NPP settles in seconds (payout-attempts.ts, RAIL_MS).
  nppMs: 2_000,
  // The stubs' own (serverDefaults.answerStallTimeout): a load balancer's idle time-out.
  answerStallMs: 60_000,
};

/** Each wait's variable, in the order they are read (the lease's rule depends on the post's time-out). */
export const WAIT_ENV = {
  postTimeoutMs: 'PGW_NOTIFY_POST_TIMEOUT_MS',
  leaseMs: 'PGW_NOTIFY_LEASE_MS',
  deliveryEveryMs: 'PGW_NOTIFY_EVERY_MS',
  closeGraceMs: 'PGW_SANDBOX_CLOSE_GRACE_MS',
  nppMs: 'PGW_SANDBOX_NPP_MS',
  answerStallMs: 'PGW_SANDBOX_ANSWER_STALL_MS',
} as const satisfies Record<keyof Waits, string>;

/**
 * What each wait is, in words written once: `what` is what `sandbox --help` says of its variable, and
 * `what` then `more` the row of docs/DEPLOY.md's Waits table (its `sandbox:waits` block, written from
 * here by waitsTable; test/sandbox/waits-doc.test.ts). Markdown only in `more`: the help prints `what`.
 */
export const WAIT_WORDS: Readonly<Record<keyof Waits, { what: string; more?: string }>> = {
  postTimeoutMs: {
    what: "how long one notification's post may take before it counts as failed (and is retried); also the longest a clock advance waits for the deliveries it makes before it answers",
  },
  leaseMs: {
    what: "how long an instance holds a notification it claimed (sandbox time); a dead instance's claims come back after it",
    more: 'Above the post time-out',
  },
  deliveryEveryMs: {
    what: 'how often the notifier runs: payouts whose attempts ended queue their notifications, and what is due is delivered',
  },
  closeGraceMs: {
    what: 'how long a stop (SIGTERM, SIGINT) waits for requests, deliveries and batches under way, then closes every connection',
    more: "A long poll (a `listen` client's) is not waited for: the stop answers it at once",
  },
  nppMs: {
    what: "how long a payout's NPP attempt stays pending before its outcome (sandbox time; inferred: NPP settles in seconds)",
    more: 'A DE attempt stays pending 24 hours of sandbox time: move the clock (`POST /_sandbox/clock/advance`)',
  },
  answerStallMs: {
    what: 'how long a streamed answer (a settlement zip) waits for a client that takes none of it (nothing written is sent on) before its connection is closed, the file cut short',
    more: "A load balancer's idle time-out is usually as long",
  },
};

/** The waits in order (WAIT_ENV's, the order they are read). */
const WAIT_KEYS = Object.keys(WAIT_ENV) as (keyof Waits)[];

/** What `sandbox --help` says of each wait's variable: its words, its unit and its default. */
export const waitsHelp = (): Record<string, string> =>
  Object.fromEntries(
    WAIT_KEYS.map((key) => [
      WAIT_ENV[key],
      `${WAIT_WORDS[key].what}, in ms (default ${DEFAULT_WAITS[key]}; docs/DEPLOY.md, Waits)`,
    ]),
  );

/** docs/DEPLOY.md's Waits table (its `sandbox:waits` block): each variable, its default and its words. */
export const waitsTable = (): string =>
  [
    '| variable | default | what it is |',
    '|---|---|---|',
    ...WAIT_KEYS.map((key) => {
      const { what, more } = WAIT_WORDS[key];
      return `| \`${WAIT_ENV[key]}\` | ${DEFAULT_WAITS[key]} | ${more ? `${what}. ${more}` : what} |`;
    }),
  ].join('\n');

/** The longest wait a timer takes: Node runs a longer one after 1 ms, the opposite of what was asked. */
export const LONGEST_WAIT_MS = 2_147_483_647;

/**
 * A variable's whole milliseconds, above `floor` and at most LONGEST_WAIT_MS; undefined when unset;
 * else a one-line refusal naming the variable and the rule.
 */
export function wholeMs(name: string, raw: string | undefined, floor: number, rule: string): number | undefined {
  if (raw === undefined || raw === '') return undefined;
  const ms = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || !Number.isSafeInteger(ms) || ms <= floor)
    throw new SettingRefused(name, `must be whole milliseconds above ${floor} (${rule}): got '${raw}'`);
  if (ms > LONGEST_WAIT_MS)
    throw new SettingRefused(
      name,
      `must be at most ${LONGEST_WAIT_MS} ms (the longest wait a timer takes): got '${raw}'`,
    );
  return ms;
}

const readMs = (env: NodeJS.ProcessEnv, key: keyof Waits, floor: number, rule: string): number =>
  wholeMs(WAIT_ENV[key], env[WAIT_ENV[key]], floor, rule) ?? DEFAULT_WAITS[key];

/** The waits the environment asks for, each checked before anything is opened. */
export function waitsFromEnv(env: NodeJS.ProcessEnv): Waits {
  const postTimeoutMs = readMs(env, 'postTimeoutMs', 0, 'a post needs some time');
  return {
    postTimeoutMs,
    leaseMs: readMs(env, 'leaseMs', postTimeoutMs, 'longer than a post may take'),
    deliveryEveryMs: readMs(env, 'deliveryEveryMs', 0, 'the notifier needs a pause between runs'),
    closeGraceMs: readMs(env, 'closeGraceMs', 0, 'a stop gives work under way some time'),
    nppMs: readMs(env, 'nppMs', 0, 'an NPP attempt is pending for a while'),
    answerStallMs: readMs(env, 'answerStallMs', 0, 'a client needs some time to read'),
  };
}
