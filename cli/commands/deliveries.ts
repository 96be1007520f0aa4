#!/usr/bin/env node
// payment-gateway deliveries: the account's notifications as the sandbox delivered them, each with
// every attempt (the receiver's status, when, how long), read from the control API.
import {
  type CommandOutput,
  type CommandSpec,
  countOf,
  startCommand,
  type UsageError,
  usageMistake,
} from '../../cli-kit/index.ts';
import { kindOf, parseNotification } from '../../notifications/index.ts';
import type { Delivery } from '../../sandbox/control-client.ts';
import { ACCOUNT_OPTIONS, controlClient, controlFailure, sandboxAccount } from './sandbox-account.ts';

const COMMAND: CommandSpec = {
  name: 'payment-gateway deliveries',
  usage: '[options]',
  summary: `Lists the notifications the sandbox sent for one merchant (or partner), newest last, each with its
attempts: what the receiver answered (0: no answer), when, and in how long; the next attempt of one
still undelivered; the delivery it sends again, for a resend. Needs the sandbox's control API.`,
  options: {
    latest: { type: 'string', value: 'N', default: '20', help: 'how many of the latest (1 to 100)' },
    json: {
      type: 'boolean',
      help: 'print the deliveries as the control API answers them (JSON), bodies and headers included',
    },
    ...ACCOUNT_OPTIONS,
    partner: { type: 'boolean', help: "the sandbox partner's (merchantCreated)" },
  },
};

/** What a notification is, in a word or two: its event, and its kind when it has one. */
export function describeDelivery(d: Pick<Delivery, 'event' | 'body'>): string {
  try {
    const kind = kindOf(parseNotification(d.body));
    return kind ? `${d.event} (${kind})` : d.event;
  } catch {
    return d.event;
  }
}

/** One delivery on one line. */
export function deliveryLine(d: Delivery): string {
  const attempts = d.attempts.map(
    (a) =>
      `${a.status || 'no answer'} at ${a.at} (${a.ms} ms)${a.chaos?.length ? ` [${a.chaos.map((c) => `${c.kind} ${c.kind === 'delay' || c.kind === 'reorder' ? `${c.value} ms` : c.value || 'no answer'}`).join(', ')}]` : ''}`,
  );
  const state = d.delivered
    ? 'delivered'
    : d.nextAttemptAt
      ? `next attempt at ${d.nextAttemptAt}`
      : attempts.length
        ? 'given up'
        : 'queued';
  return `#${d.id} ${describeDelivery(d)} ${d.subject}${d.resentFrom ? ` (resent #${d.resentFrom})` : ''} -> ${d.url}: ${state}${attempts.length ? `; ${attempts.join(', ')}` : ''}`;
}

export async function run(argv: string[], options: CommandOutput = {}): Promise<number> {
  const { print, printError, parsed } = startCommand(COMMAND, argv, options);
  if (typeof parsed === 'number') return parsed;
  const values = parsed.values as Record<string, string | boolean | undefined>;
  let latest: number;
  try {
    latest = countOf(values.latest as string | undefined, '--latest', 20);
  } catch (error) {
    return usageMistake(COMMAND, (error as UsageError).message, printError);
  }
  if (latest > 100) return usageMistake(COMMAND, `--latest must be at most 100, not '${values.latest}'`, printError);
  const account = sandboxAccount(values);
  try {
    const { deliveries } = await controlClient(
      account,
      values.partner ? account.partnerUUID : account.merchantUUID,
    ).deliveries({ latest });
    if (values.json) print(JSON.stringify(deliveries, null, 2));
    else if (!deliveries.length) print('No deliveries yet.');
    else for (const d of deliveries) print(deliveryLine(d));
    return 0;
  } catch (error) {
    printError(`${COMMAND.name}: ${controlFailure(account, error)}`);
    return 1;
  }
}

if (import.meta.main) process.exitCode = await run(process.argv.slice(2));
