// The benchmark's figures as the guides show them: rendered from a saved run (bench/saved/*.json,
// written by `npm run bench -- --save`), never typed by hand. The block sits between two markers in
// docs/BENCHMARKS.md; the bench rewrites it when it saves, and test/docs/figures.test.ts fails when
// the block is not what the saved run renders.

export interface SavedRow {
  server: string;
  rps: number;
  p50: number;
  p99: number;
  correct: string;
  rounds: number[];
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
}

export const SERVERS_FILE = 'bench/saved/servers.json';
const OPEN = '<!-- figures:servers -->';
const CLOSE = '<!-- /figures:servers -->';

const NAMES: Record<string, string> = {
  stubs: 'this package',
  'express-openapi-validator': 'express + express-openapi-validator',
  'openapi-backend': 'openapi-backend',
  'fastify-openapi-glue': 'fastify-openapi-glue',
  floor: "the floor (the contract's checks alone)",
  bare: 'bare node:http (ceiling)',
};
const nameOf = (server: string) => NAMES[server] ?? server.replace(/^bare\+(\d+)us$/, 'bare + $1 µs of work a request');
const thousands = (n: number) => n.toLocaleString('en-US');

const RATIOS: [string, string][] = [
  ['vsExpressOpenapiValidator', 'this package vs express-openapi-validator'],
  ['vsOpenapiBackend', 'this package vs openapi-backend'],
  ['vsFastifyOpenapiGlue', 'this package vs fastify-openapi-glue'],
  ['shareOfBareCeiling', 'share of the bare node:http ceiling'],
];

/** The Markdown of a saved run: when and how it ran, each server's median round, the ratios, the cold start. */
export function serversFigures(run: SavedRun): string {
  const when = `${run.date.slice(0, 10)} ${run.date.slice(11, 16)} UTC`;
  const lines = [
    `\`npm run bench\` of ${when} (Node ${run.node}, ${run.cpus} cores, load average ${run.loadAverage.toFixed(1)} as it started; ${run.rounds} round${run.rounds === 1 ? '' : 's'} of ${run.duration} s, ${run.connections} connections), saved in \`${SERVERS_FILE}\`:`,
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
      lines.push(`| ${label} | ${run.ratios[key]}${key === 'shareOfBareCeiling' ? '' : '×'} |`);
    if (cold.length)
      lines.push(
        `| cold start, launch to first answer (dist/) | ${cold[Math.floor(cold.length / 2)]} ms median (${cold[0]} – ${cold.at(-1)}) |`,
      );
  }
  return lines.join('\n');
}

/** `doc` with its figures block replaced by `figures`; throws when the page has no block. */
export function withServersFigures(doc: string, figures: string): string {
  const start = doc.indexOf(OPEN);
  const end = doc.indexOf(CLOSE);
  if (start < 0 || end < start) throw new Error(`no ${OPEN} … ${CLOSE} block in the page`);
  return `${doc.slice(0, start + OPEN.length)}\n${figures}\n${doc.slice(end)}`;
}

/** The block as the page holds it now. */
export function serversFiguresIn(doc: string): string | undefined {
  const start = doc.indexOf(OPEN);
  const end = doc.indexOf(CLOSE);
  return start < 0 || end < start ? undefined : doc.slice(start + OPEN.length, end).trim();
}
