import type { ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/**
 * Signals a child and resolves once it has exited: a test that removes the folder a server works in
 * must wait for the server's own clean-up (a SQLite close checkpoints and removes its -wal and -shm
 * files), or the removal races it and fails with ENOTEMPTY. 'exit', not 'close': a grandchild that
 * still holds the pipes must not keep the test waiting.
 */
export function ended(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill(signal);
  });
}

/**
 * Signals the process group a detached child leads and resolves once no process of it is left (a
 * shell block's `npm start` runs node under npm under bash: the leader exits before the server has
 * cleaned up). After `graceMs` the rest of the group is killed outright; a second later it gives up
 * waiting (a zombie nobody reaps still answers signal 0).
 */
export async function groupEnded(child: ChildProcess, graceMs = 10_000): Promise<void> {
  const group = child.pid;
  if (group === undefined || !alive(-group)) return;
  process.kill(-group, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  while (alive(-group) && Date.now() < deadline + 1000) {
    if (Date.now() > deadline) process.kill(-group, 'SIGKILL');
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Whether a process (or, given -pgid, any process of a group) still runs: signal 0 checks without sending. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The pids a process started (Linux's /proc lists them per thread). */
export function childrenOf(pid: number): number[] {
  return readdirSync(`/proc/${pid}/task`).flatMap((task) =>
    readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number),
  );
}
