#!/usr/bin/env node
// payment-gateway resend DELIVERY: one of the account's notifications sent again, exactly as first
// sent (the same body, the same signature), as a new delivery: the receiver sees it as it sees a
// gateway retry or Resend Notifications, and must answer 2xx without handling it twice.
import { type CommandOutput, type CommandSpec, startCommand, usageMistake } from '../../cli-kit/index.ts';
import { ACCOUNT_OPTIONS, controlClient, controlFailure, sandboxAccount } from './sandbox-account.ts';
import { deliveryLine } from './deliveries.ts';

const COMMAND: CommandSpec = {
  name: 'payment-gateway resend',
  usage: 'DELIVERY [options]',
  summary: `Sends one of the account's notifications again (DELIVERY is its number, as payment-gateway
deliveries and listen print it): the same body and signature, as a new delivery, to the same address
or to --to. Needs the sandbox's control API.`,
  positionals: true,
  options: {
    to: { type: 'string', value: 'URL', default: 'the address it was sent to', help: 'another address to send it to' },
    ...ACCOUNT_OPTIONS,
    partner: { type: 'boolean', help: "one of the sandbox partner's (merchantCreated)" },
  },
};

export async function run(argv: string[], options: CommandOutput = {}): Promise<number> {
  const { print, printError, parsed } = startCommand(COMMAND, argv, options);
  if (typeof parsed === 'number') return parsed;
  const values = parsed.values as Record<string, string | boolean | undefined>;
  const [id, ...more] = parsed.positionals;
  if (id === undefined || more.length || !/^#?[1-9]\d{0,15}$/.test(id))
    return usageMistake(
      COMMAND,
      id === undefined
        ? 'name a DELIVERY (its number)'
        : more.length
          ? 'name one DELIVERY'
          : `DELIVERY is a number, not '${id}'`,
      printError,
    );
  const to = values.to as string | undefined;
  if (to !== undefined && !/^https?:\/\//.test(to))
    return usageMistake(COMMAND, `--to needs an http(s) URL, not '${to}'`, printError);
  const account = sandboxAccount(values);
  const control = controlClient(account, values.partner ? account.partnerUUID : account.merchantUUID);
  try {
    const answer = await control.resendDelivery(Number(id.replace('#', '')), to ? { notifyURL: to } : {});
    for (const queued of answer.deliveries) print(deliveryLine((await control.delivery(queued)).delivery));
    return 0;
  } catch (error) {
    printError(`${COMMAND.name}: ${controlFailure(account, error)}`);
    return 1;
  }
}

if (import.meta.main) process.exitCode = await run(process.argv.slice(2));
