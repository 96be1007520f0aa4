// A set-up file of every test file (vitest.config.ts): what the file cost in CPU, attached to the file's
// task for test/support/times-reporter.ts. Each test file runs in a process of its own (vitest's forks
// pool, isolated), so the worker's CPU from its start is the file's own: vitest's start-up, the imports,
// the tests; its child processes (servers, compilers, browsers, interpreters) count once they are waited
// for, which Node does for every child it spawned. Work shared across files (test/support/shared-*.ts)
// is counted where it runs, in the run's total that scripts/test-times.ts reads.
import { readFileSync } from 'node:fs';
import { afterAll } from 'vitest';

declare module 'vitest' {
  interface TaskMeta {
    /** CPU seconds the file's worker used (user + system), its own and its finished children's. */
    cpu?: { self: number; children: number };
  }
}

/** The process's CPU seconds from /proc (Linux): its own, and its waited-for descendants'. */
function cpuSeconds(): { self: number; children: number } | undefined {
  let stat: string;
  try {
    stat = readFileSync('/proc/self/stat', 'utf8');
  } catch {
    return undefined;
  }
  // Fields after the command name (which may hold spaces, closed by the last ')'): utime is field 14.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = (n: number) => Number(fields[n - 3]) / 100;
  return { self: ticks(14) + ticks(15), children: ticks(16) + ticks(17) };
}

// Registered before the file's own hooks, so with vitest's stacked hooks it runs after them: the
// servers a file stops in its afterAll have ended and been counted.
// biome-ignore lint/correctness/noEmptyPattern: vitest parses the first parameter as fixtures and wants a pattern.
afterAll(({}, file) => {
  const cpu = cpuSeconds();
  if (cpu) file.meta.cpu = cpu;
});
