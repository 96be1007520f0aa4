// npm run test:times [-- vitest arguments]: runs `vitest run` as `npm test` does, and then tells where
// the time and the CPU went: the run's wall time, its CPU (user + system of vitest and every process
// under it, read from /proc when the run has ended: it counts what the shared servers and the workers'
// children used as well, but for Chromium's renderers, which nobody waits for), how the CPU outside the
// files splits (vitest's own process, each shared server's process tree: Chromium's whole), the load
// average around it, and the files that cost the most, by wall time and by CPU. A file's wall time runs from its start to its end in its worker, waits included: the time
// it keeps a worker from other files. Its CPU is its worker's and its finished children's
// (test/support/cpu-meter.ts). CPU is the figure to compare between runs on a shared machine: other
// work barely changes it, while it stretches wall time.
//
// `npm run test:times -- --read [file]` prints the figures of a report already written.
// Exits 1 when the run failed, so that the figures of a red run are not taken for a green one's.
import { spawn } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FileTimes, TimesReport } from './lib/test-times-report.ts';

const reportFile = 'test-results/test-times.json';
/** What test/support/shared-servers.global.ts leaves when the run ends: vitest's own CPU and each shared server's. */
const outsideFile = 'test-results/shared-servers-cpu.json';

interface Outside {
  /** CPU seconds of vitest's own process, its children aside. */
  vitest: number;
  /** CPU seconds of each shared server's process tree, by name; only those the run started. */
  servers: Record<string, number | null>;
}

function readOutside(): Outside | undefined {
  try {
    return JSON.parse(readFileSync(outsideFile, 'utf8')) as Outside;
  } catch {
    return undefined;
  }
}

/** CPU seconds (user + system) of this process's waited-for descendants, from /proc (Linux). */
function childrenCpu(): number | undefined {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[13]) + Number(fields[14])) / 100;
  } catch {
    return undefined;
  }
}

/**
 * The machine's busy CPU seconds since it started: every process's and the kernel's (user, nice,
 * system, irq and softirq of /proc/stat's first line, in Linux's 100 ticks a second). Over a run it
 * counts what the run's own figure cannot: processes that nobody in the run waits for (one started
 * detached and killed, one left running when the npm before it was killed), PostgreSQL's server,
 * and whatever else the machine did meanwhile.
 */
function machineCpu(): number | undefined {
  try {
    const ticks = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/).slice(1).map(Number);
    const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0] = ticks;
    return (user + nice + system + irq + softirq) / 100;
  } catch {
    return undefined;
  }
}

/** The one-minute load average. */
const load = (): number => os.loadavg()[0] ?? 0;

interface Run {
  cpu: number | undefined;
  /** The machine's busy CPU over the run (machineCpu), and the run's wall time in seconds. */
  machine: { cpu: number; wall: number } | undefined;
  /** How the CPU outside the files splits, as the run's global set-up read it. */
  outside: Outside | undefined;
  loadBefore: number;
  loadMean: number;
  status: number;
}

async function run(args: string[]): Promise<Run> {
  const loadBefore = load();
  const machineBefore = machineCpu();
  const started = performance.now();
  const loads: number[] = [];
  rmSync(outsideFile, { force: true });
  const sampler = setInterval(() => loads.push(load()), 5_000);
  const vitest = path.join('node_modules', 'vitest', 'vitest.mjs');
  const child = spawn(
    process.execPath,
    [
      vitest,
      'run',
      '--reporter=default',
      '--reporter=./test/support/times-reporter.ts',
      '--reporter=./test/support/closing-line-reporter.ts',
      ...args,
    ],
    { stdio: 'inherit' },
  );
  const status = await new Promise<number>((resolve) => child.on('exit', (code) => resolve(code ?? 1)));
  clearInterval(sampler);
  const loadMean = loads.length ? loads.reduce((a, b) => a + b, 0) / loads.length : load();
  const machineAfter = machineCpu();
  const machine =
    machineBefore === undefined || machineAfter === undefined
      ? undefined
      : { cpu: machineAfter - machineBefore, wall: (performance.now() - started) / 1000 };
  return { cpu: childrenCpu(), machine, outside: readOutside(), loadBefore, loadMean, status };
}

const s = (seconds: number) => seconds.toFixed(1).padStart(6);
const cpuOf = (f: FileTimes) => (f.cpuSelf ?? 0) + (f.cpuChildren ?? 0);
const wallOf = (f: FileTimes) => (f.endMs - f.startMs) / 1000;

function print(report: TimesReport, measured: Run | undefined): void {
  const tests = report.files.reduce((n, f) => n + f.tests, 0);
  const failed = report.files.reduce((n, f) => n + f.failed, 0);
  const filesCpu = report.files.reduce((n, f) => n + cpuOf(f), 0);
  console.log(
    `\nnpm test: ${report.files.length} files, ${tests} tests (${failed} failed), ` +
      `${(report.wallMs / 1000).toFixed(1)} s wall`,
  );
  if (measured?.cpu !== undefined) {
    console.log(
      `CPU (user + system, every process of the run): ${measured.cpu.toFixed(1)} s; ` +
        `in the files' workers ${filesCpu.toFixed(1)} s, outside them (vitest itself, shared servers) ` +
        `${(measured.cpu - filesCpu).toFixed(1)} s`,
    );
    if (measured.outside) {
      // Each server's whole process tree, read just before it was stopped. The run's figure above counts
      // a process once it has been waited for: Prism and the compiler are; Chromium's renderers, left to
      // end on their own when it closes, are not, so its figure comes on top of the run's.
      const { vitest, servers } = measured.outside;
      const named = Object.entries(servers).map(([name, cpu]) => `${name} ${cpu === null ? '?' : cpu.toFixed(1)} s`);
      console.log(
        `  of which vitest's own process ${vitest.toFixed(1)} s; the shared servers' process trees: ` +
          `${named.length ? named.join(', ') : 'none started'}` +
          `${servers.chromium == null ? '' : " (Chromium's not in the run's figure)"}`,
      );
    }
    if (measured.machine)
      console.log(
        `the machine's CPU over the run (every process and the kernel, /proc/stat): ` +
          `${measured.machine.cpu.toFixed(1)} s, ${(measured.machine.cpu / measured.machine.wall).toFixed(2)} of ` +
          `${os.cpus().length} cores busy on average; ${(measured.machine.cpu - measured.cpu).toFixed(1)} s beyond ` +
          `the run's own (processes nobody in the run waits for, PostgreSQL's server, other work)`,
      );
    console.log(
      `load average: ${measured.loadBefore.toFixed(2)} at the start, ${measured.loadMean.toFixed(2)} on average ` +
        `during the run (${os.cpus().length} cores)`,
    );
  } else console.log(`CPU in the files' workers: ${filesCpu.toFixed(1)} s`);
  const table = (title: string, files: FileTimes[]) => {
    console.log(`\n${title}\n  wall s   CPU s  (own + children)`);
    for (const f of files)
      console.log(
        `${s(wallOf(f))}  ${s(cpuOf(f))}  (${(f.cpuSelf ?? 0).toFixed(1)} + ${(f.cpuChildren ?? 0).toFixed(1)})  ` +
          `${f.file}${f.state === 'passed' ? '' : ` (${f.state})`}`,
      );
  };
  table(
    'the fifteen longest files (start to end in their worker, waits included):',
    [...report.files].sort((a, b) => wallOf(b) - wallOf(a)).slice(0, 15),
  );
  table(
    'the fifteen files that cost the most CPU:',
    [...report.files].sort((a, b) => cpuOf(b) - cpuOf(a)).slice(0, 15),
  );
}

const args = process.argv.slice(2);
if (args[0] === '--read') {
  const report = JSON.parse(readFileSync(args[1] ?? reportFile, 'utf8')) as TimesReport;
  print(report, undefined);
  process.exitCode = report.success ? 0 : 1;
} else {
  const measured = await run(args);
  const report = JSON.parse(readFileSync(reportFile, 'utf8')) as TimesReport;
  print(report, measured);
  process.exitCode = report.success && measured.status === 0 ? 0 : 1;
}
