#!/usr/bin/env node
// payment-gateway listen --forward-to URL: streams the sandbox's notifications to a local endpoint,
// posted exactly as the gateway posts them (same raw body, same signature headers), and prints each
// delivery with the endpoint's answer. Reads them from the sandbox control API by long poll.
// With --chaos, delivers them as real delivery does at its worst (sandbox/chaos.ts): repeats, out of
// order, late, replayed, forged, and sent again after a 5xx, no answer or a dropped answer, on the
// gateway's retry schedule with its minutes as seconds; then sums up what was sent and answered.
import { type CommandOutput, type CommandSpec, startCommand, usageMistake } from '../../cli-kit/index.ts';
import { notificationDelivery, notificationHeaders } from '../../notifications/index.ts';
import {
  CHAOS_DEFAULTS,
  type Chaos,
  count,
  emptyTally,
  forged,
  kindsText,
  parseKinds,
  planFor,
  type PostKind,
  type Posting,
  staled,
  summary,
} from '../../sandbox/chaos.ts';
import type { Delivery } from '../../sandbox/control-client.ts';
import { logSafe } from '../../runtime/log-line.ts';
import { describeDelivery } from './deliveries.ts';
import { commandClient, request } from './http-client.ts';
import { ACCOUNT_OPTIONS, controlClient, sandboxAccount } from './sandbox-account.ts';

const RETRY_SECONDS = notificationDelivery.retryAfterMinutes;
/** The most of the endpoint's answer read and shown. */
const ANSWER_BYTES = 4096;

const COMMAND: CommandSpec = {
  name: 'payment-gateway listen',
  usage: '--forward-to URL [--chaos [KINDS] [--seed N]] [options]',
  summary: `Forwards every notification the sandbox sends for one merchant (or partner) to URL, signed as the
gateway signs it, and prints each delivery and the endpoint's answer. Needs the sandbox's control API
(on with npm start). Starts with the notifications queued from now on unless --all is given.

With --chaos, each notification meets what real delivery does, each kind at a rate: duplicate (posted
again after it was acknowledged), reorder (held back until a later one is posted), delay (up to
--max-delay-ms), stale (a correctly signed copy dated --stale-seconds earlier, posted first: a replay),
bad-signature (a copy with a wrong signature, posted first), timeout (the answer dropped, so it is
sent again). A notification not acknowledged (a 5xx, no answer within --timeout-seconds, a dropped
answer) is sent again after ${RETRY_SECONDS.join(', ')} seconds (the gateway's minutes, as seconds).
KINDS: all (the default), or a list such as duplicate=0.5,stale,bad-signature=1 (a kind without a rate
takes its default). The same --seed gives the same faults to the same notifications. At the end (after
--count, or Ctrl-C) a summary says what was sent and what the endpoint answered; the exit code is 1
when an answer was not the one expected (a stale or forged copy taken, a valid one or a repeat refused).`,
  options: {
    'forward-to': {
      type: 'string',
      value: 'URL',
      help: 'where to POST each notification (e.g. http://localhost:3000/hooks)',
    },
    all: { type: 'boolean', help: 'forward the notifications already queued too' },
    count: { type: 'string', value: 'N', help: 'stop after N notifications (scripts, tests)' },
    'poll-seconds': { type: 'string', value: 'S', default: '25', help: 'how long one long poll waits' },
    chaos: {
      type: 'string',
      value: 'KINDS',
      bareValue: 'all',
      help: 'deliver under chaos: all kinds, or those listed with their rates',
    },
    seed: { type: 'string', value: 'N', default: 'a random one, printed', help: "the chaos's seed (a whole number)" },
    'max-delay-ms': {
      type: 'string',
      value: 'MS',
      default: String(CHAOS_DEFAULTS.maxDelayMs),
      help: 'the longest delay',
    },
    'stale-seconds': {
      type: 'string',
      value: 'S',
      default: String(CHAOS_DEFAULTS.staleSeconds),
      help: 'how much older than the notification a stale copy is dated',
    },
    'timeout-seconds': {
      type: 'string',
      value: 'S',
      default: String(notificationDelivery.timeoutSeconds),
      help: "how long the endpoint may take to answer (the gateway's time-out)",
    },
    ...ACCOUNT_OPTIONS,
    partner: {
      type: 'boolean',
      help: 'act as the sandbox partner (partnerUUID) and forward merchantCreated notifications',
    },
  },
};

/** Where lines and mistakes go (tests capture them), and a signal that stops listening. */
export interface ListenOptions extends CommandOutput {
  signal?: AbortSignal;
}

const NO_FAULTS = { duplicate: false, reorder: false, delayMs: 0, stale: false, badSignature: false, timeout: false };
/** A whole number option within bounds, or undefined when it breaks them. */
const whole = (value: string | undefined, fallback: number, min: number, max: number) => {
  if (value === undefined) return fallback;
  const n = Number(value);
  return /^\d+$/.test(value) && n >= min && n <= max ? n : undefined;
};

interface Pending {
  d: Delivery;
  /** Its number in this run (the chaos's draw), from 1. */
  seq: number;
  /** From 1. */
  attempt: number;
  /** When a retry is due (ms since the epoch). */
  dueAt: number;
}

export async function run(argv: string[], options: ListenOptions = {}): Promise<number> {
  const { print, printError, parsed } = startCommand(COMMAND, argv, options);
  if (typeof parsed === 'number') return parsed;
  const values = parsed.values as Record<string, string | boolean | undefined>;
  const text = (name: string) => (typeof values[name] === 'string' ? (values[name] as string) : undefined);
  const target = text('forward-to');
  if (target === undefined || !/^https?:\/\//.test(target))
    return usageMistake(COMMAND, '--forward-to needs an http(s) URL, e.g. http://localhost:3000/hooks', printError);
  const count_ = values.count === undefined ? Infinity : Number(values.count);
  const pollSeconds = values['poll-seconds'] === undefined ? 25 : Number(values['poll-seconds']);
  if (!(count_ > 0) || !Number.isInteger(pollSeconds) || pollSeconds < 0 || pollSeconds > 60)
    return usageMistake(
      COMMAND,
      '--count must be a positive integer and --poll-seconds an integer from 0 to 60',
      printError,
    );
  const timeoutSeconds = whole(text('timeout-seconds'), notificationDelivery.timeoutSeconds, 1, 600);
  if (timeoutSeconds === undefined)
    return usageMistake(
      COMMAND,
      `--timeout-seconds must be a whole number from 1 to 600, not '${text('timeout-seconds')}'`,
      printError,
    );
  let chaos: Chaos | undefined;
  const kinds = text('chaos');
  if (kinds === undefined) {
    const stray = ['seed', 'max-delay-ms', 'stale-seconds'].find((o) => values[o] !== undefined);
    if (stray) return usageMistake(COMMAND, `--${stray} needs --chaos`, printError);
  } else {
    const rates = parseKinds(kinds);
    if ('refusal' in rates) return usageMistake(COMMAND, `--chaos: ${rates.refusal}`, printError);
    const seed = whole(text('seed'), Math.floor(Math.random() * 1_000_000), 0, Number.MAX_SAFE_INTEGER);
    const maxDelayMs = whole(text('max-delay-ms'), CHAOS_DEFAULTS.maxDelayMs, 0, 60_000);
    const staleSeconds = whole(text('stale-seconds'), CHAOS_DEFAULTS.staleSeconds, 1, 31_536_000);
    if (seed === undefined)
      return usageMistake(COMMAND, `--seed must be a whole number, not '${text('seed')}'`, printError);
    if (maxDelayMs === undefined)
      return usageMistake(
        COMMAND,
        `--max-delay-ms must be a whole number from 0 to 60000, not '${text('max-delay-ms')}'`,
        printError,
      );
    if (staleSeconds === undefined)
      return usageMistake(
        COMMAND,
        `--stale-seconds must be a whole number from 1 to 31536000, not '${text('stale-seconds')}'`,
        printError,
      );
    chaos = { seed, rates, maxDelayMs, staleSeconds };
  }
  const account = sandboxAccount(values);
  const accountId = values.partner ? account.partnerUUID : account.merchantUUID;
  const control = controlClient(account, accountId, options.signal);
  let after = 0;
  try {
    if (!values.all) after = (await control.deliveries({ latest: 1 })).deliveries.at(-1)?.id ?? 0;
  } catch (error) {
    printError(
      `${COMMAND.name}: cannot reach the sandbox control API at ${account.base}/_sandbox: ${(error as Error).message}`,
    );
    return 1;
  }
  print(
    `Forwarding the notifications of ${accountId} from ${account.base} to ${target}${
      chaos ? ` under chaos (${kindsText(chaos.rates)}; seed ${chaos.seed}: --seed ${chaos.seed} repeats it)` : ''
    } (Ctrl-C stops)`,
  );

  const tally = emptyTally();
  const stopped = () => options.signal?.aborted === true;
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      options.signal?.addEventListener(
        'abort',
        () => {
          clearTimeout(timer);
          resolve();
        },
        { once: true },
      );
    });
  // The endpoint's client never gives up: an endpoint down a while is sent again, as the gateway does.
  const endpoint = commandClient(Number.POSITIVE_INFINITY);
  /** Posts one body to the endpoint: its status (0 for none) and its answer as a line shows it. */
  const post = async (posting: Posting) => {
    const started = performance.now();
    try {
      const a = await request(
        endpoint,
        target,
        { method: 'POST', headers: posting.headers, body: posting.body },
        {
          timeoutMs: timeoutSeconds * 1000,
          maxBytes: ANSWER_BYTES,
          ...(options.signal ? { signal: options.signal } : {}),
        },
      );
      const said = a.text.slice(0, 200).replace(/\s+/g, ' ').trim();
      return {
        status: a.status,
        answer: `${a.status}${a.statusText ? ` ${a.statusText}` : ''}${said ? ` ${said}` : ''}`,
        ms: Math.round(performance.now() - started),
      };
    } catch (error) {
      return {
        status: 0,
        answer: `no answer (${(error as Error).message})`,
        ms: Math.round(performance.now() - started),
      };
    }
  };
  // The subject and the endpoint's answer are others' text: through the one log writer's rules.
  const line = (p: Pending, tag: string, a: { answer: string; ms: number }) =>
    print(
      logSafe(
        `#${p.d.id}${tag ? ` [${tag}]` : ''} ${describeDelivery(p.d)} ${p.d.subject} -> POST ${target} -> ${a.answer} [${a.ms} ms]`,
      ),
    );
  const retries: Pending[] = [];

  /** One attempt of one notification, with the faults the chaos gives it. */
  const attempt = async (p: Pending) => {
    const plan = chaos ? planFor(chaos, p.seq, p.attempt) : NO_FAULTS;
    // Only what the gateway posts: the sandbox's record may name other headers, never sent on.
    const posting = { body: p.d.body, headers: notificationHeaders(p.d.event, p.d.headers) };
    const what = `#${p.d.id} ${describeDelivery(p.d)}`;
    if (plan.delayMs) {
      tally.delayed++;
      await sleep(plan.delayMs);
    }
    const extra = async (kind: PostKind, copy: Posting | undefined) => {
      if (!copy) return;
      const a = await post(copy);
      count(tally, kind, a.status, what);
      line(p, kind, a);
    };
    if (plan.badSignature) await extra('bad-signature', forged(posting));
    if (plan.stale && chaos) await extra('stale', staled(posting, chaos.staleSeconds, account.passphrase));
    const kind: PostKind = p.attempt === 1 ? 'genuine' : 'retry';
    const a = await post(posting);
    if (chaos) count(tally, kind, a.status, what);
    const tags = [p.attempt > 1 ? `retry ${p.attempt - 1}` : '', plan.delayMs ? `delayed ${plan.delayMs} ms` : ''];
    let ok = a.status >= 200 && a.status < 300;
    if (plan.timeout) {
      tally.timeouts++;
      ok = false;
      tags.push('timeout: answer dropped');
    }
    line(p, tags.filter(Boolean).join(', '), a);
    if (ok && plan.duplicate) await extra('duplicate', posting);
    // Not acknowledged: sent again as the gateway would, while attempts remain.
    if (chaos && !ok && p.attempt <= RETRY_SECONDS.length)
      retries.push({ ...p, attempt: p.attempt + 1, dueAt: Date.now() + RETRY_SECONDS[p.attempt - 1]! * 1000 });
  };

  let forwarded = 0;
  let held: Pending | undefined;
  const release = async () => {
    const h = held;
    held = undefined;
    if (h) await attempt(h);
  };
  while (!stopped()) {
    for (const due of retries.filter((r) => r.dueAt <= Date.now()).sort((x, y) => x.dueAt - y.dueAt)) {
      retries.splice(retries.indexOf(due), 1);
      await attempt(due);
    }
    if (forwarded >= count_) {
      await release();
      if (!retries.length) break;
      await sleep(Math.max(0, Math.min(...retries.map((r) => r.dueAt)) - Date.now()));
      continue;
    }
    const untilRetry = retries.length
      ? Math.ceil((Math.min(...retries.map((r) => r.dueAt)) - Date.now()) / 1000)
      : pollSeconds;
    const wait = Math.max(0, Math.min(pollSeconds, untilRetry, held ? 1 : pollSeconds));
    let batch: Delivery[];
    try {
      batch = (await control.deliveries({ after, waitSeconds: wait }, options.signal)).deliveries;
    } catch (error) {
      if (stopped()) break;
      if (control.gaveUp) {
        printError(
          `${COMMAND.name}: the sandbox control API at ${account.base}/_sandbox stopped answering: ${control.gaveUp}`,
        );
        return 1;
      }
      print(logSafe(`listen: the sandbox did not answer (${(error as Error).message}); trying again in 1 s`));
      await sleep(1000);
      continue;
    }
    if (!batch.length) await release();
    for (const d of batch) {
      if (forwarded >= count_ || stopped()) break;
      after = d.id;
      const p = { d, seq: ++forwarded, attempt: 1, dueAt: 0 };
      if (chaos && !held && planFor(chaos, p.seq, 1).reorder) {
        held = p;
        tally.reordered++;
        print(logSafe(`#${d.id} [held back] ${describeDelivery(d)} ${d.subject}: posted after the next one`));
        continue;
      }
      await attempt(p);
      await release();
    }
  }
  if (!chaos) return 0;
  for (const l of summary(tally, chaos, forwarded)) print(l);
  return tally.problems.length ? 1 : 0;
}

if (import.meta.main) {
  const stop = new AbortController();
  process.once('SIGINT', () => stop.abort());
  process.exitCode = await run(process.argv.slice(2), { signal: stop.signal });
}
