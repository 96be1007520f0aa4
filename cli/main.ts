#!/usr/bin/env node
// payment-gateway: one command for the package's tools. Each subcommand is also its own bin
// (payment-gateway-sandbox, payment-gateway-mock, payment-gateway-contract-test), kept as aliases.
import { helpText, parse, runCommand, UsageError, type CommandSpec, checkNode } from '../cli-kit/index.ts';

const SUBCOMMANDS: Record<string, string> = {
  sandbox:
    'run the stateful sandbox of the whole gateway (default http://127.0.0.1:4010); sandbox accounts: a merchant per team',
  mock: 'run the Prism mock: every operation answered from its examples (default http://127.0.0.1:4011)',
  contract: 'hold an implementation to the contract, operation by operation (the contract-test suite)',
  sign: "compute a message hash (any recipe, or an operation's hashes) from a shell",
  docs: 'serve the API reference (or print where the HTML file is)',
  listen: "stream the sandbox's notifications to a local endpoint, signed as the gateway signs",
  trigger: 'make the sandbox send a notification: through the operations that cause it, or for an object you have',
  deliveries: "list the sandbox's notifications for your account, with every delivery attempt",
  resend: 'send one of your notifications again, exactly as first sent',
  chaos: 'deliver your notifications to an address under chaos, and see what its receiver answered',
  logs: 'your requests as the sandbox answered them, and why it refused one (--follow for new ones)',
};

const NAME = 'payment-gateway';

export const mainSpec: CommandSpec = {
  name: NAME,
  usage: '<command> [options]',
  summary: `The Payment Gateway API 2.0 contract's tools.\n\nCommands:\n${Object.entries(SUBCOMMANDS)
    .map(([n, t]) => `  ${n.padEnd(12)}${t}`)
    .join('\n')}\n\n${NAME} <command> --help tells more about each.`,
  options: {},
};

export async function main(argv: string[]): Promise<void> {
  checkNode(NAME);
  const [command, ...rest] = argv;
  if (command === undefined || command.startsWith('-')) {
    const parsed = parse(mainSpec, argv);
    if (parsed !== 'exit') console.log(helpText(mainSpec));
    return;
  }
  const name = `${NAME} ${command}`;
  switch (command) {
    case 'sandbox':
      return (await import('../sandbox/main.ts')).main(name, rest);
    case 'mock':
      return (await import('../mock/run.ts')).main(name, rest);
    case 'contract':
      // --notifications URL holds a merchant's notification endpoint; anything else, an implementation.
      if (rest.some((a) => a === '--notifications' || a.startsWith('--notifications='))) {
        process.exitCode = await (await import('./commands/check-notifications.ts')).run(rest);
        return;
      }
      return (await import('./contract.ts')).contractCommand(rest);
    case 'listen': {
      const stop = new AbortController();
      for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => stop.abort());
      process.exitCode = await (await import('./commands/listen.ts')).run(rest, { signal: stop.signal });
      return;
    }
    case 'trigger':
      process.exitCode = await (await import('./commands/trigger.ts')).run(rest);
      return;
    case 'deliveries':
      process.exitCode = await (await import('./commands/deliveries.ts')).run(rest);
      return;
    case 'resend':
      process.exitCode = await (await import('./commands/resend.ts')).run(rest);
      return;
    case 'chaos':
      process.exitCode = await (await import('./commands/chaos.ts')).run(rest);
      return;
    case 'logs': {
      const stop = new AbortController();
      for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => stop.abort());
      process.exitCode = await (await import('./commands/logs.ts')).run(rest, { signal: stop.signal });
      return;
    }
    case 'sign':
      return (await import('./sign.ts')).signCommand(name, rest);
    case 'docs':
      return (await import('./docs.ts')).docsCommand(name, rest);
    default:
      throw new UsageError(
        `unknown command '${command}': use one of ${Object.keys(SUBCOMMANDS).join(', ')} (see ${NAME} --help)`,
      );
  }
}

// Errors carry the subcommand's name, as its --help does: `payment-gateway sign: …`.
const [first] = process.argv.slice(2);
await runCommand(first && Object.hasOwn(SUBCOMMANDS, first) ? `${NAME} ${first}` : NAME, () =>
  main(process.argv.slice(2)),
);
