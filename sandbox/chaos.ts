// Deliveries under chaos: what real delivery does to a receiver, on purpose and at a rate of each
// kind, so that a receiver meets it before production does. Shared by `payment-gateway listen --chaos`
// (the forwarder applies it) and the sandbox's chaos setting for a notification address (the
// notifier applies it, on whichever instance delivers). Each fault is decided by a hash of the seed,
// the notification's number in the run and the attempt: the same seed gives the same faults to the
// same sequence of notifications, on any instance, in any order of delivery.
//   duplicate      the notification is posted a second time after it was acknowledged
//   reorder        it is held back until a later one has been posted
//   delay          it waits up to maxDelayMs before it is posted
//   stale          a copy dated staleSeconds before it, correctly signed, is posted first (a replay)
//   bad-signature  a copy whose signature does not match is posted first (a forgery)
//   timeout        the receiver's answer is dropped, as if the time-out had passed: sent again later
// Beyond these, a receiver's own 5xx or silence is answered as the gateway answers it: sent again,
// on the retry schedule.
import { createHash } from 'node:crypto';
import { hashRecipes } from '../generated/hash-recipes.ts';
import { webhooks, type WebhookName } from '../generated/webhooks.ts';
import { instantOf, wallTime } from '../runtime/gateway-time.ts';
import { computeHash, type HashRecipe } from '../runtime/recipe-hashes.ts';
import { nodeDigests } from '../server-stubs/index.ts';

export const CHAOS_KINDS = ['duplicate', 'reorder', 'delay', 'stale', 'bad-signature', 'timeout'] as const;
export type ChaosKind = (typeof CHAOS_KINDS)[number];

/** Each kind's rate when none is given. */
export const DEFAULT_RATES: Readonly<Record<ChaosKind, number>> = {
  duplicate: 0.2,
  reorder: 0.1,
  delay: 0.2,
  stale: 0.1,
  'bad-signature': 0.1,
  timeout: 0.1,
};

export interface Chaos {
  seed: number;
  /** Each kind's rate, from 0 (never) to 1 (every notification); a kind not named never happens. */
  rates: Partial<Record<ChaosKind, number>>;
  /** The longest delay. */
  maxDelayMs: number;
  /** How far before the notification's own date a stale copy is dated. */
  staleSeconds: number;
}

export const CHAOS_DEFAULTS = { maxDelayMs: 1000, staleSeconds: 3600 } as const;

/**
 * Kinds as a person writes them: `all`, or a comma-separated list of kinds each with an optional
 * `=RATE` (`duplicate=0.5,stale`). A refusal names the part and the rule.
 */
export function parseKinds(text: string): Partial<Record<ChaosKind, number>> | { refusal: string } {
  if (text.trim() === 'all' || text.trim() === '') return { ...DEFAULT_RATES };
  const rates: Partial<Record<ChaosKind, number>> = {};
  for (const part of text.split(',')) {
    const [name, rate, ...more] = part.trim().split('=');
    if (!(CHAOS_KINDS as readonly string[]).includes(name!) || more.length)
      return {
        refusal: `'${part.trim()}' is no kind of chaos; kinds: all, or any of ${CHAOS_KINDS.join(', ')}, each as KIND or KIND=RATE`,
      };
    const value = rate === undefined ? DEFAULT_RATES[name as ChaosKind] : Number(rate);
    if (rate !== undefined && (!/^(0(\.\d+)?|1(\.0+)?)$/.test(rate) || !Number.isFinite(value)))
      return { refusal: `the rate of ${name} must be a number from 0 to 1, not '${rate}'` };
    rates[name as ChaosKind] = value;
  }
  return rates;
}

/** The kinds and rates in the form parseKinds reads. */
export const kindsText = (rates: Partial<Record<ChaosKind, number>>) =>
  CHAOS_KINDS.filter((k) => rates[k] !== undefined)
    .map((k) => `${k}=${rates[k]}`)
    .join(',');

/** A number in [0, 1) that the seed, the notification's number, the attempt and the kind decide. */
export function draw(seed: number, seq: number, attempt: number, kind: string): number {
  const digest = createHash('sha256').update(`${seed}/${seq}/${attempt}/${kind}`).digest();
  return digest.readUInt32BE(0) / 2 ** 32;
}

/** What happens to one attempt of one notification. */
export interface Plan {
  duplicate: boolean;
  reorder: boolean;
  /** 0 when not delayed. */
  delayMs: number;
  stale: boolean;
  badSignature: boolean;
  timeout: boolean;
}

/** The faults of attempt `attempt` (1 the first) of the run's notification number `seq` (1 the first). */
export function planFor(chaos: Chaos, seq: number, attempt: number): Plan {
  const hit = (kind: ChaosKind) => (chaos.rates[kind] ?? 0) > draw(chaos.seed, seq, attempt, kind);
  return {
    duplicate: hit('duplicate'),
    // Held back once, on its first attempt: a retry is late already.
    reorder: attempt === 1 && hit('reorder'),
    delayMs: hit('delay') ? Math.round(draw(chaos.seed, seq, attempt, 'delay-ms') * chaos.maxDelayMs) : 0,
    stale: hit('stale'),
    badSignature: hit('bad-signature'),
    timeout: hit('timeout'),
  };
}

export interface Posting {
  body: string;
  headers: Record<string, string>;
}

const table = webhooks as unknown as Record<
  string,
  { signature: { in: string; name: string; recipe: string }; occurredAt?: { at: string; zone: string } }
>;
const eventOf = (body: string): WebhookName | undefined => {
  try {
    const event = (JSON.parse(body) as { event?: unknown }).event;
    return typeof event === 'string' && Object.hasOwn(table, event) ? (event as WebhookName) : undefined;
  } catch {
    return undefined;
  }
};
/** A hex signature with its last digit changed: the same length and form, never the right one. */
const flipped = (hex: string) => `${hex.slice(0, -1)}${hex.endsWith('0') ? '1' : '0'}`;

/** The notification with a signature that does not match it (in its header, or its body's hash). */
export function forged(posting: Posting): Posting {
  const event = eventOf(posting.body);
  if (!event) return { ...posting, body: `${posting.body} ` };
  const sig = table[event]!.signature;
  if (sig.in === 'header') {
    const name = Object.keys(posting.headers).find((h) => h.toLowerCase() === sig.name.toLowerCase()) ?? sig.name;
    return { body: posting.body, headers: { ...posting.headers, [name]: flipped(posting.headers[name] ?? '00') } };
  }
  const body = JSON.parse(posting.body) as Record<string, unknown>;
  return {
    body: JSON.stringify({ ...body, [sig.name]: flipped(String(body[sig.name] ?? '00')) }),
    headers: posting.headers,
  };
}

/**
 * The notification dated `seconds` before its own date and signed again as the gateway signs it: a
 * replay a receiver must refuse by its date alone. Undefined for a notification that carries no date,
 * or whose signature covers a secret the sender does not know (a body hash over the merchant's hashSalt).
 */
export function staled(posting: Posting, seconds: number, passphrase: string): Posting | undefined {
  const event = eventOf(posting.body);
  const entry = event && table[event];
  if (!entry?.occurredAt || entry.signature.in !== 'header') return undefined;
  const body = JSON.parse(posting.body) as Record<string, unknown>;
  const parts = entry.occurredAt.at.split('.');
  let holder: any = body;
  for (const part of parts.slice(0, -1)) holder = Array.isArray(holder) ? holder.at(Number(part)) : holder?.[part];
  const last = parts.at(-1)!;
  const key = Array.isArray(holder) ? holder.length + Number(last) : last;
  const at = holder?.[key];
  if (typeof at !== 'string') return undefined;
  holder[key] = wallTime(
    new Date(instantOf(at, entry.occurredAt.zone).getTime() - seconds * 1000),
    entry.occurredAt.zone,
  );
  const name =
    Object.keys(posting.headers).find((h) => h.toLowerCase() === entry.signature.name.toLowerCase()) ??
    entry.signature.name;
  const recipe = hashRecipes[entry.signature.recipe as keyof typeof hashRecipes] as HashRecipe;
  return {
    body: JSON.stringify(body),
    headers: { ...posting.headers, [name]: computeHash(recipe, passphrase, body, nodeDigests) },
  };
}

/** What a receiver should have answered to each kind of post, and what it did: the run's tally. */
export type PostKind = 'genuine' | 'retry' | 'duplicate' | 'stale' | 'bad-signature';
export const EXPECTED: Readonly<Record<PostKind, '2xx' | '4xx'>> = {
  genuine: '2xx',
  retry: '2xx',
  duplicate: '2xx',
  stale: '4xx',
  'bad-signature': '4xx',
};

/** A status as the tally groups it: 2xx, 3xx, 4xx, 5xx, or none (no answer). */
export const statusClass = (status: number) =>
  status >= 200 && status < 600 ? `${Math.floor(status / 100)}xx` : 'none';

export interface Tally {
  /** Posts of each kind, by the class of the receiver's answer. */
  posts: Record<PostKind, Record<string, number>>;
  /** Answers dropped (timeout), notifications held back (reorder), delayed. */
  timeouts: number;
  reordered: number;
  delayed: number;
  /** The posts whose answer was not the one expected, in words. */
  problems: string[];
}

export const emptyTally = (): Tally => ({
  posts: { genuine: {}, retry: {}, duplicate: {}, stale: {}, 'bad-signature': {} },
  timeouts: 0,
  reordered: 0,
  delayed: 0,
  problems: [],
});

/** Counts one post and its answer; a wrong answer is a problem, named with the delivery. */
export function count(tally: Tally, kind: PostKind, status: number, what: string): void {
  const cls = statusClass(status);
  tally.posts[kind][cls] = (tally.posts[kind][cls] ?? 0) + 1;
  const wanted = EXPECTED[kind];
  const forgery = kind === 'stale' || kind === 'bad-signature';
  // A forged or stale copy is a problem when it is taken (2xx); a valid one when it is refused (a 5xx
  // or no answer is retried, as the gateway retries it).
  if (forgery ? cls !== '2xx' : cls === wanted || cls === '5xx' || cls === 'none') return;
  const why: Record<PostKind, string> = {
    genuine: 'a valid notification refused',
    retry: 'a retried notification refused',
    duplicate: 'a repeat not acknowledged (the gateway sends it again and again)',
    stale: 'a stale copy (a replay) taken as real',
    'bad-signature': 'a copy with a bad signature taken as real',
  };
  tally.problems.push(`${what}: ${why[kind]} (answered ${status || 'nothing'}, expected ${wanted})`);
}

/** The tally in lines: each kind of post and what the receiver answered, then each problem. */
export function summary(tally: Tally, chaos: Chaos, notifications: number): string[] {
  const total = Object.values(tally.posts).reduce((n, by) => n + Object.values(by).reduce((a, b) => a + b, 0), 0);
  const lines = [
    `Chaos summary (seed ${chaos.seed}; ${kindsText(chaos.rates) || 'no faults'}): ${notifications} notification${notifications === 1 ? '' : 's'}, ${total} posts`,
  ];
  for (const kind of Object.keys(tally.posts) as PostKind[]) {
    const by = tally.posts[kind];
    const n = Object.values(by).reduce((a, b) => a + b, 0);
    if (!n && kind !== 'genuine') continue;
    const answers = Object.entries(by)
      .sort()
      .map(([cls, k]) => `${k} ${cls === 'none' ? 'unanswered' : cls}`)
      .join(', ');
    lines.push(`  ${kind.padEnd(14)}${String(n).padStart(5)} sent: ${answers || 'none'} (expected ${EXPECTED[kind]})`);
  }
  lines.push(
    `  answers dropped as timed out ${tally.timeouts}, held back ${tally.reordered}, delayed ${tally.delayed} (up to ${chaos.maxDelayMs} ms)`,
  );
  lines.push(
    tally.problems.length
      ? `${tally.problems.length} problem${tally.problems.length === 1 ? '' : 's'}:`
      : 'No problems: every answer was the one expected (whether a repeat was handled once only the receiver can tell: contract --notifications --effects checks it)',
  );
  for (const p of tally.problems) lines.push(`  ${p}`);
  return lines;
}

/** A stored chaos setting (chaos_settings) as the planner reads it. */
export function chaosOfRow(row: Record<string, unknown>): Chaos {
  return {
    seed: Number(row.seed),
    rates: JSON.parse(String(row.rates)) as Partial<Record<ChaosKind, number>>,
    maxDelayMs: Number(row.max_delay_ms),
    staleSeconds: Number(row.stale_seconds),
  };
}

/** One delivery attempt of a notification under chaos, and what the chaos did beside it (chaos_posts). */
export interface AttemptRecord {
  id: number;
  event: string;
  subject: string;
  attempt: number;
  /** The receiver's status to the notification as sent (0: no answer). */
  status: number;
}
export interface FaultRecord {
  id: number;
  attempt: number;
  kind: string;
  /** The receiver's status to the post; a delay's or a hold's ms. */
  value: number;
}

/** A run's tally from what the store kept of it: the same one listen --chaos keeps as it goes. */
export function tallyOf(attempts: AttemptRecord[], faults: FaultRecord[]): Tally {
  const tally = emptyTally();
  const byAttempt = new Map<string, FaultRecord[]>();
  for (const f of faults) {
    const key = `${f.id}/${f.attempt}`;
    byAttempt.set(key, [...(byAttempt.get(key) ?? []), f]);
    if (f.kind === 'reorder') tally.reordered++;
  }
  for (const a of attempts) {
    const what = `#${a.id} ${a.event} ${a.subject}`;
    const around = byAttempt.get(`${a.id}/${a.attempt}`) ?? [];
    for (const f of around) {
      if (f.kind === 'delay') tally.delayed++;
      else if (f.kind === 'timeout') tally.timeouts++;
      else if (f.kind === 'bad-signature' || f.kind === 'stale' || f.kind === 'duplicate')
        count(tally, f.kind, f.value, what);
    }
    count(tally, a.attempt === 1 ? 'genuine' : 'retry', a.status, what);
  }
  return tally;
}
