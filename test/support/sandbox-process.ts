// `sandbox/main.ts` started as its own process, as `npm start` does, on a port the system picks
// (PORT=0), its address read from the banner it prints. Picking a free port first and handing it
// over is a race under a parallel test run: another test's server may take the port in between, and
// the health check then reaches that server instead of this sandbox.
import { spawn, type ChildProcess } from 'node:child_process';
import { ROOT } from './contract.ts';

export interface SandboxProcess {
  child: ChildProcess;
  base: string;
  /** What it printed so far (for a failure's message). */
  output: () => string;
}

export function startSandboxProcess(env: Record<string, string>, timeoutMs = 60_000): Promise<SandboxProcess> {
  const child = spawn(process.execPath, ['sandbox/main.ts'], {
    cwd: ROOT,
    env: { ...process.env, ...env, PORT: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  return new Promise((resolve, reject) => {
    const fail = (error: Error) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(error);
    };
    const timer = setTimeout(
      () => fail(new Error(`the sandbox printed no banner within ${timeoutMs} ms:\n${out}`)),
      timeoutMs,
    );
    const exitedEarly = (code: number | null, signal: NodeJS.Signals | null) =>
      fail(new Error(`the sandbox exited (${code ?? signal}) before it listened:\n${out}`));
    // Only this helper's own listeners go once the banner is read: the caller's `exit` listeners
    // stay, however much the sandbox prints afterwards (a line per request).
    const banner = () => {
      const m = /sandbox on (http:\/\/\S+)/.exec(out);
      if (!m) return;
      clearTimeout(timer);
      child.stdout!.off('data', banner);
      child.off('exit', exitedEarly);
      resolve({ child, base: m[1]!, output: () => out });
    };
    child.stdout!.on('data', banner);
    child.once('exit', exitedEarly);
  });
}
