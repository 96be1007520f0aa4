// A stopping sandbox (SIGTERM, as a rolling restart sends) must exit even while a client holds a
// connection open: `payment-gateway listen` long-polls the control API and polls again at once, so its
// connection is never idle at the moment the server closes. A newcomer found the sandbox alive 95 s
// after SIGTERM; it now closes connections as they turn idle and all of them after its grace.
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../support/contract.ts';
import { alive } from '../support/children.ts';
import { startSandboxProcess } from '../support/sandbox-process.ts';

const stop: Array<() => void> = [];
afterAll(() => {
  for (const kill of stop) kill();
});

describe('stopping the sandbox', () => {
  it('exits on SIGTERM while a listen client long-polls it', async () => {
    // The grace shortened (PGW_SANDBOX_CLOSE_GRACE_MS, 10 s by default): the long poll outlasts either,
    // so the sandbox still exits only because the grace closes every connection once it is over.
    const sandbox = await startSandboxProcess({ PGW_DB: ':memory:', PGW_SANDBOX_CLOSE_GRACE_MS: '1000' });
    stop.push(() => sandbox.child.kill('SIGKILL'));
    const listen = spawn(
      process.execPath,
      [path.join(ROOT, 'cli/main.ts'), 'listen', '--forward-to', 'http://127.0.0.1:9/hooks', '--base', sandbox.base],
      { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    stop.push(() => listen.kill('SIGKILL'));
    let said = '';
    listen.stdout!.on('data', (d: Buffer) => (said += d.toString()));
    // listen prints its first line once its first long poll is under way.
    await new Promise<void>((resolve) => {
      const check = () => (said.includes('Forwarding') ? resolve() : setTimeout(check, 100));
      check();
    });
    const exited = once(sandbox.child, 'exit');
    sandbox.child.kill('SIGTERM');
    const [code] = await exited;
    expect(code).toBe(0);
  }, 60_000);

  it("started by npm, stops when npm's shell dies without passing the signal on", async () => {
    // `npm start` runs `sh -c "node …"`; a SIGTERM to npm reaches the shell, and Debian's dash dies
    // without passing it on. Here the shell is killed outright: the sandbox must not outlive it.
    const shell = spawn('sh', ['-c', `"${process.execPath}" sandbox/main.ts; echo shell-went-on`], {
      cwd: ROOT,
      env: { ...process.env, PGW_DB: ':memory:', PORT: '0', npm_lifecycle_event: 'start' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    stop.push(() => shell.kill('SIGKILL'));
    let said = '';
    shell.stdout!.on('data', (d: Buffer) => (said += d.toString()));
    await new Promise<void>((resolve) => {
      const check = () => (said.includes('Payment gateway sandbox on') ? resolve() : setTimeout(check, 100));
      check();
    });
    const sandboxPid = Number(execFileSync('pgrep', ['-P', String(shell.pid)], { encoding: 'utf8' }).trim());
    expect(sandboxPid).toBeGreaterThan(0);
    stop.push(() => {
      if (alive(sandboxPid)) process.kill(sandboxPid, 'SIGKILL');
    });
    shell.kill('SIGKILL');
    while (alive(sandboxPid)) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(alive(sandboxPid)).toBe(false);
  }, 60_000);
});
