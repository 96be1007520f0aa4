#!/usr/bin/env node
// payment-gateway listen --forward-to URL: streams the sandbox's notifications to a local endpoint,
// posted exactly as the gateway posts them (same raw body, same signature headers), and prints each
// delivery with the endpoint's answer. Reads them from the sandbox control API by long poll.
import { type CommandOutput, type CommandSpec, startCommand, usageMistake } from '../../cli-kit/index.ts';
import { kindOf, parseNotification } from '../../notifications/index.ts';
import { logSafe } from '../../runtime/log-line.ts';
import { createControlClient, type Delivery } from '../../sandbox/control-client.ts';
import { ACCOUNT_OPTIONS, sandboxAccount } from './sandbox-account.ts';

const COMMAND: CommandSpec = {
  name: 'payment-gateway listen',
  usage: '--forward-to URL [options]',
  summary: `Forwards every notification the sandbox sends for one merchant (or partner) to URL, signed as the
gateway signs it, and prints each delivery and the endpoint's answer. Needs the sandbox's control API
(on with npm start). Starts with the notifications queued from now on unless --all is given.`,
  options: {
    'forward-to': {
      type: 'string',
      value: 'URL',
      help: 'where to POST each notification (e.g. http://localhost:3000/hooks)',
    },
    all: { type: 'boolean', help: 'forward the notifications already queued too' },
    count: { type: 'string', value: 'N', help: 'stop after N notifications (scripts, tests)' },
    'poll-seconds': { type: 'string', value: 'S', default: '25', help: 'how long one long poll waits' },
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

function describe(d: Delivery): string {
  try {
    const kind = kindOf(parseNotification(d.body));
    return kind ? `${d.event} (${kind})` : d.event;
  } catch {
    return d.event;
  }
}

export async function run(argv: string[], options: ListenOptions = {}): Promise<number> {
  const { print, printError, parsed } = startCommand(COMMAND, argv, options);
  if (typeof parsed === 'number') return parsed;
  const values = parsed.values as Record<string, string | boolean | undefined>;
  const target = values['forward-to'];
  if (typeof target !== 'string' || !/^https?:\/\//.test(target))
    return usageMistake(COMMAND, '--forward-to needs an http(s) URL, e.g. http://localhost:3000/hooks', printError);
  const count = values.count === undefined ? Infinity : Number(values.count);
  const pollSeconds = values['poll-seconds'] === undefined ? 25 : Number(values['poll-seconds']);
  if (!(count > 0) || !Number.isInteger(pollSeconds) || pollSeconds < 0 || pollSeconds > 60)
    return usageMistake(
      COMMAND,
      '--count must be a positive integer and --poll-seconds an integer from 0 to 60',
      printError,
    );
  const account = sandboxAccount(values);
  const accountId = values.partner ? account.partnerUUID : account.merchantUUID;
  const control = createControlClient({ baseUrl: account.base, accountId, apiKey: account.apiKey });
  let after = 0;
  try {
    if (!values.all) after = (await control.deliveries()).deliveries.at(-1)?.id ?? 0;
  } catch (error) {
    printError(
      `${COMMAND.name}: cannot reach the sandbox control API at ${account.base}/_sandbox: ${(error as Error).message}`,
    );
    return 1;
  }
  print(`Forwarding the notifications of ${accountId} from ${account.base} to ${target} (Ctrl-C stops)`);
  let forwarded = 0;
  while (forwarded < count && !options.signal?.aborted) {
    let batch: Delivery[];
    try {
      batch = (await control.deliveries({ after, waitSeconds: pollSeconds }, options.signal)).deliveries;
    } catch (error) {
      if (options.signal?.aborted) break;
      print(logSafe(`listen: the sandbox did not answer (${(error as Error).message}); trying again in 1 s`));
      await new Promise((r) => setTimeout(r, 1000));
      continue;
    }
    for (const d of batch) {
      after = d.id;
      const started = performance.now();
      let answer: string;
      try {
        const response = await fetch(target, {
          method: 'POST',
          headers: d.headers,
          body: d.body,
          signal: AbortSignal.timeout(10_000),
        });
        const text = (await response.text()).slice(0, 200).replace(/\s+/g, ' ');
        answer = `${response.status}${response.statusText ? ` ${response.statusText}` : ''}${text ? ` ${text}` : ''}`;
      } catch (error) {
        answer = `no answer (${(error as Error).message})`;
      }
      // The subject and the endpoint's answer are others' text: through the one log writer's rules.
      print(
        logSafe(
          `#${d.id} ${describe(d)} ${d.subject} -> POST ${target} -> ${answer} [${Math.round(performance.now() - started)} ms]`,
        ),
      );
      if (++forwarded >= count) break;
    }
  }
  return 0;
}

if (import.meta.main) {
  const stop = new AbortController();
  process.once('SIGINT', () => stop.abort());
  process.exitCode = await run(process.argv.slice(2), { signal: stop.signal });
}
