// The benchmark's figures as the guides show them: rendered from a saved run (bench/saved/*.json,
// written by `npm run bench -- --save`), never typed by hand. The block sits between two markers in
// docs/BENCHMARKS.md; the bench rewrites it when it saves, and test/docs/figures.test.ts fails when
// the block is not what the saved run renders.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { blockIn, withBlock } from '../scripts/marked-block.ts';

export interface SavedRow {
  server: string;
  rps: number;
  p50: number;
  p99: number;
  correct: string;
  rounds: number[];
  /** The server's CPU per answered request in its median round (µs), and in each round (the sandbox's rows). */
  cpuUs?: number;
  cpuRounds?: number[];
}

export interface SavedRun {
  date: string;
  node: string;
  cpus: number;
  /** The machine's 1-minute load average when the run started (os.loadavg()[0]). */
  loadAverage: number;
  connections: number;
  duration: number;
  rounds: number;
  rows: SavedRow[];
  ratios: Record<string, number | undefined>;
  coldStartMs: number[];
  /** Each launch's CPU (ms, /proc) at its first answer, ascending; absent in runs saved before it was measured. */
  coldStartCpuMs?: number[];
  /** The --baseline checkout's cold starts, launched taking turns with this package's (ms, ascending). */
  coldStartBaselineMs?: number[];
  coldStartBaselineCpuMs?: number[];
  /**
   * A bare node:http server's cold starts (bench/servers/bare-cold-start.js, no package), launched
   * taking turns with this package's: the floor of a start on that machine (ms, ascending); absent in
   * runs saved before it was measured.
   */
  coldStartBareMs?: number[];
  coldStartBareCpuMs?: number[];
  /** The checkout whose server ran as stubs-baseline (--baseline DIR). */
  baseline?: string;
}

export const SERVERS_FILE = 'bench/saved/servers.json';
/** The sandbox's requests naming a scenario beside the same naming none (npm run bench -- --only sandbox,sandbox-scenario --save). */
export const SCENARIOS_FILE = 'bench/saved/scenarios.json';

/** The least time of rounds (rounds × duration, seconds) the scenario comparison is saved from. */
export const SCENARIO_SAVE_SECONDS = 80;

/**
 * Why a run's scenario comparison is not saved, if it is not: its two targets are 5 % apart, within a
 * short round's noise. A run of every server with 11 rounds of 5 s measured 0.961 and a CPU ratio of
 * 1.078 where a dedicated run of 8 rounds of 10 s measured 0.953 and 1.049.
 */
export function scenarioSaveRefusal(rounds: number, duration: number): string | undefined {
  const seconds = rounds * duration;
  return seconds < SCENARIO_SAVE_SECONDS
    ? `${SCENARIOS_FILE} left as it was: ${seconds} s of rounds is under the ${SCENARIO_SAVE_SECONDS} s its figures are saved from (npm run bench -- --only sandbox,sandbox-scenario --rounds 8 --duration 10 --save)`
    : undefined;
}

const NAMES: Record<string, string> = {
  stubs: 'this package',
  'express-openapi-validator': 'express + express-openapi-validator',
  'openapi-backend': 'openapi-backend',
  'fastify-openapi-glue': 'fastify-openapi-glue',
  'stubs-baseline': 'this package, the --baseline checkout',
  'stubs-json': 'this package, the form-mode operations in JSON',
  'stubs-form': 'this package, the same operations form-encoded, answered in XML',
  floor: "the floor (the contract's checks alone)",
  sandbox: 'the sandbox, requests naming no scenario',
  'sandbox-scenario': 'the sandbox, the same requests naming their outcome (SVC-SANDBOX-SCENARIO)',
  bare: 'bare node:http (ceiling)',
};
const nameOf = (server: string) => NAMES[server] ?? server.replace(/^bare\+(\d+)us$/, 'bare + $1 µs of work a request');
const thousands = (n: number) => n.toLocaleString('en-US');

const RATIOS: [string, string][] = [
  ['vsExpressOpenapiValidator', 'this package vs express-openapi-validator'],
  ['vsOpenapiBackend', 'this package vs openapi-backend'],
  ['vsFastifyOpenapiGlue', 'this package vs fastify-openapi-glue'],
  ['shareOfBareCeiling', 'share of the bare node:http ceiling'],
  ['shareOfFloor', "share of the floor (the contract's checks alone)"],
  ['vsBaseline', 'this package vs the --baseline checkout'],
  ['formVsJson', 'form/XML vs JSON, the same operations'],
  ['scenarioVsPlain', 'a request naming a scenario vs the same naming none (target 0.95 or more)'],
  ['scenarioCpuRatio', "its CPU per request over the plain request's (target 1.05 or less)"],
];
/** Ratios written as shares (0.85), not as multiples (3.17×). */
const SHARES = new Set(['shareOfBareCeiling', 'shareOfFloor', 'formVsJson', 'scenarioVsPlain', 'scenarioCpuRatio']);
/**
 * The server each ratio divides this package's rate by: the round-by-round ratios are shown beside the
 * ratio of the medians, because rounds drift together (±10 % here) and a pair measured minutes apart
 * tells a change of a few per cent where two medians cannot.
 */
const DIVISORS: Record<string, string> = {
  shareOfBareCeiling: 'bare',
  shareOfFloor: 'floor',
  vsBaseline: 'stubs-baseline',
};

/** This package's rate over `other`'s, round by round, and the median of those ratios. */
function roundByRound(run: SavedRun, other: string): string {
  const ours = run.rows.find((r) => r.server === 'stubs')?.rounds;
  const theirs = run.rows.find((r) => r.server === other)?.rounds;
  if (!ours || !theirs || ours.length < 2) return '';
  const ratios = ours.map((rps, i) => rps / theirs[i]!);
  const sorted = [...ratios].sort((a, b) => a - b);
  return ` (round by round ${ratios.map((r) => r.toFixed(2)).join(', ')}; their median ${sorted[Math.floor(sorted.length / 2)]!.toFixed(2)})`;
}

/** The Markdown of a saved run: when and how it ran, each server's median round, the ratios, the cold start. */
export function serversFigures(run: SavedRun): string {
  const when = `${run.date.slice(0, 10)} ${run.date.slice(11, 16)} UTC`;
  const lines = [
    `\`npm run bench\` of ${when} (Node ${run.node}, ${run.cpus} cores, load average ${run.loadAverage.toFixed(1)} as it started; ${run.rounds} round${run.rounds === 1 ? '' : 's'} of ${run.duration} s, ${run.connections} connections${run.baseline ? `; --baseline ${run.baseline}` : ''}), saved in \`${SERVERS_FILE}\`:`,
    '',
    '| server | req/s, median round | rounds | p50 | p99 | mix answered correctly |',
    '|---|---:|---|---:|---:|---:|',
    ...run.rows.map(
      (r) =>
        `| ${nameOf(r.server)} | ${thousands(r.rps)} | ${r.rounds.map(thousands).join(' / ')} | ${r.p50} ms | ${r.p99} ms | ${r.server.startsWith('bare') ? 'constant' : r.correct} |`,
    ),
  ];
  const ratios = RATIOS.filter(([key]) => run.ratios[key] !== undefined);
  const cold = run.coldStartMs;
  if (ratios.length || cold.length) {
    lines.push('', '| measure | result |', '|---|---|');
    for (const [key, label] of ratios)
      lines.push(
        `| ${label} | ${run.ratios[key]}${SHARES.has(key) ? '' : '×'}${DIVISORS[key] ? roundByRound(run, DIVISORS[key]) : ''} |`,
      );
    if (cold.length)
      lines.push(
        `| cold start, launch to first answer (dist/) | ${cold[Math.floor(cold.length / 2)]} ms median (${cold[0]} – ${cold.at(-1)}) |`,
      );
    const before = run.coldStartBaselineMs ?? [];
    if (before.length)
      lines.push(
        `| cold start of the --baseline checkout, launched taking turns | ${before[Math.floor(before.length / 2)]} ms median (${before[0]} – ${before.at(-1)}) |`,
      );
    const bare = run.coldStartBareMs ?? [];
    if (cold.length && bare.length) {
      const floor = bare[Math.floor(bare.length / 2)]!;
      lines.push(
        `| cold start of bare node:http (no package), launched taking turns: the machine's floor | ${floor} ms median (${bare[0]} – ${bare.at(-1)}) |`,
        `| cold start above bare node:http's (median − median) | ${cold[Math.floor(cold.length / 2)]! - floor} ms |`,
      );
    }
  }
  return lines.join('\n');
}

/**
 * The Markdown of the scenario comparison: the sandbox's two rows, round by round, and their ratio
 * with each round's own (the two measured a few seconds apart, taking turns).
 */
export function scenarioFigures(run: SavedRun): string {
  const when = `${run.date.slice(0, 10)} ${run.date.slice(11, 16)} UTC`;
  const plain = run.rows.find((r) => r.server === 'sandbox')!;
  const named = run.rows.find((r) => r.server === 'sandbox-scenario')!;
  const rounds = named.rounds.map((rps, i) => (rps / plain.rounds[i]!).toFixed(3));
  const cpu = named.cpuRounds?.map((us, i) => (us / plain.cpuRounds![i]!).toFixed(3));
  return [
    `\`npm run bench -- --only sandbox,sandbox-scenario\` of ${when} (Node ${run.node}, ${run.cpus} cores, load average ${run.loadAverage.toFixed(1)} as it started; ${run.rounds} rounds of ${run.duration} s, taking turns, ${run.connections} connections), saved in \`${SCENARIOS_FILE}\`:`,
    '',
    '| server | req/s, median round | rounds | p50 | p99 | CPU per request, each round | mix answered correctly |',
    '|---|---:|---|---:|---:|---|---:|',
    ...[plain, named].map(
      (r) =>
        `| ${nameOf(r.server)} | ${thousands(r.rps)} | ${r.rounds.map(thousands).join(' / ')} | ${r.p50} ms | ${r.p99} ms | ${r.cpuRounds?.map((us) => `${us} µs`).join(' / ') ?? '—'} | ${r.correct} |`,
    ),
    '',
    `Naming a scenario: ${run.ratios.scenarioVsPlain} of the throughput of naming none (target 0.95 or more: within 5 %); round by round ${rounds.join(', ')}.${cpu ? ` Its CPU per request: ${run.ratios.scenarioCpuRatio} of the plain request's, the median round's (target 1.05 or less); round by round ${cpu.join(', ')}.` : ''}`,
  ].join('\n');
}

/** A figures block, `<!-- figures:NAME -->` … `<!-- /figures:NAME -->`, replaced by `figures`. */
export const withFigures = (doc: string, name: string, figures: string): string =>
  withBlock(doc, `figures:${name}`, figures);

/** The figures block `name` as the page holds it now. */
export const figuresIn = (doc: string, name: string): string | undefined => blockIn(doc, `figures:${name}`);

export const withServersFigures = (doc: string, figures: string) => withFigures(doc, 'servers', figures);
export const serversFiguresIn = (doc: string) => figuresIn(doc, 'servers');

// The deployment bench (bench/deployment.ts): the sandbox on one store beside the validating server
// with a trivial handler and the Prism mock, on the same mix, each target's median round.

export interface DeploymentRow {
  /** stubs, mock, or sandbox×N (N instances). */
  target: string;
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  /** The target's processes' CPU per answered request, ms. */
  cpuMs: number;
  /** The database's (PostgreSQL backends') CPU per answered request, ms, when the server is on this machine. */
  databaseCpuMs?: number;
  /** Per cent of all the machine's cores busy during the round, other work included. */
  machineBusy: number;
  /** Every round's req/s (the row is the median round's). */
  rounds: number[];
}

export interface DeploymentRun {
  date: string;
  node: string;
  cpus: number;
  loadAverage: number;
  store: 'sqlite' | 'postgres';
  connections: number;
  duration: number;
  rounds: number;
  rows: DeploymentRow[];
}

export const deploymentFile = (store: string) => `bench/saved/deployment-${store}.json`;

const targetName = (target: string, store: string) =>
  target === 'stubs'
    ? "this package's server, trivial handler"
    : target === 'mock'
      ? 'the Prism mock (front + Prism)'
      : target === 'baseline'
        ? 'the sandbox of --baseline (before), first instance count'
        : `the sandbox on ${store === 'sqlite' ? 'one SQLite file' : 'PostgreSQL'}, ${target.replace(/^sandbox×(\d+)/, '$1 instance(s)').replace(/ instance\(s\) (.+)$/, ' instance(s), `$1`')}`;

/** Requests a second one core serves at this CPU per request (the target's and the database's). */
export const perCore = (row: DeploymentRow) => Math.round(1000 / (row.cpuMs + (row.databaseCpuMs ?? 0)));

/** The Markdown of a saved deployment run: each target's median round, CPU per request, per core, the ratios. */
export function deploymentFigures(run: DeploymentRun): string {
  const when = `${run.date.slice(0, 10)} ${run.date.slice(11, 16)} UTC`;
  const instances = run.rows.filter((r) => /^sandbox×\d+$/.test(r.target)).map((r) => r.target.slice(8));
  const lines = [
    `\`npm run bench -- --store ${run.store} --instances ${instances.join(',')}\` of ${when} (Node ${run.node}, ${run.cpus} cores, load average ${run.loadAverage.toFixed(1)} as it started; ${run.rounds} round${run.rounds === 1 ? '' : 's'} of ${run.duration} s, targets taking turns, ${run.connections} connections; processCard + queryCard), saved in \`${deploymentFile(run.store)}\`:`,
    '',
    "| target | req/s, median round | rounds | p50 | p99 | non-2xx, errors | CPU per request | database's CPU per request | requests a second per core | machine busy |",
    '|---|---:|---|---:|---:|---:|---:|---:|---:|---:|',
    ...run.rows.map(
      (r) =>
        `| ${targetName(r.target, run.store)} | ${thousands(r.rps)} | ${r.rounds.map(thousands).join(' / ')} | ${r.p50} ms | ${r.p99} ms | ${r.non2xx}, ${r.errors} | ${r.cpuMs.toFixed(3)} ms | ${r.databaseCpuMs === undefined ? '—' : `${r.databaseCpuMs.toFixed(3)} ms`} | ${thousands(perCore(r))} | ${r.machineBusy} % |`,
    ),
  ];
  const stubs = run.rows.find((r) => r.target === 'stubs');
  const mock = run.rows.find((r) => r.target === 'mock');
  const plain = (r: DeploymentRow) => /^sandbox×\d+$/.test(r.target);
  const cpu = (r: DeploymentRow) => r.cpuMs + (r.databaseCpuMs ?? 0);
  const first = run.rows.find(plain);
  const against = (r: DeploymentRow, other: DeploymentRow, label: string, withCpu: boolean) => [
    `| ${targetName(r.target, run.store)} / ${label}, req/s | ${(r.rps / other.rps).toFixed(2)} |`,
    ...(withCpu
      ? [
          `| ${targetName(r.target, run.store)} / ${label}, CPU per request (with the database's) | ${(cpu(r) / cpu(other)).toFixed(2)} |`,
        ]
      : []),
  ];
  const ratios = run.rows
    .filter(plain)
    .flatMap((r) => [
      ...(stubs ? against(r, stubs, 'the server alone', false) : []),
      ...(mock ? against(r, mock, 'the Prism mock', false) : []),
    ]);
  const baseline = run.rows.find((r) => r.target === 'baseline');
  if (baseline && first) ratios.push(...against(first, baseline, '--baseline', true));
  if (first)
    for (const variant of run.rows.filter((r) => r.target.startsWith('sandbox×') && !plain(r)))
      ratios.push(...against(variant, first, 'the default', true));
  if (ratios.length) lines.push('', '| measure | result |', '|---|---|', ...ratios);
  return lines.join('\n');
}

/** What the sandbox's process measures of itself during an export (bench/growth.ts). */
export interface ExportServerSide {
  rssBeforeMb: number;
  rssDeltaMb: number;
  heapDeltaMb: number;
  buffersDeltaMb: number;
  retainedMb: number;
  maxBlockMs: number;
  maxRunCpuMs: number;
  /** CPU time of the sandbox's process during the export, every thread (zlib's pool included). */
  cpuMs: number;
}

/** One export measured by `npm run bench -- --growth` (bench/growth.ts): the sandbox's side and the client's. */
export interface GrowthRow extends ExportServerSide {
  /** Which sandbox was measured: `this` (the tree the bench runs in) or `baseline` (--baseline DIR). */
  sandbox: 'this' | 'baseline';
  rows: number;
  exportMs: number;
  zipBytes: number;
  purchases: number;
  p50: number;
  p99: number;
}

export interface SavedGrowthRun {
  date: string;
  node: string;
  cpus: number;
  loadAverage: number;
  store: 'sqlite' | 'postgres';
  nodeFlags: string[];
  concurrency: number;
  /** The commit of --baseline's tree, when one was measured beside this one. */
  baseline?: string;
  rows: GrowthRow[];
}

export const growthFile = (store: 'sqlite' | 'postgres') => `bench/saved/growth-${store}.json`;

const fixed = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : '–');
const signed = (n: number, digits = 0) => `${n >= 0 ? '+' : ''}${fixed(n, digits)}`;

/** The Markdown of a saved growth run: how it ran, then a line per export. */
export function growthFigures(run: SavedGrowthRun): string {
  const when = `${run.date.slice(0, 10)} ${run.date.slice(11, 16)} UTC`;
  const paired = run.rows.some((r) => r.sandbox === 'baseline');
  const lines = [
    `\`npm run bench -- --growth --store ${run.store}\` of ${when} (Node ${run.node}, ${run.cpus} cores, load average ${fixed(run.loadAverage)} as it started; the sandbox run with \`${run.nodeFlags.join(' ') || 'no flags'}\`, ${run.concurrency} purchases in flight during each export${paired ? `; each size measured on this tree and on the baseline, commit ${run.baseline}, in turn` : ''}), saved in \`${growthFile(run.store)}\`:`,
    '',
    `|${paired ? ' sandbox |' : ''} settled rows | export | rows/s | CPU (all threads) | zip | peak RSS delta (RSS before) | peak JS heap / buffers delta | retained after GC | longest event-loop block (wall) | longest main-thread run (CPU) | purchases during export | purchase p50 / p99 |`,
    `|${paired ? '---|' : ''}---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|`,
    ...run.rows.map(
      (r) =>
        `|${paired ? ` ${r.sandbox === 'baseline' ? 'before' : 'after'} |` : ''} ${thousands(r.rows)} | ${fixed(r.exportMs, 0)} ms | ${thousands(Math.round((r.rows * 1000) / r.exportMs))} | ${fixed(r.cpuMs, 0)} ms | ${fixed(r.zipBytes / 1e6)} MB | ${signed(r.rssDeltaMb)} MB (${fixed(r.rssBeforeMb, 0)} MB) | ${signed(r.heapDeltaMb)} / ${signed(r.buffersDeltaMb)} MB | ${signed(r.retainedMb, 1)} MB | ${fixed(r.maxBlockMs)} ms | ${fixed(r.maxRunCpuMs)} ms | ${r.purchases} | ${fixed(r.p50)} ms / ${fixed(r.p99)} ms |`,
    ),
  ];
  return lines.join('\n');
}

// Where an instance's CPU went (npm run bench:profile-shares -- DIR --save NAME): the shares of the
// busy samples of the profiles `npm run bench -- --store … --cpu-prof DIR` wrote, one column a save.
export interface ProfileShares {
  name: string;
  /** What was profiled, in the reader's words: the command and the store. */
  what: string;
  date: string;
  node: string;
  profiles: number;
  busySeconds: number;
  /** part of the work → its share of the busy samples (0 to 1). */
  shares: Record<string, number>;
}

export const profileFile = (name: string) => `bench/saved/profile-${name}.json`;

/** The saved profiles side by side: a row per part of the work, largest first by the first column. */
export function profileFigures(saved: ProfileShares[]): string {
  const parts = [...new Set(saved.flatMap((s) => Object.keys(s.shares)))].sort(
    (a, b) => (saved[0]!.shares[b] ?? 0) - (saved[0]!.shares[a] ?? 0),
  );
  const percent = (share: number | undefined) => (share === undefined ? '—' : `${(share * 100).toFixed(1)} %`);
  return [
    ...saved.map(
      (s) =>
        `- **${s.name}**: ${s.what}, ${s.date.slice(0, 16).replace('T', ' ')} UTC (Node ${s.node}; ${s.profiles} profile(s), ${s.busySeconds.toFixed(1)} s busy), saved in \`${profileFile(s.name)}\``,
    ),
    '',
    `| part of the work | ${saved.map((s) => s.name).join(' | ')} |`,
    `|---|${saved.map(() => '---:').join('|')}|`,
    ...parts.map((part) => `| ${part} | ${saved.map((s) => percent(s.shares[part])).join(' | ')} |`),
  ].join('\n');
}

/** Every saved profile (bench/saved/profile-*.json): a store's columns together, SQLite first, each store's oldest first. */
export function savedProfiles(root: string): ProfileShares[] {
  const store = (s: ProfileShares) => (s.name.startsWith('sqlite') ? 0 : 1);
  return readdirSync(path.join(root, 'bench/saved'))
    .filter((f) => /^profile-.+\.json$/.test(f))
    .map((f) => JSON.parse(readFileSync(path.join(root, 'bench/saved', f), 'utf8')) as ProfileShares)
    .sort((a, b) => store(a) - store(b) || a.date.localeCompare(b.date));
}
