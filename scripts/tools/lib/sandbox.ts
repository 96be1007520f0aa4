// A fresh sandbox for one tool's run: `sandbox/main.ts` in a process of its own (as `npm start`
// runs it), its store in memory, on a port the system picks (PORT=0), its address read from the
// banner it prints. A process rather than an import: scripts/ sit below sandbox/ in the layers.
import { spawn } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '../../..');

export interface RunningSandbox {
  baseUrl: string;
  stop: () => Promise<void>;
}

export function startSandbox(timeoutMs = 60_000): Promise<RunningSandbox> {
  const child = spawn(process.execPath, ['sandbox/main.ts', '--quiet'], {
    cwd: ROOT,
    env: { ...process.env, PGW_DB: ':memory:', PORT: '0', HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the sandbox printed no address within ${timeoutMs} ms:\n${out}`));
    }, timeoutMs);
    const onExit = (code: number | null) => {
      clearTimeout(timer);
      reject(new Error(`the sandbox exited (${code}) before it listened:\n${out}`));
    };
    const onData = (d: Buffer) => {
      out += d.toString();
      const m = /sandbox on (http:\/\/\S+)/.exec(out);
      if (!m) return;
      clearTimeout(timer);
      child.off('exit', onExit);
      child.stdout.off('data', onData);
      child.stdout.resume();
      resolve({ baseUrl: m[1]!.replace(/\/$/, ''), stop });
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.once('exit', onExit);
  });
}
