// The helper that starts `sandbox/main.ts` for the process-level tests. Callers wait for the child's
// `exit` after a kill -9; the helper once removed every `exit` listener on each chunk the sandbox
// printed after its banner (each request logs a line), so under load, where that output arrives
// late, the caller's wait never ended and the durability test ran into its time limit in CI.
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { signed } from '../hardening/support.ts';
import { startSandboxProcess } from './sandbox-process.ts';

describe('startSandboxProcess', () => {
  it("leaves the caller's exit listener in place while the sandbox goes on printing", async () => {
    const { child, base, output } = await startSandboxProcess({ PGW_DB: ':memory:' });
    try {
      const exited = once(child, 'exit');
      const r = signed('queryCard', { method: 'queryCard', transactionID: '1', hash: 'x' });
      await fetch(base + r.url, {
        method: r.verb,
        headers: r.headers as Record<string, string>,
        body: r.body as string,
      });
      // The request's log line, printed after the banner, has reached this process.
      while (!/queryCard/.test(output().split('\n').slice(1).join('\n'))) await new Promise((r) => setTimeout(r, 10));
      expect(child.listenerCount('exit')).toBeGreaterThan(0);
      child.kill('SIGKILL');
      const [, signal] = await exited;
      expect(signal).toBe('SIGKILL');
    } finally {
      child.kill('SIGKILL');
    }
  });
});
