// A set-up file of every test file (vitest.config.ts): what the file cost in CPU, attached to the file's
// task for test/support/times-reporter.ts. A worker process runs many files one after another
// (isolate: false), so a file's CPU is what its worker used from the file's first hook to its last:
// its imports (those not already loaded by an earlier file of the worker), its tests, and its child
// processes (servers, compilers, browsers, interpreters), which count once they are waited for, as
// Node does for every child it spawned. A worker's start-up counts in its first file. Work shared
// across files (test/support/shared-*.ts) is counted where it runs, in the run's total that
// scripts/test-times.ts reads.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll } from 'vitest';

declare module 'vitest' {
  interface TaskMeta {
    /** CPU seconds the file's worker used (user + system) while it ran the file, its own and its finished children's. */
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

/** Where the worker's counters stood when the previous file ended: zero for a worker's first file. */
const previous = globalThis as { pgwCpuAtLastFileEnd?: { self: number; children: number } };

// The first hook of the file (set-up files' hooks come before the file's own), and, with vitest's
// stacked hooks, the last afterAll: the servers a file stops in its afterAll have ended and been counted.
let start: { self: number; children: number } | undefined;
beforeAll(() => {
  start = previous.pgwCpuAtLastFileEnd ?? { self: 0, children: 0 };
});
// biome-ignore lint/correctness/noEmptyPattern: vitest parses the first parameter as fixtures and wants a pattern.
afterAll(({}, file) => {
  const cpu = cpuSeconds();
  if (!cpu || !start) return;
  previous.pgwCpuAtLastFileEnd = cpu;
  file.meta.cpu = { self: cpu.self - start.self, children: cpu.children - start.children };
});
