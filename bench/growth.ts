// npm run bench -- --growth [--sizes 10000,100000,1000000] [--store sqlite|postgres] [--concurrency 4]
// [--node-flags default]: what the sandbox's costs do as its data grows. For each size a sandbox runs in
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
// Targets (issue #20): peak memory flat across sizes, no block over 50 ms.
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { buildRequest, operation } from '../contract/index.ts';
import { createSandbox, type SqliteStore, type Store } from '../sandbox/index.ts';
import { freshPostgresDatabase } from './postgres.ts';
import { merchant, purchaseBody } from './purchase.ts';

const { values: args } = parseArgs({
  options: {
    growth: { type: 'boolean' },
    sizes: { type: 'string', default: '10000,100000,1000000' },
    serve: { type: 'string' },
    concurrency: { type: 'string', default: '4' },
    'node-flags': { type: 'string' },
    store: { type: 'string', default: 'sqlite' },
  },
});
if (args.store !== 'sqlite' && args.store !== 'postgres') throw new Error('--store is sqlite or postgres');
const DAYS = 30;
const day = (i: number) => `2026-10-${String(1 + (i % DAYS)).padStart(2, '0')}`;
/**
 * The Node flags `npm start` runs the sandbox with (package.json). Without them V8 sizes its heap by
 * the allocation rate: a long export (garbage made as fast as rows are read) grew peak RSS by +72 to
 * +82 MB at 1,000,000 rows and +95 MB at 3,000,000, none of it retained. The young generation capped
 * at 8 MB a semi-space, and --optimize-for-size's slower heap growth, keep it at +39 and +46 MB, for
 * an export about 10 % slower (`--node-flags default` measures without them).
 */
const SANDBOX_NODE_FLAGS = args['node-flags'] === 'default' ? [] : ['--max-semi-space-size=8', '--optimize-for-size'];

/** What the sandbox's process measures of itself during the export. */
interface ServerSide {
  rssBeforeMb: number;
  rssDeltaMb: number;
  heapDeltaMb: number;
  buffersDeltaMb: number;
  retainedMb: number;
  maxBlockMs: number;
  maxRunCpuMs: number;
}

interface Result extends ServerSide {
  rows: number;
  insertS: number;
  exportMs: number;
  zipBytes: number;
  purchases: number;
  p50: number;
  p99: number;
}

type FromSandbox = { ready: { port: number; insertS: number } } | { measured: ServerSide };

if (args.serve) {
  await serve(Number(args.serve));
} else {
  const results: Result[] = [];
  for (const size of args.sizes!.split(',').map(Number)) {
    results.push(await measure(size));
    console.error(`${size} rows done`);
  }
  console.log(
    `store ${args.store}; node ${process.version}, ${os.cpus().length} cores (${os.cpus()[0]?.model}), sandbox run with [${SANDBOX_NODE_FLAGS.join(' ')}], ${args.concurrency} purchases in flight during each export\n`,
  );
  console.log(
    '| settled rows | export | zip | peak RSS delta (RSS before) | peak JS heap / buffers delta | retained after GC | longest event-loop block (wall) | longest main-thread run (CPU) | purchases during export | purchase p50 / p99 |',
  );
  console.log('|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  const ms = (n: number) => (Number.isFinite(n) ? `${n.toFixed(1)} ms` : '–');
  for (const r of results) {
    console.log(
      `| ${r.rows.toLocaleString('en')} | ${r.exportMs.toFixed(0)} ms | ${(r.zipBytes / 1e6).toFixed(1)} MB | +${r.rssDeltaMb.toFixed(0)} MB (${r.rssBeforeMb.toFixed(0)} MB) | +${r.heapDeltaMb.toFixed(0)} / +${r.buffersDeltaMb.toFixed(0)} MB | ${r.retainedMb >= 0 ? '+' : ''}${r.retainedMb.toFixed(1)} MB | ${r.maxBlockMs.toFixed(1)} ms | ${r.maxRunCpuMs.toFixed(1)} ms | ${r.purchases} | ${ms(r.p50)} / ${ms(r.p99)} |`,
    );
  }
}

/** The client's side: starts the sandbox's process for `rows`, loads it during one export, collects both sides' figures. */
async function measure(rows: number): Promise<Result> {
  const child = fork(fileURLToPath(import.meta.url), ['--serve', String(rows), '--store', args.store!], {
    execArgv: [...SANDBOX_NODE_FLAGS, '--expose-gc'],
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
    child.send('stop');
    const measured = await next('measured');
    await Promise.all(buyers);
    if (answer.status !== 200 || zipBytes < 100)
      throw new Error(`getSettlement answered ${answer.status}, ${zipBytes} bytes`);
    latencies.sort((a, b) => a - b);
    const pct = (p: number) =>
      latencies[Math.min(latencies.length - 1, Math.floor((latencies.length * p) / 100))] ?? NaN;
    return { rows, insertS, exportMs, zipBytes, ...measured, purchases: latencies.length, p50: pct(50), p99: pct(99) };
  } finally {
    child.kill();
  }
}

/** The sandbox's process: the store filled, the server listening, its own costs sampled between 'start' and 'stop'. */
async function serve(rows: number): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pgw-growth-'));
  const database = args.store === 'postgres' ? await freshPostgresDatabase(`growth_${rows}`) : undefined;
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
  let lastCpu = process.threadCpuUsage();
  let maxRunCpuMs = 0;
  const ticker = setInterval(() => {
    const cpu = process.threadCpuUsage();
    maxRunCpuMs = Math.max(maxRunCpuMs, (cpu.user + cpu.system - lastCpu.user - lastCpu.system) / 1000);
    lastCpu = cpu;
  }, 1);

  await once(process, 'message');
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
        day(i),
        `${day(i)} 10:00:00`,
      );
    }
  });
}

/** The same rows made by PostgreSQL itself: one INSERT … SELECT over generate_series, then ANALYZE. */
async function insertPostgres(store: Store, rows: number): Promise<void> {
  await store.run(
    `INSERT INTO transactions (id, merchant_id, kind, status, response_code, response_message, amount, captured, currency, reference, product, card_type, masked_pan, expiry_month, expiry_year, auth_code, auth_response_code, auth_message, receipt_no, settled_date, custom, created_at)
     SELECT 'G' || lpad(i::text, 8, '0'), ?, 'purchase', CASE WHEN i % 97 = 0 THEN 'void' ELSE 'approved' END, 0,
       'Transaction approved', 100 + (i::bigint * 7919) % 500000, 100 + (i::bigint * 7919) % 500000, 'AUD',
       'ORDER-' || i, 'Product ' || (i % 40), (ARRAY['visa', 'mastercard', 'amex'])[i % 3 + 1],
       (ARRAY['456471XXXXXX0004', '555555XXXXXX4444', '378282XXXXX0005'])[i % 3 + 1], '02', '29',
       (100000 + i % 899999)::text, '00', 'Approved', (100000000 + i)::text, d, '[]', d || ' 10:00:00'
     FROM generate_series(0, ? - 1) AS i, LATERAL (SELECT '2026-10-' || lpad((1 + i % ${DAYS})::text, 2, '0') AS d) AS day`,
    merchant.merchantUUID,
    rows,
  );
  await store.run('ANALYZE transactions');
}
