// npm run bench -- --store sqlite|postgres --instances 1,2,3 [--duration 10] [--connections 24]:
// a deployment of N sandbox processes (sandbox/main.ts, as `npm start` runs them) on one database,
// with a mix of a write and a read: processCard (a purchase: one transaction that inserts) and
// queryCard (a read of a purchase another instance stored). Each instance count is measured on a new
// database after a 3 s warm-up; reported: throughput, p50 and p99, non-2xx answers and errors, and
// where the CPU went (each instance, the load generator, the whole machine).
//
// The load is spread client-side, round-robin: autocannon takes the instances' URLs and gives its
// connections to them in turn (24 connections: 24, 12 or 8 per instance), as a load balancer without
// stickiness would; there is no proxy in front, so its cost is not measured.
//
// --store sqlite: one SQLite file shared by the processes (WAL; a writer takes the file's lock with
// BEGIN IMMEDIATE and the others wait, busy_timeout 5 s). --store postgres: a new database for each
// instance count on the server of PGW_BENCH_DATABASE_URL, else PGW_TEST_DATABASE_URL, else
// scripts/postgres/ensure.sh's, dropped afterwards.
//
// The load generator, the instances and (for postgres) the database server share this machine's
// cores: instances beyond the core count add contention, not capacity. The figures say what this
// machine does, not what a deployment with a core per instance would.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { buildRequest, operation } from '../contract/index.ts';
import { freshPostgresDatabase, onServer } from './postgres.ts';
import { merchant, purchaseBody } from './purchase.ts';

const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const { values: args } = parseArgs({
  options: {
    store: { type: 'string', default: 'sqlite' },
    instances: { type: 'string', default: '1' },
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '24' },
  },
});
const counts = args.instances!.split(',').map(Number);
if (args.store !== 'sqlite' && args.store !== 'postgres') throw new Error('--store is sqlite or postgres');
if (counts.some((n) => !Number.isInteger(n) || n < 1))
  throw new Error('--instances is a list of instance counts, e.g. 1,2,3');

function signed(operationId: string, body: Record<string, unknown>) {
  const op = operation(operationId);
  const r = buildRequest(op, { body, signBody: true });
  return {
    method: r.verb as 'POST',
    path: r.url,
    headers: r.headers as Record<string, string>,
    body: r.body as string,
  };
}
const purchase = signed('processCard', purchaseBody);
/** A read of a transaction the deployment stored (queryCard), made once its first purchase is known. */
const query = (transactionID: string) =>
  signed('queryCard', { method: 'queryCard', ...merchant, transactionID, hash: 'x' });

/**
 * The process ids of the PostgreSQL backends serving `name` when the server runs on this machine
 * (its backends are then in /proc): their CPU is the database's share of the work.
 */
async function backends(name: string): Promise<number[]> {
  const rows = await onServer<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = $1', [name]);
  return rows.map((r) => r.pid).filter((pid) => existsSync(`/proc/${pid}/stat`));
}

/** A new, empty database for one measurement: what PGW_DB says, and how to drop it. */
async function freshDatabase(n: number, dir: string): Promise<{ url: string; name?: string; drop(): Promise<void> }> {
  if (args.store === 'sqlite') return { url: path.join(dir, `bench-${n}.db`), drop: async () => {} };
  return freshPostgresDatabase(String(n));
}

interface Instance {
  child: ChildProcess;
  url: string;
}

function startInstance(db: string, key: string): Promise<Instance> {
  const child = spawn(
    path.join(ROOT, 'node_modules/.bin/node'),
    [path.join(ROOT, 'sandbox/main.ts'), '--port', '0', '--quiet'],
    {
      env: { ...process.env, PGW_DB: db, PGW_SANDBOX_DATA_KEY: key, NODE_ENV: 'production' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  return new Promise((resolve, reject) => {
    let out = '';
    const read = (chunk: Buffer) => {
      out += chunk;
      const m = /sandbox on (http:\/\/[^\s]+)/.exec(out);
      if (m) resolve({ child, url: m[1]! });
    };
    child.stdout!.on('data', read);
    child.stderr!.on('data', (chunk: Buffer) => (out += chunk));
    child.on('exit', (code) => reject(new Error(`a sandbox instance exited with ${code}: ${out.trim()}`)));
  });
}

const stopped = (i: Instance) =>
  new Promise<void>((resolve) => {
    if (i.child.exitCode !== null || i.child.signalCode !== null) return resolve();
    i.child.once('exit', () => resolve());
    i.child.kill('SIGKILL');
  });

async function send(url: string, r: ReturnType<typeof signed>): Promise<Record<string, string>> {
  const answer = await fetch(url + r.path, { method: r.method, headers: r.headers, body: r.body });
  const json = (await answer.json()) as Record<string, string>;
  if (json.responseCode !== '0') throw new Error(`${url}${r.path}: ${JSON.stringify(json)}`);
  return json;
}

// CPU time from /proc (Linux): a process's user+system ticks, and the machine's busy and total ticks.
const TICK_MS = 10; // USER_HZ is 100 on Linux
const processTicks = (pid: number) => {
  if (!existsSync(`/proc/${pid}/stat`)) return 0; // a backend that ended since
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return Number(fields[11]) + Number(fields[12]);
};
const machineTicks = () => {
  const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const idle = cpu[3]! + cpu[4]!;
  const total = cpu.reduce((a, b) => a + b, 0);
  return { busy: total - idle, total };
};

// autocannon takes several URLs and spreads its connections over them; its types say one string.
const load = (urls: string[], seconds: number, read: ReturnType<typeof signed>) =>
  autocannon({
    url: urls as unknown as string,
    connections: Number(args.connections),
    duration: seconds,
    requests: [purchase, read],
  });

const dir = mkdtempSync(path.join(os.tmpdir(), 'pgw-deploy-'));
const rows: {
  n: number;
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  instancesCpu: number[];
  cpuPerRequest: number;
  loaderCpu: number;
  databaseCpu: number | undefined;
  machineCpu: number;
}[] = [];
try {
  for (const n of counts) {
    const db = await freshDatabase(n, dir);
    const key = randomBytes(32).toString('base64');
    // The first instance makes the schema; the others then start on it.
    const instances: Instance[] = [];
    try {
      instances.push(await startInstance(db.url, key));
      // Every instance that did start is stopped in `finally`, even when another failed to.
      const started = await Promise.allSettled(Array.from({ length: n - 1 }, () => startInstance(db.url, key)));
      for (const s of started) if (s.status === 'fulfilled') instances.push(s.value);
      const failed = started.find((s) => s.status === 'rejected');
      if (failed) throw failed.reason;
      // Every instance sells, and reads what another one sold: one database behind them all.
      const sold = await send(instances[0]!.url, purchase);
      for (const i of instances) await send(i.url, query(sold.transactionID!));
      const read = query(sold.transactionID!);
      const urls = instances.map((i) => i.url);
      await load(urls, 3, read);
      const database = db.name ? await backends(db.name) : [];
      const before = {
        instances: instances.map((i) => processTicks(i.child.pid!)),
        database: database.map(processTicks),
        loader: process.cpuUsage(),
        machine: machineTicks(),
      };
      const r = await load(urls, Number(args.duration), read);
      const seconds = Number(args.duration);
      const loader = process.cpuUsage(before.loader);
      const machine = machineTicks();
      const cores = os.cpus().length;
      const ticks = instances.map((i, k) => processTicks(i.child.pid!) - before.instances[k]!);
      const databaseTicks = database.reduce((sum, pid, k) => sum + processTicks(pid) - before.database[k]!, 0);
      rows.push({
        n,
        rps: Math.round(r.requests.average),
        p50: r.latency.p50,
        p99: r.latency.p99,
        non2xx: r.non2xx,
        errors: r.errors,
        // Per cent of one core.
        instancesCpu: ticks.map((t) => Math.round((t * TICK_MS) / (seconds * 10))),
        // The instances' CPU time per answered request: the cost that the machine's load does not change.
        cpuPerRequest: (ticks.reduce((a, b) => a + b, 0) * TICK_MS) / r.requests.total,
        loaderCpu: Math.round((loader.user + loader.system) / 1000 / (seconds * 10)),
        databaseCpu: database.length ? Math.round((databaseTicks * TICK_MS) / (seconds * 10)) : undefined,
        // Per cent of all cores, everything on the machine (other users' work included).
        machineCpu: Math.round(((machine.busy - before.machine.busy) / (machine.total - before.machine.total)) * 100),
      });
      console.error(
        `${n} instance(s): ${Math.round(r.requests.average)} req/s, p99 ${r.latency.p99} ms (${cores} cores)`,
      );
    } finally {
      await Promise.all(instances.map(stopped));
      await db.drop();
    }
  }
} catch (error) {
  // One line (an instance's own refusal, a database that cannot be made), not a stack.
  console.error(`bench: ${error instanceof Error ? error.message : String(error)}`);
  rmSync(dir, { recursive: true, force: true });
  process.exit(1); // bench/run.ts ends with exit(0) once this module is done
} finally {
  rmSync(dir, { recursive: true, force: true });
}
console.log(
  `store ${args.store}${args.store === 'sqlite' ? ' (one file shared by the instances)' : ''}; mix processCard + queryCard, ${args.connections} connections spread round-robin over the instances by the load generator, ${args.duration} s after a 3 s warm-up; node ${process.version}, ${os.cpus().length} cores shared by the load generator, the instances${args.store === 'postgres' ? ' and PostgreSQL' : ''}`,
);
console.log(
  `CPU: % of one core for each instance, the load generator (autocannon, in this process)${args.store === 'postgres' ? ' and the PostgreSQL backends serving the database (when the server is on this machine)' : ''}; machine: % of all cores busy, other processes included\n`,
);
const pgColumn = args.store === 'postgres';
console.log(
  `| instances | req/s | p50 | p99 | non-2xx | errors | CPU per instance | instances' CPU per request | load generator |${pgColumn ? ' PostgreSQL |' : ''} machine busy |`,
);
console.log(`|---:|---:|---:|---:|---:|---:|---|---:|---:|${pgColumn ? '---:|' : ''}---:|`);
for (const r of rows)
  console.log(
    `| ${r.n} | ${r.rps} | ${r.p50} ms | ${r.p99} ms | ${r.non2xx} | ${r.errors} | ${r.instancesCpu.map((c) => `${c} %`).join(', ')} | ${r.cpuPerRequest.toFixed(2)} ms | ${r.loaderCpu} % |${pgColumn ? ` ${r.databaseCpu === undefined ? 'not local' : `${r.databaseCpu} %`} |` : ''} ${r.machineCpu} % |`,
  );
