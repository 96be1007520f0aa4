#!/usr/bin/env node
// payment-gateway logs: the account's own request log as the sandbox kept it (GET /_sandbox/requests):
// each request with its outcome and, for a refusal, why: the check, the field and the rule, and for a
// hash the recipe and the text it was computed over, the passphrase a placeholder. --follow prints the
// new ones as they come until Ctrl-C.
import {
  type CommandOutput,
  type CommandSpec,
  countOf,
  startCommand,
  type UsageError,
  usageMistake,
} from '../../cli-kit/index.ts';
import type { ControlSchemas } from '../../sandbox/control-client.ts';
import { ACCOUNT_OPTIONS, controlClient, controlFailure, sandboxAccount } from './sandbox-account.ts';

type Line = ControlSchemas['RequestLine'];
const OUTCOMES = ['approved', 'declined', 'pending', 'refused'] as const;

const COMMAND: CommandSpec = {
  name: 'payment-gateway logs',
  usage: '[options]',
  summary: `Prints the requests the sandbox answered for one merchant (or partner), oldest first: each with its
operation, responseCode and outcome, the scenario it asked for, and for a refusal why (for a -1: the
check, and for a hash its recipe and the text it was computed over, {md5(passphrase)} where your
secret goes: compute yours and compare). Only requests made with the account's id and api key are
there. Needs the sandbox's control API.`,
  options: {
    follow: { type: 'boolean', short: 'f', help: 'keep printing new requests as they come (Ctrl-C stops)' },
    latest: { type: 'string', value: 'N', default: '20', help: 'how many of the latest to start with (1 to 500)' },
    operation: { type: 'string', value: 'ID', help: 'only this operation (an operationId: processCard)' },
    outcome: { type: 'string', value: 'OUTCOME', help: `only this outcome: ${OUTCOMES.join(', ')}` },
    since: { type: 'string', value: 'TIME', help: 'only from this UTC time (2026-11-27T09:30:00Z)' },
    json: { type: 'boolean', help: 'one JSON object per line, as the control API answers each' },
    ...ACCOUNT_OPTIONS,
    partner: { type: 'boolean', help: "the sandbox partner's requests" },
  },
};

/** One request on one line, and its explanation on the next lines. */
export function requestLine(l: Line): string {
  const head = `${l.at.slice(11, 23)} #${l.id} ${l.verb} ${l.path} ${l.operation ?? '-'} ${l.responseCode ?? `HTTP ${l.status}`} ${l.outcome}${l.errorCode ? ` ${l.errorCode}` : ''}${l.scenario ? ` [scenario ${l.scenario}]` : ''} ${l.ms}ms`;
  const e = l.explanation;
  if (!e) return l.outcome === 'refused' && l.responseMessage ? `${head}\n  ${l.responseMessage}` : head;
  const lines = [
    `  check: ${e.check}${e.field ? `, field ${e.field}` : ''}${e.rule ? `, rule ${e.rule}` : ''}${l.responseMessage && e.check !== 'hash' ? ` (${l.responseMessage})` : ''}`,
  ];
  if (e.recipe) lines.push(`  recipe ${e.recipe}: ${e.formula ?? ''}`);
  if (e.preimage !== undefined) lines.push(`  computed over: ${e.preimage}${e.key ? ` (keyed by ${e.key})` : ''}`);
  return [head, ...lines].join('\n');
}

export interface LogsOptions extends CommandOutput {
  signal?: AbortSignal;
}

export async function run(argv: string[], options: LogsOptions = {}): Promise<number> {
  const { print, printError, parsed } = startCommand(COMMAND, argv, options);
  if (typeof parsed === 'number') return parsed;
  const values = parsed.values as Record<string, string | boolean | undefined>;
  let latest: number;
  try {
    latest = countOf(values.latest as string | undefined, '--latest', 20);
  } catch (error) {
    return usageMistake(COMMAND, (error as UsageError).message, printError);
  }
  if (latest > 500) return usageMistake(COMMAND, `--latest must be at most 500, not '${values.latest}'`, printError);
  const outcome = values.outcome as string | undefined;
  if (outcome !== undefined && !(OUTCOMES as readonly string[]).includes(outcome))
    return usageMistake(COMMAND, `--outcome must be one of ${OUTCOMES.join(', ')}, not '${outcome}'`, printError);
  const since = values.since as string | undefined;
  if (since !== undefined && !(/^\d{4}-\d{2}-\d{2}T[0-9:.]+Z$/.test(since) && !Number.isNaN(Date.parse(since))))
    return usageMistake(COMMAND, `--since must be a UTC time such as 2026-11-27T09:30:00Z, not '${since}'`, printError);
  const account = sandboxAccount(values);
  const control = controlClient(account, values.partner ? account.partnerUUID : account.merchantUUID, options.signal);
  const filter = {
    ...(values.operation ? { operation: values.operation as string } : {}),
    ...(outcome ? { outcome: outcome as (typeof OUTCOMES)[number] } : {}),
    ...(since ? { since } : {}),
  };
  const show = (lines: Line[]) => {
    for (const l of lines) print(values.json ? JSON.stringify(l) : requestLine(l));
  };
  try {
    const first = (await control.requests({ ...filter, latest })).requests;
    if (!first.length && !values.follow) print('No requests yet.');
    show(first);
    let after = first.at(-1)?.id ?? (await control.requests({ latest: 1 })).requests.at(-1)?.id ?? 0;
    while (values.follow && !options.signal?.aborted) {
      const next = (await control.requests({ ...filter, after, waitSeconds: 30 }, options.signal)).requests;
      show(next);
      after = next.at(-1)?.id ?? after;
    }
    return 0;
  } catch (error) {
    if (options.signal?.aborted) return 0;
    printError(`${COMMAND.name}: ${controlFailure(account, error)}`);
    return 1;
  }
}

if (import.meta.main) {
  const stop = new AbortController();
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => stop.abort());
  process.exitCode = await run(process.argv.slice(2), { signal: stop.signal });
}
