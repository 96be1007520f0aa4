// payment-gateway contract: the contract-test suite (contract/run.ts), run as its own process with
// the arguments passed through as given; its options and --help are its own. With --notifications
// the command checks a notification endpoint instead (commands/check-notifications.ts, chosen by
// main.ts): its --help lists that mode's options after the suite's, so that it names every option
// the command takes. --help, --version and a mistake in the arguments are answered here, as the
// program answers them (contract/usage.ts reads them for both): no second Node process for those.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { helpText } from '../cli-kit/index.ts';
import { readArguments } from '../contract/usage.ts';
import { COMMAND as notifications } from './commands/check-notifications.ts';

const runner = fileURLToPath(
  new URL(import.meta.url.endsWith('.ts') ? '../contract/run.ts' : '../contract/run.js', import.meta.url),
);

/** The notification endpoint mode's part of `payment-gateway contract --help`. */
export const notificationsHelp = () =>
  `\nWith --notifications URL, it checks a merchant's notification endpoint instead:\n\n${helpText(notifications)}`;

export function contractCommand(argv: string[]): Promise<void> {
  const read = readArguments(argv);
  if ('exitCode' in read) {
    if (read.out !== undefined) console.log(read.out);
    if (read.err !== undefined) console.error(read.err);
    if (read.exitCode === 0 && argv.some((a) => a === '--help' || a === '-h')) console.log(notificationsHelp());
    process.exitCode = read.exitCode;
    return Promise.resolve();
  }
  const child = spawn(process.execPath, [runner, ...argv], { stdio: 'inherit' });
  // Ctrl-C reaches the child through the terminal; a TERM sent to this process is passed on.
  process.on('SIGTERM', () => child.kill('SIGTERM'));
  return new Promise((resolve) => {
    child.on('exit', (code, signal) => {
      process.exitCode = code ?? (signal ? 1 : 0);
      resolve();
    });
  });
}
