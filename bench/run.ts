// npm run bench: throughput and latency over loopback, side by side in one run, on the same request
// mix drawn from the spec's examples; then the cold start of this package's server, taking turns
// with a bare node:http server's (the floor of a start on the machine at hand).
//
//   node bench/run.ts --growth [--sizes 10000,100000,1000000]   (bench/growth.ts)
//   node bench/run.ts --store sqlite|postgres --instances 1,2,3  (bench/deployment.ts)
//   node bench/run.ts --work-before-refusal [--baseline DIR]     (bench/work-before-refusal.ts)
//   node bench/run.ts [--duration 10] [--warmup 3] [--connections 32] [--rounds 3] [--only stubs,bare] [--busy-us 5,7] [--baseline DIR] [--save]
//   node bench/run.ts --only stubs-json,stubs-form               (the two wire formats side by side)
//
// --save keeps the run in bench/saved/servers.json (committed) and writes its figures into
// docs/BENCHMARKS.md (bench/figures.ts): the guide's figures are a saved run's, with its date.
//
// --baseline DIR adds the server of another checkout of this package (DIR, with node_modules), on
// the same mix, as `stubs-baseline`, and launches its compiled server for the cold start, taking
// turns with this one's: a change's before and after in one run.
//
// --busy-us adds the bare server with that many microseconds of busy work per request: what a given
// cost per request does to throughput on this machine, against which this package's can be read.
// The floor server does only the checks the contract asks for (bench/floor.ts): what any server that
// makes them with the same primitives can reach here.
//
// Each server runs in its own process. Before loading a server, every request of the mix is sent to
// it once and its status checked, so that no server wins by refusing quickly. The servers take turns
// for several rounds (every other round in the reverse order) and each is reported by its median
// round: on a shared 2-core machine the throughput of one 10 s run drifts by ±15 %, and a drift would
// otherwise land on one server only.
import { execFileSync } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import {
  type SavedRun,
  SCENARIOS_FILE,
  scenarioFigures,
  scenarioSaveRefusal,
  SERVERS_FILE,
  serversFigures,
  withFigures,
  withServersFigures,
} from './figures.ts';
import { check, coldStartEnv, mix, type Mix, processCpuMs, scenarioMixes, start, wireMixes } from './harness.ts';
import { coldProfile } from './cold-profile.ts';
import { stubsProfile } from './stubs-profile.ts';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const USAGE = `Usage: npm run bench -- [options]   (docs/BENCHMARKS.md)
  [--duration 10] [--warmup 3] [--connections 32] [--rounds 3] [--only stubs,bare] [--busy-us 5,7] [--baseline DIR] [--save]
                                         the validating servers side by side, then the cold start
                                         (beside a bare node:http server's: the stubs' start above it)
                                         (--cold-profile: and where one cold start's CPU went, bench/cold-profile.ts)
                                         (--stubs-profile: and where the stubs server's CPU went under the load, bench/stubs-profile.ts)
                                         (--baseline DIR: another checkout's server too, as stubs-baseline, and its cold start)
                                         (--warmup 0: no warm-up, for a run that only shows the output)
  --only stubs-json,stubs-form           the two wire formats side by side
  --store sqlite|postgres --instances 1,2 [--baseline DIR] [--variant NAME=VALUE] [--save]
                                         a deployment of sandboxes beside the stubs and the mock
  --growth [--sizes 10000,100000,1000000] [--store sqlite|postgres] [--baseline DIR] [--save]
                                         the sandbox's costs as its data grows (the settlement export)
  --work-before-refusal [--rounds 5] [--baseline DIR]
                                         the event loop's hold while a body built to cost work is refused`;
if (process.argv.includes('--help') || process.argv.includes('-h')) {
  console.log(USAGE);
  process.exit(0);
}
// The other benchmarks behind the same command: --growth (the sandbox's costs as its data grows,
// bench/growth.ts) and --store/--instances (a deployment of several sandboxes, bench/deployment.ts).
const other = process.argv.includes('--growth')
  ? './growth.ts'
  : process.argv.includes('--work-before-refusal')
    ? './work-before-refusal.ts'
    : process.argv.some((a) => a.startsWith('--instances') || a.startsWith('--store'))
      ? './deployment.ts'
      : undefined;
if (other) {
  await import(other);
  process.exit(0);
}
// A mistake in the options is one line and exit 2, as every command of the package answers one.
const { values: args } = (() => {
  try {
    return parseArgs({
      options: {
        duration: { type: 'string', default: '10' },
        warmup: { type: 'string', default: '3' },
        connections: { type: 'string', default: '32' },
        rounds: { type: 'string', default: '3' },
        only: { type: 'string' },
        'cold-starts': { type: 'string', default: '7' },
        'cold-profile': { type: 'boolean', default: false },
        'stubs-profile': { type: 'boolean', default: false },
        'busy-us': { type: 'string' },
        baseline: { type: 'string' },
        save: { type: 'boolean', default: false },
      },
    });
  } catch (error) {
    console.error(`bench: ${(error as Error).message} (npm run bench -- --help)`);
    process.exit(2);
  }
})();
const loadAverage = os.loadavg()[0]!;
// Seconds of load each server takes before it is measured (JIT, caches); 0 for none.
const warmup = Number(args.warmup);
if (!/^\d+(\.\d+)?$/.test(args.warmup)) {
  console.error(`bench: --warmup takes seconds, 0 or more, not '${args.warmup}' (npm run bench -- --help)`);
  process.exit(2);
}

const SERVERS = [
  { name: 'stubs', label: 'this package (request + answer validation, authentication)', script: 'servers/stubs.ts' },
  {
    name: 'express-openapi-validator',
    label: 'express + express-openapi-validator (requests + responses)',
    script: 'servers/express-openapi-validator.ts',
  },
  {
    name: 'openapi-backend',
    label: 'openapi-backend (requests + validateResponse)',
    script: 'servers/openapi-backend.ts',
  },
  {
    name: 'fastify-openapi-glue',
    label: "fastify + fastify-openapi-glue (requests by Fastify's Ajv, answers by its schema serialiser)",
    script: 'servers/fastify-openapi-glue.ts',
  },
  // The form/XML mode beside the JSON mode: this package's server on the form-mode operations only,
  // their requests in JSON, then the same requests form-encoded and answered in XML.
  {
    name: 'stubs-json',
    label: 'this package, the form-mode operations in JSON (the JSON side of the wire comparison)',
    script: 'servers/stubs.ts',
    mix: wireMixes.json,
  },
  {
    name: 'stubs-form',
    label: 'this package, the same operations form-encoded, answered in XML (docs/WIRE-FORMATS.md)',
    script: 'servers/stubs.ts',
    mix: wireMixes.form,
  },
  // A request naming a scenario beside the same request naming none, on the sandbox as npm start runs it.
  {
    name: 'sandbox',
    label: 'the sandbox as npm start runs it (in memory), a card purchase and a BIN query naming no scenario',
    script: 'servers/sandbox.ts',
    mix: scenarioMixes.plain,
    env: { NODE_ENV: 'development' },
  },
  {
    name: 'sandbox-scenario',
    label: 'the same requests, each naming its own outcome in SVC-SANDBOX-SCENARIO (docs/SCENARIOS.md)',
    script: 'servers/sandbox.ts',
    mix: scenarioMixes.named,
    env: { NODE_ENV: 'development' },
  },
  {
    name: 'floor',
    label: 'the floor: node:http and only the checks the contract asks for, no routing or refusals (bench/floor.ts)',
    script: 'servers/floor.ts',
  },
  {
    name: 'bare',
    label: 'bare node:http answering a constant (ceiling; its 200 for Get PayID is not 201)',
    script: 'servers/bare.ts',
  },
  ...(args.baseline
    ? [
        {
          name: 'stubs-baseline',
          label: `this package's server in the --baseline checkout ${args.baseline}`,
          script: path.resolve(args.baseline, 'bench/servers/stubs.ts'),
        },
      ]
    : []),
  ...(args['busy-us']?.split(',') ?? []).map((us) => ({
    name: `bare+${us}us`,
    label: `bare node:http with ${us} µs of busy work per request`,
    script: 'servers/bare.ts',
    env: { BARE_BUSY_US: us },
  })),
].filter(
  (s) =>
    !args.only || args.only.split(',').includes(s.name) || s.name.startsWith('bare+') || s.name === 'stubs-baseline',
);

function load(port: number, seconds: number, requests: Mix = mix) {
  return autocannon({
    url: `http://127.0.0.1:${port}`,
    connections: Number(args.connections),
    duration: seconds,
    requests: requests.map((m) => m.request),
  });
}

/** One launch of a cold-start server (a checkout's compiled server, or the bare one) to its first answer: the wall time, and its CPU by then. */
async function launchOnce(script: string, request: (typeof mix)[number]['request'], status: number) {
  const { child, port, startedAt } = await start(script, coldStartEnv);
  const response = await fetch(`http://127.0.0.1:${port}${request.path}`, {
    method: request.method,
    headers: request.headers,
    body: request.body ?? null,
  });
  await response.text();
  if (response.status !== status) throw new Error(`cold start of ${script}: first answer was not a success`);
  const launched = { ms: performance.now() - startedAt, cpu: processCpuMs(child.pid) };
  child.kill();
  return launched;
}

interface ColdStarts {
  times: number[];
  cpu: number[];
}

/**
 * Launch to first answer of the compiled server (dist/), as users deploy it: each launch's wall time,
 * and the CPU its process had used by then (/proc; what other work on the machine barely changes).
 * Beside it, as many launches of a bare node:http server (bench/servers/bare-cold-start.js, no
 * package): the floor of a start on the machine at hand, so that the stubs' median minus the bare
 * one's is what the package adds, a figure that holds across machines where the start's own does
 * not. With --baseline, the other checkout's server (built there first) is launched as many times
 * too. All take turns, so that they are measured under the same conditions: before and after, and
 * the floor, in one run. Each list is sorted.
 */
async function coldStart(): Promise<{ ours: ColdStarts; baseline: ColdStarts | undefined; bare: ColdStarts }> {
  const root = path.join(HERE, '..');
  const roots = args.baseline ? [root, path.resolve(args.baseline)] : [root];
  for (const dir of roots) execFileSync('npm', ['run', '-s', 'build'], { cwd: dir, stdio: 'inherit' });
  const { op, request } = mix.find((m) => m.op.operationId === 'getSurcharge')!;
  // Ours, the baseline's (when asked), and the bare server last.
  const scripts = [
    ...roots.map((dir) => path.join(dir, 'bench/servers/cold-start.js')),
    path.join(HERE, 'servers/bare-cold-start.js'),
  ];
  const measured = scripts.map((): ColdStarts => ({ times: [], cpu: [] }));
  for (let i = 0; i < Number(args['cold-starts']); i++) {
    // Every other turn in the reverse order, so that none always runs first.
    const order = i % 2 ? scripts.map((_, j) => j).reverse() : scripts.map((_, j) => j);
    for (const j of order) {
      const { ms, cpu } = await launchOnce(scripts[j]!, request, op.status);
      measured[j]!.times.push(ms);
      measured[j]!.cpu.push(cpu);
    }
  }
  if (args['cold-profile']) await coldProfile(request);
  const sorted = measured.map((m) => ({
    times: m.times.sort((a, b) => a - b),
    cpu: m.cpu.sort((a, b) => a - b),
  }));
  return { ours: sorted[0]!, baseline: args.baseline ? sorted[1] : undefined, bare: sorted.at(-1)! };
}

interface Round {
  rps: number;
  /** The server process's CPU per answered request, µs (0 where /proc cannot be read). */
  cpuUs: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  correct: string;
  failures: string[];
}

async function measure(script: string, env?: Record<string, string>, requests: Mix = mix): Promise<Round> {
  const { child, port } = await start(script, env);
  try {
    const correctness = await check(port, requests);
    if (warmup > 0) await load(port, warmup, requests);
    const cpuBefore = processCpuMs(child.pid);
    const r = await load(port, Number(args.duration), requests);
    const cpuMs = processCpuMs(child.pid) - cpuBefore;
    return {
      rps: Math.round(r.requests.average),
      cpuUs: r.requests.total ? Math.round((cpuMs * 1000) / r.requests.total) : 0,
      p50: r.latency.p50,
      p99: r.latency.p99,
      non2xx: r.non2xx,
      errors: r.errors,
      correct: `${correctness.ok}/${correctness.total}`,
      failures: correctness.failures.slice(0, 5),
    };
  } finally {
    child.kill();
  }
}

const rounds = Number(args.rounds);
console.log(
  `mix: ${mix.length} operations' example requests; ${args.connections} connections, ${args.duration} s each, ${warmup > 0 ? `after a ${warmup} s warm-up` : 'no warm-up'}; ${rounds} rounds, servers taking turns (every other round in the reverse order)\n`,
);
const measured = new Map<string, Round[]>(SERVERS.map((s) => [s.name, []]));
for (let round = 1; round <= rounds; round++) {
  // Every other round in the reverse order: a server measured right after another one (its caches,
  // the machine's state) is not always the same one, so a pair's ratio carries no order's bias.
  for (const server of round % 2 ? SERVERS : [...SERVERS].reverse()) {
    const r = await measure(
      server.script,
      'env' in server ? server.env : undefined,
      'mix' in server ? server.mix : undefined,
    );
    measured.get(server.name)!.push(r);
    console.log(
      `round ${round}  ${server.name.padEnd(26)} ${String(r.rps).padStart(7)} req/s  p50 ${r.p50} ms  p99 ${r.p99} ms  CPU ${r.cpuUs} µs/request  correct ${r.correct}  non-2xx ${r.non2xx}`,
    );
  }
}
const rows = SERVERS.map((server) => {
  const list = measured.get(server.name)!;
  const median = [...list].sort((a, b) => a.rps - b.rps)[Math.floor(list.length / 2)]!;
  return { server: server.name, label: server.label, ...median, rounds: list.map((r) => r.rps) };
});
console.log('\nmedian round of each server:');
for (const r of rows)
  console.log(
    `${r.server.padEnd(26)} ${String(r.rps).padStart(7)} req/s  p50 ${r.p50} ms  p99 ${r.p99} ms  (rounds: ${r.rounds.join(', ')})`,
  );

/** A checkout as a reader can find it again: its commit when it is a git work tree. */
function describeCheckout(dir: string): string {
  try {
    const commit = execFileSync('git', ['-C', dir, 'rev-parse', '--short', 'HEAD'], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    return `commit ${commit.toString().trim()}`;
  } catch {
    return dir;
  }
}

const rate = (name: string) => rows.find((r) => r.server === name)?.rps;
/** The median over rounds of `a`'s CPU per request over `b`'s, each round's pair measured seconds apart. */
function cpuRatio(a: string, b: string): number | undefined {
  const ours = measured.get(a);
  const theirs = measured.get(b);
  if (!ours?.length || !theirs?.length || ours.some((r) => !r.cpuUs) || theirs.some((r) => !r.cpuUs)) return undefined;
  const ratios = ours.map((r, i) => r.cpuUs / theirs[i]!.cpuUs).sort((x, y) => x - y);
  return +ratios[Math.floor(ratios.length / 2)]!.toFixed(3);
}
const ours = rate('stubs');
const ratios = {
  vsExpressOpenapiValidator:
    ours && rate('express-openapi-validator') ? +(ours / rate('express-openapi-validator')!).toFixed(2) : undefined,
  vsOpenapiBackend: ours && rate('openapi-backend') ? +(ours / rate('openapi-backend')!).toFixed(2) : undefined,
  vsFastifyOpenapiGlue:
    ours && rate('fastify-openapi-glue') ? +(ours / rate('fastify-openapi-glue')!).toFixed(2) : undefined,
  shareOfBareCeiling: ours && rate('bare') ? +(ours / rate('bare')!).toFixed(2) : undefined,
  shareOfFloor: ours && rate('floor') ? +(ours / rate('floor')!).toFixed(2) : undefined,
  vsBaseline: ours && rate('stubs-baseline') ? +(ours / rate('stubs-baseline')!).toFixed(2) : undefined,
  formVsJson:
    rate('stubs-form') && rate('stubs-json') ? +(rate('stubs-form')! / rate('stubs-json')!).toFixed(2) : undefined,
  scenarioVsPlain:
    rate('sandbox-scenario') && rate('sandbox')
      ? +(rate('sandbox-scenario')! / rate('sandbox')!).toFixed(3)
      : undefined,
  // The same comparison in the server's own CPU per request, round by round: what a scenario costs,
  // whatever else the machine runs (its median round's ratio; 1.05 or less is within 5 %).
  scenarioCpuRatio: cpuRatio('sandbox-scenario', 'sandbox'),
};
for (const row of rows.filter((r) => (r.server.startsWith('bare+') || r.server === 'floor') && rate('bare')))
  console.log(`${row.server} / bare node:http ceiling: ${(row.rps / rate('bare')!).toFixed(2)}`);
if (args['stubs-profile'] && SERVERS.some((s) => s.name === 'stubs'))
  await stubsProfile(
    (port) => load(port, Number(args.duration)),
    (port) => (warmup > 0 ? load(port, warmup) : Promise.resolve()),
  );
const coldStarts = SERVERS.some((s) => s.name === 'stubs') ? await coldStart() : undefined;
const { times: cold, cpu: coldCpu } = coldStarts?.ours ?? { times: [], cpu: [] };
const coldBaseline = coldStarts?.baseline;
const coldBare = coldStarts?.bare;
const median = cold[Math.floor(cold.length / 2)];
console.log('');
if (ratios.vsExpressOpenapiValidator)
  console.log(`this package vs express-openapi-validator: ${ratios.vsExpressOpenapiValidator}x (target 3x)`);
if (ratios.vsOpenapiBackend)
  console.log(`this package vs openapi-backend:           ${ratios.vsOpenapiBackend}x (target 1.5x)`);
if (ratios.vsFastifyOpenapiGlue)
  console.log(`this package vs fastify-openapi-glue:      ${ratios.vsFastifyOpenapiGlue}x`);
/** Ours over another server's, round by round (each round measures them minutes apart at most). */
const byRound = (other: string) =>
  measured
    .get('stubs')
    ?.map((r, i) => (measured.get(other)?.[i] ? +(r.rps / measured.get(other)![i]!.rps).toFixed(2) : undefined))
    .filter((x) => x !== undefined) ?? [];
const roundByRound = (other: string) => (byRound(other).length ? `; round by round: ${byRound(other).join(', ')}` : '');
if (ratios.shareOfBareCeiling)
  console.log(
    `this package / bare node:http ceiling:     ${ratios.shareOfBareCeiling} (target 0.70)${roundByRound('bare')}`,
  );
if (ratios.shareOfFloor)
  console.log(
    `this package / the floor:                  ${ratios.shareOfFloor} (target 0.90)${roundByRound('floor')}`,
  );
if (ratios.vsBaseline)
  console.log(`this package vs the --baseline checkout:   ${ratios.vsBaseline}x${roundByRound('stubs-baseline')}`);
if (ratios.formVsJson) {
  const byRound = measured
    .get('stubs-form')!
    .map((r, i) => +(r.rps / measured.get('stubs-json')![i]!.rps).toFixed(2))
    .join(', ');
  console.log(
    `form/XML vs JSON, the same ${wireMixes.form!.length} operations: ${ratios.formVsJson} of the JSON throughput (target 0.85 or more); round by round: ${byRound}`,
  );
}
if (ratios.scenarioVsPlain) {
  const byRound = measured
    .get('sandbox-scenario')!
    .map((r, i) => +(r.rps / measured.get('sandbox')![i]!.rps).toFixed(3))
    .join(', ');
  console.log(
    `a request naming a scenario vs the same naming none, on the sandbox: ${ratios.scenarioVsPlain} of the throughput (target 0.95 or more: within 5 %); round by round: ${byRound}`,
  );
  if (ratios.scenarioCpuRatio) {
    const cpu = measured
      .get('sandbox-scenario')!
      .map((r, i) => +(r.cpuUs / measured.get('sandbox')![i]!.cpuUs).toFixed(3))
      .join(', ');
    console.log(
      `  its CPU per request: ${ratios.scenarioCpuRatio} of the plain request's, median round (target 1.05 or less); round by round: ${cpu}`,
    );
  }
}
if (median !== undefined)
  console.log(
    `cold start (dist/), launch to first answer: median ${median.toFixed(0)} ms of ${cold.length} (min ${cold[0]!.toFixed(0)}, max ${cold.at(-1)!.toFixed(0)}; target 100 ms); its CPU by then: median ${coldCpu[Math.floor(coldCpu.length / 2)]} ms (${coldCpu[0]} – ${coldCpu.at(-1)}; /proc, in 10 ms ticks); load average ${os.loadavg()[0]!.toFixed(2)}`,
  );
if (coldBaseline?.times.length) {
  const at = Math.floor(coldBaseline.times.length / 2);
  console.log(
    `  the --baseline checkout's, taking turns with it: median ${coldBaseline.times[at]!.toFixed(0)} ms (min ${coldBaseline.times[0]!.toFixed(0)}, max ${coldBaseline.times.at(-1)!.toFixed(0)}); its CPU by then: median ${coldBaseline.cpu[at]} ms (${coldBaseline.cpu[0]} – ${coldBaseline.cpu.at(-1)})`,
  );
}
if (median !== undefined && coldBare?.times.length) {
  const at = Math.floor(coldBare.times.length / 2);
  const bareMedian = coldBare.times[at]!;
  console.log(
    `  bare node:http (no package), taking turns with it: median ${bareMedian.toFixed(0)} ms (min ${coldBare.times[0]!.toFixed(0)}, max ${coldBare.times.at(-1)!.toFixed(0)}); its CPU by then: median ${coldBare.cpu[at]} ms (${coldBare.cpu[0]} – ${coldBare.cpu.at(-1)})`,
  );
  console.log(
    `  the stubs' cold start above bare node:http's (median − median; the floor is this machine's, the difference travels): ${(median - bareMedian).toFixed(0)} ms; CPU ${coldCpu[Math.floor(coldCpu.length / 2)]! - coldBare.cpu[at]!} ms`,
  );
}
for (const row of rows)
  if (row.failures.length)
    console.log(`\n${row.server} refused some requests of the mix:\n  ${row.failures.join('\n  ')}`);

const run: SavedRun = {
  date: new Date().toISOString(),
  node: process.version,
  cpus: os.cpus().length,
  loadAverage: +loadAverage.toFixed(2),
  connections: Number(args.connections),
  duration: Number(args.duration),
  rounds,
  rows: rows.map(({ server, rps, p50, p99, correct, rounds, cpuUs }) => ({
    server,
    rps,
    p50,
    p99,
    correct,
    rounds,
    ...(server.startsWith('sandbox') ? { cpuUs, cpuRounds: measured.get(server)!.map((r) => r.cpuUs) } : {}),
  })),
  ratios,
  coldStartMs: cold.map((t) => Math.round(t)),
  coldStartCpuMs: coldCpu,
  ...(coldBaseline
    ? {
        coldStartBaselineMs: coldBaseline.times.map((t) => Math.round(t)),
        coldStartBaselineCpuMs: coldBaseline.cpu,
      }
    : {}),
  ...(coldBare?.times.length
    ? { coldStartBareMs: coldBare.times.map((t) => Math.round(t)), coldStartBareCpuMs: coldBare.cpu }
    : {}),
  ...(args.baseline ? { baseline: describeCheckout(args.baseline) } : {}),
};
await mkdir(path.join(HERE, 'results'), { recursive: true });
await writeFile(path.join(HERE, 'results', 'latest.json'), `${JSON.stringify(run, null, 2)}\n`);
if (args.save) {
  const root = path.join(HERE, '..');
  await mkdir(path.dirname(path.join(root, SERVERS_FILE)), { recursive: true });
  const page = path.join(root, 'docs/BENCHMARKS.md');
  // The servers' run is saved when it measured this package's server (a run of --only other servers
  // leaves it); the scenario comparison, when it was measured, in a file of its own.
  if (rate('stubs')) {
    await writeFile(path.join(root, SERVERS_FILE), `${JSON.stringify(run, null, 2)}\n`);
    await writeFile(page, withServersFigures(await readFile(page, 'utf8'), serversFigures(run)));
    console.log(`\nsaved in ${SERVERS_FILE}; its figures written into docs/BENCHMARKS.md`);
  }
  const unsaved = scenarioSaveRefusal(Number(args.rounds), Number(args.duration));
  if (ratios.scenarioVsPlain && unsaved) console.log(unsaved);
  else if (ratios.scenarioVsPlain) {
    const pair = {
      ...run,
      rows: run.rows.filter((r) => r.server.startsWith('sandbox')),
      ratios: { scenarioVsPlain: ratios.scenarioVsPlain, scenarioCpuRatio: ratios.scenarioCpuRatio },
      coldStartMs: [],
      coldStartCpuMs: [],
    };
    await writeFile(path.join(root, SCENARIOS_FILE), `${JSON.stringify(pair, null, 2)}\n`);
    await writeFile(page, withFigures(await readFile(page, 'utf8'), 'scenarios', scenarioFigures(pair)));
    console.log(`saved in ${SCENARIOS_FILE}; its figures written into docs/BENCHMARKS.md`);
  }
}
