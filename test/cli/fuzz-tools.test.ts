// The fuzz run's part for the package's tools as clients (#39): the contract suite (its own program,
// a process of its own), and `contract --notifications`, `listen`, `deliveries` and `logs`, run
// in-process, each against an endpoint and a sandbox control API this test
// starts on loopback, each misbehaving as a seeded plan draws it (redirects to a catcher, endless,
// silent, dripping and dropped answers, answers holding a card number, escape sequences and a forged
// line). Counted for every run: crashes (a run that throws, or prints a stack), hangs (a run not
// over when a watchdog of a minute ends), card numbers and raw control characters in what it printed,
// redirects followed (requests that reached the catcher: a stand-in for leaving loopback). All but
// runs and requests must be 0. The figures are printed (`fuzz-tools: {...}`) and written to
// test-results/fuzz-tools.json for CI, beside the sandbox's (test/hardening/fuzz.test.ts).
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import type { CommandOutput } from '../../cli-kit/index.ts';
import { run as checkNotifications } from '../../cli/commands/check-notifications.ts';
import { run as deliveries } from '../../cli/commands/deliveries.ts';
import { run as listen } from '../../cli/commands/listen.ts';
import { run as logs } from '../../cli/commands/logs.ts';
import {
  HOSTILE_TEXT,
  MODES,
  type Mode,
  listenOnce,
  notificationsAt,
  startWorld,
  unsafeLines,
  type World,
} from '../support/hostile-party.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const SPEC = readFileSync(path.join(ROOT, 'generated/openapi.json'));
const SEED = 20261127;
const WATCHDOG_MS = 60_000;

const DELIVERY = {
  id: 9,
  event: 'batchNotify',
  subject: `batch-1 ${HOSTILE_TEXT}`,
  url: 'http://merchant.example/hooks',
  body: JSON.stringify({ event: 'batchNotify', batchUUID: `b1 ${HOSTILE_TEXT}` }),
  headers: { 'content-type': 'application/json', 'SVC-MESSAGEHASH': 'abc', authorization: 'Basic eDp5' },
  delivered: false,
  attempts: [{ at: HOSTILE_TEXT, status: 0, ms: 1 }],
};

const reports = mkdtempSync(path.join(os.tmpdir(), 'pgw-fuzz-tools-'));
afterAll(() => rmSync(reports, { recursive: true, force: true }));

/** The control API's answer in the `ok` mode: a delivery and a request log, each holding hostile text. */
const controlBody = () =>
  JSON.stringify({
    responseCode: 0,
    deliveries: [DELIVERY],
    requests: [
      {
        id: 1,
        at: HOSTILE_TEXT,
        verb: 'POST',
        path: `/post ${HOSTILE_TEXT}`,
        status: 200,
        outcome: 'refused',
        ms: 1,
      },
    ],
  });

type Tool = 'suite' | 'notifications' | 'listen' | 'deliveries' | 'logs';
type Command = (argv: string[], options: CommandOutput) => Promise<number>;

/**
 * The contract suite as a user runs it, its own process, against the endpoint: its exit code (2 and
 * 1 are its answers; anything else, or a signal, a crash), every line it printed.
 */
const suite: Command = (argv, options) =>
  new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['contract/run.ts', ...argv],
      { cwd: ROOT, timeout: WATCHDOG_MS * 2, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        for (const line of stdout.split('\n')) options.print?.(line);
        for (const line of stderr.split('\n')) options.printError?.(line);
        const code = (error as { code?: unknown } | null)?.code ?? 0;
        if (typeof code === 'number' && code <= 2) resolve(code);
        else
          reject(
            new Error(`the suite ended ${String(code)} ${String((error as { signal?: string } | null)?.signal ?? '')}`),
          );
      },
    );
  });

const TOOLS: Record<Tool, { command: Command; args: (w: World, run: number) => string[] }> = {
  suite: {
    command: suite,
    args: (w, run) => [
      '--base-url',
      w.endpointUrl,
      '--only',
      'processCard,getAccessToken',
      '--timeout',
      '1',
      '--deadline',
      '30',
      '--json',
      path.join(reports, `run-${run}.json`),
      '--junit',
      path.join(reports, `run-${run}.xml`),
    ],
  },
  notifications: {
    command: checkNotifications,
    args: (w) => notificationsAt(w, true),
  },
  listen: {
    command: listen,
    args: (w) => listenOnce(w.endpointUrl, w.controlUrl),
  },
  deliveries: { command: deliveries, args: (w) => ['--base', w.controlUrl, '--sandbox-timeout-seconds', '1'] },
  logs: { command: logs, args: (w) => ['--base', w.controlUrl, '--sandbox-timeout-seconds', '1'] },
};

/**
 * Every tool that talks to an endpoint meets every endpoint mode, and every tool that calls the
 * control API every control mode; the other party's mode is drawn by the seed.
 */
const CONTROL_MODES: (Mode | 'deliveries')[] = [...MODES, 'deliveries'];
const drawn = fc.sample(fc.tuple(fc.constantFrom(...MODES), fc.constantFrom(...CONTROL_MODES)), {
  seed: SEED,
  numRuns: 64,
});
const plan: { tool: Tool; endpoint: Mode; control: Mode | 'deliveries' }[] = [
  ...(['suite', 'notifications', 'listen'] as const).flatMap((tool) =>
    MODES.map((endpoint) => ({ tool, endpoint, control: drawn.pop()![1] })),
  ),
  ...(['listen', 'deliveries', 'logs'] as const).flatMap((tool) =>
    CONTROL_MODES.map((control) => ({ tool, endpoint: drawn.pop()![0], control })),
  ),
];
const RUNS = plan.length;
const RUNS_AT_ONCE = 6;

describe('the tools against hostile servers (seeded)', () => {
  const stats = {
    runs: 0,
    requests: 0,
    crashes: 0,
    hangs: 0,
    cardNumbersInOutput: 0,
    rawOutputLines: 0,
    redirectsFollowed: 0,
    mostBytesWrittenToOneReader: 0,
    byTool: {} as Record<string, number>,
  };
  const failures: string[] = [];

  /** One run of the plan, against parties of its own. */
  async function fuzzRun(i: number): Promise<void> {
    const { tool, endpoint, control } = plan[i]!;
    const world = await startWorld({ endpoint, control, delivery: DELIVERY, controlBody, spec: SPEC });
    try {
      const out: string[] = [];
      const name = `#${i} ${tool} (endpoint ${endpoint}, control API ${control})`;
      let timer: NodeJS.Timeout | undefined;
      const watchdog = new Promise<'hang'>((resolve) => {
        timer = setTimeout(() => resolve('hang'), WATCHDOG_MS);
      });
      const stop = new AbortController();
      const ran = TOOLS[tool]
        .command(TOOLS[tool].args(world, i), {
          print: (l) => out.push(l),
          printError: (l) => out.push(l),
          ...(tool === 'listen' ? { signal: stop.signal } : {}),
        } as CommandOutput)
        .then(
          (code) => ({ code }),
          (error: unknown) => ({ error }),
        );
      const result = await Promise.race([ran, watchdog]);
      clearTimeout(timer);
      stats.runs++;
      stats.byTool[tool] = (stats.byTool[tool] ?? 0) + 1;
      if (result === 'hang') {
        stats.hangs++;
        failures.push(`${name}: still running after ${WATCHDOG_MS / 1000} s`);
        stop.abort();
        await ran;
      } else if ('error' in result || out.some((l) => /\n\s+at /.test(l))) {
        stats.crashes++;
        failures.push(`${name}: ${'error' in result ? String(result.error) : 'printed a stack'}`);
      }
      const unsafe = unsafeLines(out);
      stats.cardNumbersInOutput += unsafe.cards.length;
      stats.rawOutputLines += unsafe.raw.length;
      for (const l of [...unsafe.cards, ...unsafe.raw]) failures.push(`${name}: printed ${JSON.stringify(l)}`);
    } finally {
      world.close();
      stats.requests += world.seen.endpoint + world.seen.control;
      stats.redirectsFollowed += world.parties.caught.length;
      stats.mostBytesWrittenToOneReader = Math.max(stats.mostBytesWrittenToOneReader, world.parties.mostWritten);
      for (const c of world.parties.caught) failures.push(`a redirect was followed: ${c}`);
    }
  }

  it(`${RUNS} runs of the contract suite, contract --notifications, listen, deliveries and logs: no crash, no hang, nothing raw, nothing followed`, async () => {
    // The runs wait out their parties' silences (1 s time-outs, a few in a row): RUNS_AT_ONCE of them
    // side by side, each against its own parties, so that those waits overlap.
    let next = 0;
    const worker = async () => {
      while (next < plan.length) await fuzzRun(next++);
    };
    await Promise.all(Array.from({ length: RUNS_AT_ONCE }, worker));
    expect(stats.runs).toBe(RUNS);
    expect(failures.slice(0, 20)).toEqual([]);
    expect(Object.keys(stats.byTool).sort()).toEqual(Object.keys(TOOLS).sort());
  }, 600_000);

  afterAll(() => {
    console.log(`fuzz-tools: ${JSON.stringify(stats)}`);
    mkdirSync('test-results', { recursive: true });
    writeFileSync('test-results/fuzz-tools.json', `${JSON.stringify({ seed: SEED, ...stats }, null, 2)}\n`);
  });
});
