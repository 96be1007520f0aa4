// Figures the guides state in their prose that come from the code, the spec or a saved run: each as
// the sentence the guide must hold, made from where the figure lives (never typed twice). The guides'
// tables of generated figures are rendered blocks (docs/BENCHMARKS.md, docs/TOOLS.md, the sandbox's
// facts); these are the figures inside sentences. test/docs/guide-figures.test.ts holds each page to
// them; a figure that changes in the code fails it until the guide says the new one.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { DEFAULT_TIMEOUT_MS } from '../../runtime/client.ts';
import { MAX_BATCH_CSV_BYTES, MAX_BATCH_LINE_CHARS, MAX_BATCH_LINES } from '../../sandbox/handlers/batch.ts';
import { PAGE_ROWS } from '../../sandbox/handlers/settlement.ts';
import { RAIL_MS } from '../../sandbox/payout-attempts.ts';
import { POOL_WAIT_MS } from '../../sandbox/store-postgres.ts';
import { DEFAULT_WAITS, WAIT_ENV } from '../../sandbox/waits.ts';
import { MAX_DEPTH } from '../../runtime/protocols/json.ts';
import { MAX_FIELDS } from '../../runtime/protocols/protocol.ts';
import { serverDefaults } from '../../server-stubs/index.ts';
import { doc, operations, ROOT } from './contract.ts';

export interface GuideFigure {
  page: string;
  /** The sentence (or table cell) the page must hold, its figure made from `source`. */
  says: string;
  source: string;
}

const MiB = 1024 * 1024;
const thousands = (n: number, separator = ',') => n.toLocaleString('en-US').replace(/,/g, separator);
const largestBody = () => {
  const op = operations.find((o) => o.maxBodyBytes !== undefined && o.maxBodyBytes > doc['x-limits'].maxBodyBytes);
  if (!op) throw new Error('no operation takes more than x-limits.maxBodyBytes');
  return { op: op.operationId, mib: op.maxBodyBytes! / MiB };
};

/** The latest saved settlement export of the most rows (bench/saved/growth-sqlite.json): the figure DEPLOY.md quotes. */
function savedExport(): { rows: number; seconds: string } {
  const run = JSON.parse(readFileSync(path.join(ROOT, 'bench/saved/growth-sqlite.json'), 'utf8'));
  const ours = run.rows.filter((r: { sandbox?: string }) => r.sandbox !== 'baseline');
  const biggest = ours.reduce((a: { rows: number }, b: { rows: number }) => (b.rows > a.rows ? b : a));
  return { rows: biggest.rows, seconds: (biggest.exportMs / 1000).toFixed(1) };
}

export function guideFigures(): GuideFigure[] {
  const limit = doc['x-limits'].maxBodyBytes / MiB;
  const batch = largestBody();
  const exported = savedExport();
  const server = serverDefaults;
  return [
    ...(Object.keys(WAIT_ENV) as (keyof typeof WAIT_ENV)[]).map((key) => ({
      page: 'docs/DEPLOY.md',
      says: `| \`${WAIT_ENV[key]}\` | ${DEFAULT_WAITS[key]} |`,
      source: `sandbox/waits.ts DEFAULT_WAITS.${key}`,
    })),
    {
      page: 'docs/DEPLOY.md',
      says: `A DE attempt stays pending ${RAIL_MS.DE / 3_600_000} hours of sandbox time`,
      source: 'sandbox/payout-attempts.ts RAIL_MS.DE',
    },
    {
      page: 'docs/DEPLOY.md',
      says: `| a body nesting deeper than ${MAX_DEPTH} levels, whatever its size |`,
      source: 'runtime/protocols/json.ts MAX_DEPTH',
    },
    {
      page: 'docs/DEPLOY.md',
      says: `| a body holding more than ${MAX_FIELDS} fields and list items, at any depth, JSON or form |`,
      source: 'runtime/protocols/protocol.ts MAX_FIELDS',
    },
    {
      page: 'docs/DEPLOY.md',
      says: `| a batch line longer than ${MAX_BATCH_LINE_CHARS} characters |`,
      source: 'sandbox/handlers/batch.ts MAX_BATCH_LINE_CHARS',
    },
    {
      page: 'docs/DEPLOY.md',
      says: `over the operation's limit: ${limit} MiB, ${batch.mib} MiB for ${batch.op}`,
      source: `the spec's x-limits.maxBodyBytes and ${batch.op}'s maxBodyBytes`,
    },
    {
      page: 'docs/SERVER-STUBS.md',
      says: `a body over the limit (${limit} MiB; ${batch.mib} MiB on \`/post\` for ${batch.op})`,
      source: `the spec's x-limits.maxBodyBytes and ${batch.op}'s maxBodyBytes`,
    },
    {
      page: 'docs/WIRE-FORMATS.md',
      says: `the size limits are the JSON mode's (${limit} MiB; 413 beyond)`,
      source: "the spec's x-limits.maxBodyBytes",
    },
    {
      page: 'docs/DEPLOY.md',
      says: `headers within ${server.headersTimeout / 1000} s, the whole request within ${server.requestTimeout / 1000} s`,
      source: 'server-stubs serverDefaults',
    },
    {
      page: 'docs/DEPLOY.md',
      says: `idle keep-alive ${server.keepAliveTimeout / 1000} s`,
      source: 'server-stubs serverDefaults.keepAliveTimeout',
    },
    {
      page: 'docs/DEPLOY.md',
      says: `A streamed answer (the settlement zip) whose client takes none of it for ${server.answerStallTimeout / 1000} s`,
      source: 'server-stubs serverDefaults.answerStallTimeout',
    },
    {
      page: 'docs/DEPLOY.md',
      says: `up to \`PGW_DB_POOL_WAIT_MS\` (${POOL_WAIT_MS} ms by default)`,
      source: 'sandbox/store-postgres.ts POOL_WAIT_MS',
    },
    {
      page: 'docs/DEPLOY.md',
      says: `a request waits up to \`PGW_DB_POOL_WAIT_MS\` (${POOL_WAIT_MS} by default, whole milliseconds)`,
      source: 'sandbox/store-postgres.ts POOL_WAIT_MS',
    },
    {
      page: 'docs/DEPLOY.md',
      says: `Settlement files** are read a page of ${PAGE_ROWS} rows at a time`,
      source: 'sandbox/handlers/settlement.ts PAGE_ROWS',
    },
    {
      page: 'docs/DEPLOY.md',
      says: `at most ${server.maxConnections} connections`,
      source: 'server-stubs serverDefaults.maxConnections',
    },
    {
      page: 'docs/DEPLOY.md',
      says: `default \`maxConnections / 2\` = ${server.maxConnections / 2}`,
      source: 'server-stubs serverDefaults.maxConnections',
    },
    {
      page: 'docs/DEPLOY.md',
      says: `once its CSV passes ${MAX_BATCH_CSV_BYTES / MiB} MiB; at most ${thousands(MAX_BATCH_LINES)} lines`,
      source: 'sandbox/handlers/batch.ts MAX_BATCH_CSV_BYTES, MAX_BATCH_LINES',
    },
    {
      page: 'docs/DEPLOY.md',
      says: `(${exported.seconds} s for ${thousands(exported.rows)} rows in the saved run,`,
      source: 'bench/saved/growth-sqlite.json (npm run bench -- --growth --save)',
    },
    {
      page: 'docs/CLIENT-TEAMS.md',
      says: `\`timeoutMs\` (option; ${thousands(DEFAULT_TIMEOUT_MS, ' ')} by default`,
      source: 'runtime/client.ts DEFAULT_TIMEOUT_MS',
    },
  ];
}

/** A page's text as a reader reads it: each run of white space one space (prose wraps anywhere). */
export const prose = (text: string) => text.replace(/\s+/g, ' ');
