#!/usr/bin/env node
// payment-gateway chaos: the sandbox's own deliveries to one of the account's notification addresses
// under chaos (the control API's /chaos): set it, see each run's summary, stop it. What listen --chaos
// does between the sandbox and a local endpoint, done by the sandbox itself (on every instance of a
// shared deployment), for an address it posts to.
import { type CommandOutput, type CommandSpec, startCommand, usageMistake } from '../../cli-kit/index.ts';
import { CHAOS_DEFAULTS, kindsText, parseKinds } from '../../sandbox/chaos.ts';
import { ACCOUNT_OPTIONS, controlClient, controlFailure, sandboxAccount } from './sandbox-account.ts';

const COMMAND: CommandSpec = {
  name: 'payment-gateway chaos',
  usage: '[--notify-url URL [--kinds KINDS] [--seed N] | --off URL] [options]',
  summary: `With --notify-url, the sandbox delivers the account's notifications to URL under chaos from now on:
duplicates, reordering, delays, stale copies, bad signatures and dropped answers, each kind at a rate
(as listen --chaos: KINDS is all, or a list such as duplicate=0.5,stale), retried on the gateway's
schedule as the sandbox clock moves; the same --seed gives the same faults to the same sequence.
Without options, prints each run's summary: what was sent and what the receiver answered (exit code 1
when an answer was not the one expected). --off URL stops it and prints its last summary.`,
  options: {
    'notify-url': { type: 'string', value: 'URL', help: 'the address to deliver to under chaos (a new run)' },
    kinds: { type: 'string', value: 'KINDS', default: 'all', help: 'the kinds of fault and their rates' },
    seed: { type: 'string', value: 'N', default: 'a random one, printed', help: 'the seed (a whole number)' },
    'max-delay-ms': {
      type: 'string',
      value: 'MS',
      default: String(CHAOS_DEFAULTS.maxDelayMs),
      help: 'the longest delay (at most 10000)',
    },
    'stale-seconds': {
      type: 'string',
      value: 'S',
      default: String(CHAOS_DEFAULTS.staleSeconds),
      help: 'how much older than the notification a stale copy is dated',
    },
    off: { type: 'string', value: 'URL', help: 'stop the chaos for this address' },
    ...ACCOUNT_OPTIONS,
    partner: { type: 'boolean', help: "the sandbox partner's notifications (merchantCreated)" },
  },
};

const whole = (value: string | undefined, min: number, max: number) =>
  value === undefined
    ? undefined
    : /^\d+$/.test(value) && Number(value) >= min && Number(value) <= max
      ? Number(value)
      : Number.NaN;

export async function run(argv: string[], options: CommandOutput = {}): Promise<number> {
  const { print, printError, parsed } = startCommand(COMMAND, argv, options);
  if (typeof parsed === 'number') return parsed;
  const values = parsed.values as Record<string, string | boolean | undefined>;
  const text = (name: string) => (typeof values[name] === 'string' ? (values[name] as string) : undefined);
  const url = text('notify-url');
  const off = text('off');
  for (const [name, value] of [
    ['notify-url', url],
    ['off', off],
  ] as const)
    if (value !== undefined && !/^https?:\/\//.test(value))
      return usageMistake(COMMAND, `--${name} needs an http(s) URL, not '${value}'`, printError);
  if (url !== undefined && off !== undefined)
    return usageMistake(COMMAND, 'give --notify-url or --off, not both', printError);
  const setting = ['kinds', 'seed', 'max-delay-ms', 'stale-seconds'].find((o) => values[o] !== undefined);
  if (setting && url === undefined) return usageMistake(COMMAND, `--${setting} needs --notify-url`, printError);
  const rates = parseKinds(text('kinds') ?? 'all');
  if ('refusal' in rates) return usageMistake(COMMAND, `--kinds: ${rates.refusal}`, printError);
  const seed = whole(text('seed'), 0, 2 ** 31 - 1);
  const maxDelayMs = whole(text('max-delay-ms'), 0, 10_000);
  const staleSeconds = whole(text('stale-seconds'), 1, 31_536_000);
  for (const [name, n, rule] of [
    ['seed', seed, 'a whole number from 0 to 2147483647'],
    ['max-delay-ms', maxDelayMs, 'a whole number from 0 to 10000'],
    ['stale-seconds', staleSeconds, 'a whole number from 1 to 31536000'],
  ] as const)
    if (Number.isNaN(n)) return usageMistake(COMMAND, `--${name} must be ${rule}, not '${text(name)}'`, printError);
  const account = sandboxAccount(values);
  const control = controlClient(account, values.partner ? account.partnerUUID : account.merchantUUID);
  try {
    if (url !== undefined) {
      const [set] = (
        await control.setChaos({
          notifyURL: url,
          faults: rates,
          ...(seed !== undefined ? { seed } : {}),
          ...(maxDelayMs !== undefined ? { maxDelayMs } : {}),
          ...(staleSeconds !== undefined ? { staleSeconds } : {}),
        })
      ).chaos;
      print(`Chaos on for ${url}: ${kindsText(set!.faults)}; seed ${set!.seed} (--seed ${set!.seed} repeats it)`);
      return 0;
    }
    const runs = off !== undefined ? (await control.stopChaos(off)).chaos : (await control.chaos()).chaos;
    if (!runs.length) print('No chaos is set.');
    for (const r of runs) {
      print(`${off !== undefined ? 'Chaos off for' : 'Chaos for'} ${r.notifyURL}:`);
      for (const line of r.summary) print(`  ${line}`);
    }
    return runs.some((r) => r.problems.length) ? 1 : 0;
  } catch (error) {
    printError(`${COMMAND.name}: ${controlFailure(account, error)}`);
    return 1;
  }
}

if (import.meta.main) process.exitCode = await run(process.argv.slice(2));
