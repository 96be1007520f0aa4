// npm run bench -- --growth [--sizes 10000,100000,1000000] [--store sqlite|postgres] [--concurrency 4]
// [--node-flags default] [--cpu-prof DIR] [--baseline DIR] [--save]: what the sandbox's costs do as its data grows. For each size a sandbox runs in
// a process of its own, with the Node flags `npm start` gives it, on a store holding that many settled
// card purchases over 30 days: a file in a temporary folder (written straight into SQLite in one
// transaction), or with --store postgres a new database on bench/postgres.ts's server (one INSERT …
// SELECT over generate_series, then ANALYZE), dropped afterwards. What is measured is the export, not
// how the rows came to be; on PostgreSQL the server's own memory and CPU are not in the figures. This process is the client: it asks for the settlement of
// all 30 days (one getSettlement, read chunk by chunk as a client saving the file would) while
// purchases (processCard, 4 at a time) keep coming, and the sandbox's process reports, for the export:
//   - export time: request sent to the last byte of the zip received (measured here);
//   - peak RSS delta: highest RSS sampled every 5 ms, minus RSS just before the export;
//   - retained: heap used after a full collection once the export is over, minus before (what the
//     export left behind, as opposed to the garbage it made along the way);
//   - longest event-loop block: perf_hooks monitorEventLoopDelay's max (wall time: on a shared
//     2-core machine it includes time the process was not scheduled at all);
//   - longest main-thread run: a 1 ms ticker's longest gap counted in the main thread's own CPU
//     time (process.threadCpuUsage), i.e. the work that held the loop, without the scheduler's share;
//   - purchase p50/p99: processCard answered during the export, send to answer (measured here).
//   - CPU: the sandbox's process's CPU time during the export, all threads (zlib's pool included);
//     with rows/s, what the export costs whatever else the machine runs.
// Targets (issue #20): peak memory flat across sizes, no block over 50 ms; (issue #31) 200,000 rows/s
// at 1,000,000 rows.
//
// --baseline DIR: a checkout of an earlier commit (`git clone` of this repository, checked out there,
// with this tree's node_modules linked in): each size is measured on its sandbox and on this tree's
// in turn, the same harness driving both, so that a shared machine's drift lands on both alike.
// --save keeps the run in bench/saved/growth-<store>.json and writes its table into docs/BENCHMARKS.md
// (bench/figures.ts): the guide's figures are a saved run's.
import { execFileSync, fork } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { buildRequest, operation } from '../contract/index.ts';
import type { createSandbox as CreateSandbox, SqliteStore, Store } from '../sandbox/index.ts';
import {
  type ExportServerSide as ServerSide,
  type GrowthRow,
  growthFigures,
  growthFile,
  type SavedGrowthRun,
  withFigures,
} from './figures.ts';
import { freshPostgresDatabase } from './postgres.ts';
import { merchant, purchaseBody } from './purchase.ts';
import { benchArgs } from './args.ts';

const { values: args } = benchArgs(import.meta.url, {
  options: {
    growth: { type: 'boolean' },
    sizes: { type: 'string', default: '10000,100000,1000000' },
    serve: { type: 'string' },
    concurrency: { type: 'string', default: '4' },
    'node-flags': { type: 'string' },
    store: { type: 'string', default: 'sqlite' },
    'cpu-prof': { type: 'string' },
    baseline: { type: 'string' },
    'sandbox-from': { type: 'string' },
    save: { type: 'boolean', default: false },
  },
});
if (args.store !== 'sqlite' && args.store !== 'postgres') throw new Error('--store is sqlite or postgres');
const DAYS = 30;
const day = (i: number) => `2026-10-${String(1 + i).padStart(2, '0')}`;
/**
 * The day of the i-th of `rows` rows: rows are stored day by day, in the order a store fills (a
 * transaction settles the business day after it is made), so a day's rows lie together in the table.
 * Spread round-robin over the 30 days instead, consecutive rows of the index sit 30 apart in the
 * table: PostgreSQL's index scan then read a 260 MB heap in random order through 128 MB of shared
 * buffers (9.3 s of the server's time for the 1,000,000 rows, against 1.2 s laid out day by day).
 */
const dayOf = (i: number, rows: number) => day(Math.floor((i * DAYS) / rows));
/**
 * The Node flags `npm start` runs the sandbox with (package.json). Without them V8 sizes its heap by
 * the allocation rate: a long export (garbage made as fast as rows are read) grew peak RSS by +72 to
 * +82 MB at 1,000,000 rows and +95 MB at 3,000,000, none of it retained. The young generation capped
 * at 8 MB a semi-space, and --optimize-for-size's slower heap growth, keep it at +39 and +46 MB, for
 * an export about 10 % slower (`--node-flags default` measures without them).
 */
const SANDBOX_NODE_FLAGS = args['node-flags'] === 'default' ? [] : ['--max-semi-space-size=8', '--optimize-for-size'];

type FromSandbox = { ready: { port: number; insertS: number } } | { measured: ServerSide };

if (args.serve) {
  await serve(Number(args.serve));
} else {
  const loadAverage = os.loadavg()[0]!;
  const results: GrowthRow[] = [];
  for (const size of args.sizes!.split(',').map(Number)) {
    if (args.baseline) {
      results.push(await measure(size, 'baseline'));
      console.error(`${size} rows done on the baseline`);
    }
    results.push(await measure(size, 'this'));
    console.error(`${size} rows done`);
  }
  const run: SavedGrowthRun = {
    date: new Date().toISOString(),
    node: process.version,
    cpus: os.cpus().length,
    loadAverage: +loadAverage.toFixed(2),
    store: args.store,
    nodeFlags: SANDBOX_NODE_FLAGS,
    concurrency: Number(args.concurrency),
    ...(args.baseline && {
      baseline: execFileSync('git', ['-C', args.baseline, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim(),
    }),
    rows: results,
  };
  const figures = growthFigures(run);
  console.log(figures);
  if (args.save) {
    const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
    writeFileSync(path.join(root, growthFile(run.store)), `${JSON.stringify(run, null, 2)}\n`);
    const page = path.join(root, 'docs/BENCHMARKS.md');
    writeFileSync(page, withFigures(readFileSync(page, 'utf8'), `growth-${run.store}`, figures));
    console.log(`\nsaved in ${growthFile(run.store)}; its table written into docs/BENCHMARKS.md`);
  }
}

/** The client's side: starts the sandbox's process for `rows`, loads it during one export, collects both sides' figures. */
async function measure(rows: number, sandbox: GrowthRow['sandbox']): Promise<GrowthRow> {
  const serveArgs = ['--serve', String(rows), '--store', args.store!];
  if (sandbox === 'baseline') serveArgs.push('--sandbox-from', path.resolve(args.baseline!));
  const child = fork(fileURLToPath(import.meta.url), serveArgs, {
    execArgv: [
      ...SANDBOX_NODE_FLAGS,
      '--expose-gc',
      // --cpu-prof DIR: a CPU profile of the sandbox's process (Node refuses the flag in NODE_OPTIONS).
      ...(args['cpu-prof'] ? ['--cpu-prof', `--cpu-prof-dir=${args['cpu-prof']}`] : []),
    ],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const messages: FromSandbox[] = [];
  let wake = () => {};
  child.on('message', (m) => {
    messages.push(m as FromSandbox);
    wake();
  });
  const next = async <K extends 'ready' | 'measured'>(key: K): Promise<Extract<FromSandbox, Record<K, unknown>>[K]> => {
    for (;;) {
      const i = messages.findIndex((m) => key in m);
      if (i >= 0) return (messages.splice(i, 1)[0] as unknown as Record<K, never>)[key];
      if (child.exitCode !== null) throw new Error(`the sandbox for ${rows} rows exited with ${child.exitCode}`);
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, 1000);
      });
    }
  };
  try {
    const { port, insertS } = await next('ready');
    const base = `http://127.0.0.1:${port}`;
    const call = async (operationId: string, body: Record<string, unknown>): Promise<Response> => {
      const r = buildRequest(operation(operationId), { body, signBody: true });
      return fetch(base + r.url, {
        method: r.verb,
        headers: r.headers as Record<string, string>,
        body: r.body as string,
      }).catch((error: Error) => {
        throw new Error(`${operationId} to the sandbox failed: ${error.message} (${String(error.cause ?? '')})`);
      });
    };

    // Warm up: the purchase path compiled and its statements prepared before anything is measured.
    for (let i = 0; i < 50; i++) await (await call('processCard', purchaseBody)).arrayBuffer();

    child.send('start');
    await new Promise((r) => setTimeout(r, 300)); // the sandbox's samplers running, its heap collected
    let exporting = true;
    const latencies: number[] = [];
    const buyer = async () => {
      while (exporting) {
        const t = performance.now();
        const json = (await (await call('processCard', purchaseBody)).json()) as { responseCode: string };
        if (json.responseCode !== '0') throw new Error(`purchase refused during the export: ${JSON.stringify(json)}`);
        if (exporting) latencies.push(performance.now() - t);
      }
    };
    const buyers = Array.from({ length: Number(args.concurrency) }, buyer);
    const t1 = performance.now();
    const answer = await call('getSettlement', {
      method: 'getSettlement',
      ...merchant,
      settlementFrom: day(0),
      settlementTo: `2026-10-${DAYS}`,
      hash: 'x',
    });
    let zipBytes = 0;
    const reader = answer.body!.getReader();
    try {
      for (let part = await reader.read(); !part.done; part = await reader.read()) zipBytes += part.value.byteLength;
    } catch (error) {
      throw new Error(`the export broke off after ${zipBytes} bytes: ${(error as Error).message}`);
    }
    const exportMs = performance.now() - t1;
    exporting = false;
    // The purchases in flight answered before the sandbox is told to stop: it closes its server and
    // exits once it has reported, and a purchase still in flight then would end in a reset.
    await Promise.all(buyers);
    child.send('stop');
    const measured = await next('measured');
    // The sandbox exits once it has dropped its database and removed its file (and written its
    // profile): let it, rather than kill it first and leave a 300 MB file in the temporary folder.
    if (child.exitCode === null) await Promise.race([once(child, 'exit'), new Promise((r) => setTimeout(r, 60_000))]);
    if (answer.status !== 200 || zipBytes < 100)
      throw new Error(`getSettlement answered ${answer.status}, ${zipBytes} bytes`);
    latencies.sort((a, b) => a - b);
    const pct = (p: number) =>
      latencies[Math.min(latencies.length - 1, Math.floor((latencies.length * p) / 100))] ?? NaN;
    console.error(`${sandbox}: ${rows} rows inserted in ${insertS.toFixed(1)} s`);
    return { sandbox, rows, exportMs, zipBytes, ...measured, purchases: latencies.length, p50: pct(50), p99: pct(99) };
  } finally {
    child.kill();
  }
}

/** The sandbox's process: the store filled, the server listening, its own costs sampled between 'start' and 'stop'. */
async function serve(rows: number): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pgw-growth-'));
  const database = args.store === 'postgres' ? await freshPostgresDatabase(`growth_${rows}`) : undefined;
  // The baseline's sandbox (--baseline), driven by this harness: only the code measured differs.
  const { createSandbox }: { createSandbox: typeof CreateSandbox } = await import(
    args['sandbox-from'] ? path.join(args['sandbox-from'], 'sandbox/index.ts') : '../sandbox/index.ts'
  );
  const sb = await createSandbox({
    dbPath: database?.url ?? path.join(dir, 'growth.db'),
    env: {},
    fetch: (async () => new Response(null, { status: 204 })) as typeof fetch,
    // What the server logs (a failed stream, a violation) is what explains a failed measurement.
    logger: { warn: (m, f) => console.error(m, f ?? ''), error: (m, f) => console.error(m, f ?? '') },
  });
  // Rows that differ as real ones do (amounts, references, card types, a void now and then) so that
  // the zip compresses as a real file would.
  const t0 = performance.now();
  if (database) await insertPostgres(sb.store, rows);
  else await insertSqlite(sb.store as SqliteStore, rows);
  const insertS = (performance.now() - t0) / 1000;
  // A store that grew over weeks has had its write-ahead log checkpointed all along; one transaction
  // of a million rows leaves it all pending, and the first commit during the export would copy
  // 150 MB back in one synchronous step (a 100 ms block that is this set-up's, not the export's).
  if (!database) (sb.store as SqliteStore).database.db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
  const server = sb.server();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  process.send!({ ready: { port: (server.address() as AddressInfo).port, insertS } });

  await once(process, 'message');
  global.gc!();
  const before = process.memoryUsage();
  const peak = { rss: before.rss, heap: before.heapUsed, buffers: before.arrayBuffers };
  const sampler = setInterval(() => {
    const now = process.memoryUsage();
    peak.rss = Math.max(peak.rss, now.rss);
    peak.heap = Math.max(peak.heap, now.heapUsed);
    peak.buffers = Math.max(peak.buffers, now.arrayBuffers);
  }, 5);
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  const cpuBefore = process.cpuUsage();
  let lastCpu = process.threadCpuUsage();
  let maxRunCpuMs = 0;
  const ticker = setInterval(() => {
    const cpu = process.threadCpuUsage();
    maxRunCpuMs = Math.max(maxRunCpuMs, (cpu.user + cpu.system - lastCpu.user - lastCpu.system) / 1000);
    lastCpu = cpu;
  }, 1);

  await once(process, 'message');
  const cpu = process.cpuUsage(cpuBefore);
  delay.disable();
  clearInterval(sampler);
  clearInterval(ticker);
  global.gc!();
  const after = process.memoryUsage();
  const mb = (bytes: number) => bytes / 1e6;
  process.send!({
    measured: {
      rssBeforeMb: mb(before.rss),
      rssDeltaMb: mb(peak.rss - before.rss),
      heapDeltaMb: mb(peak.heap - before.heapUsed),
      buffersDeltaMb: mb(peak.buffers - before.arrayBuffers),
      retainedMb: mb(after.heapUsed - before.heapUsed),
      maxBlockMs: delay.max / 1e6,
      maxRunCpuMs,
      cpuMs: (cpu.user + cpu.system) / 1000,
    },
  });
  server.close();
  await sb.close();
  await database?.drop();
  rmSync(dir, { recursive: true, force: true });
  process.disconnect();
}

/** Bulk insert into SQLite: one prepared statement, one transaction. */
async function insertSqlite(store: SqliteStore, rows: number): Promise<void> {
  const db = store.database.db;
  await store.transaction(async () => {
    const insert =
      db.prepare(`INSERT INTO transactions (id, merchant_id, kind, status, response_code, response_message, amount, captured, currency, reference, product, card_type, masked_pan, expiry_month, expiry_year, auth_code, auth_response_code, auth_message, receipt_no, settled_date, custom, created_at)
      VALUES (?, ?, 'purchase', ?, 0, 'Transaction approved', ?, ?, 'AUD', ?, ?, ?, ?, '02', '29', ?, '00', 'Approved', ?, ?, '[]', ?)`);
    const types = ['visa', 'mastercard', 'amex'];
    const pans = ['456471XXXXXX0004', '555555XXXXXX4444', '378282XXXXX0005'];
    for (let i = 0; i < rows; i++) {
      const amount = 100 + ((i * 7919) % 500_000);
      insert.run(
        `G${String(i).padStart(8, '0')}`,
        merchant.merchantUUID,
        i % 97 ? 'approved' : 'void',
        amount,
        amount,
        `ORDER-${i}`,
        `Product ${i % 40}`,
        types[i % 3]!,
        pans[i % 3]!,
        String(100000 + (i % 899999)),
        String(100000000 + i),
        dayOf(i, rows),
        `${dayOf(i, rows)} 10:00:00`,
      );
    }
  });
}

/** The same rows (days in the same order as dayOf) made by PostgreSQL itself: one INSERT … SELECT over generate_series, then ANALYZE. */
async function insertPostgres(store: Store, rows: number): Promise<void> {
  await store.run(
    `INSERT INTO transactions (id, merchant_id, kind, status, response_code, response_message, amount, captured, currency, reference, product, card_type, masked_pan, expiry_month, expiry_year, auth_code, auth_response_code, auth_message, receipt_no, settled_date, custom, created_at)
     SELECT 'G' || lpad(i::text, 8, '0'), ?, 'purchase', CASE WHEN i % 97 = 0 THEN 'void' ELSE 'approved' END, 0,
       'Transaction approved', 100 + (i::bigint * 7919) % 500000, 100 + (i::bigint * 7919) % 500000, 'AUD',
       'ORDER-' || i, 'Product ' || (i % 40), (ARRAY['visa', 'mastercard', 'amex'])[i % 3 + 1],
       (ARRAY['456471XXXXXX0004', '555555XXXXXX4444', '378282XXXXX0005'])[i % 3 + 1], '02', '29',
       (100000 + i % 899999)::text, '00', 'Approved', (100000000 + i)::text, d, '[]', d || ' 10:00:00'
     FROM generate_series(0, ? - 1) AS i, LATERAL (SELECT '2026-10-' || lpad((1 + i::bigint * ${DAYS} / ?)::text, 2, '0') AS d) AS day`,
    merchant.merchantUUID,
    rows,
    rows,
  );
  await store.run('ANALYZE transactions');
}
