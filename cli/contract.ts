// payment-gateway contract: the contract-test suite (contract/run.ts), run as its own process with
// the arguments passed through as given; its options and --help are its own.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const runner = fileURLToPath(
  new URL(import.meta.url.endsWith('.ts') ? '../contract/run.ts' : '../contract/run.js', import.meta.url),
);

export function contractCommand(argv: string[]): Promise<void> {
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
