// npm run bench -- --store sqlite|postgres --instances 1,2,3 [--duration 10] [--connections 24]
//   [--rounds 3] [--peers stubs,mock|none] [--cpu-prof DIR] [--save]:
// a deployment of N sandbox processes (sandbox/main.ts, as `npm start` runs them) on one database,
// with a mix of a write and a read: processCard (a purchase: one transaction that inserts) and
// queryCard (a read of a purchase another instance stored). Each instance count is measured on a new
// database after a 3 s warm-up; reported: throughput, p50 and p99, non-2xx answers and errors, and
// the CPU each request costs: the instances' and the database's (PostgreSQL's backends, from /proc),
// turned into requests a second per core, the figure that sizes a shared deployment.
//
// Beside it, in the same run and on the same mix, the peers a team compares the sandbox with: this
// package's validating server with a trivial handler (bench/servers/stubs.ts: what the sandbox's
// store and logic add to it) and the Prism mock (mock/run.ts: the front and Prism, each its process).
// Every target takes its turn in each round and is reported by its median round: on a machine shared
// with other work one 10 s run drifts by ±15 %, and without turns a drift lands on one target only.
//
// The load is spread client-side, round-robin: autocannon takes the instances' URLs and gives its
// connections to them in turn (24 connections: 24, 12 or 8 per instance), as a load balancer without
// stickiness would; there is no proxy in front, so its cost is not measured.
//
// --store sqlite: one SQLite file shared by the processes (WAL; a writer takes the file's lock with
// BEGIN IMMEDIATE and the others wait, busy_timeout 5 s). --store postgres: a new database for each
// measurement on the server of PGW_BENCH_DATABASE_URL, else PGW_TEST_DATABASE_URL, else
// scripts/postgres/ensure.sh's, dropped afterwards.
//
// --cpu-prof DIR: each sandbox instance runs with Node's --cpu-prof and writes its profile into DIR
// when it is stopped (SIGTERM, the sandbox's own shut-down): open it in Chrome's DevTools.
// --baseline DIR: the sandbox of another checkout of this package (DIR, with node_modules) measured
// too, with the first instance count, as the target `baseline`: before and after a change in one run
// (git archive REV | tar -x -C DIR; ln -s "$PWD/node_modules" DIR/).
// --variant NAME=VALUE (repeatable): the sandbox again, first instance count, with that variable in its
// environment: the durability settings side by side (PGW_SQLITE_SYNCHRONOUS=FULL,
// PGW_PG_SYNCHRONOUS_COMMIT=off, PGOPTIONS='-c commit_delay=200' for PostgreSQL's grouped commits).
// --save keeps the run in bench/saved/deployment-<store>.json and writes its figures into
// docs/BENCHMARKS.md (bench/figures.ts).
//
// The load generator, the targets and (for postgres) the database server share this machine's
// cores: instances beyond the core count add contention, not capacity.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { buildRequest, operation } from '../contract/index.ts';
import { type DeploymentRow, type DeploymentRun, deploymentFigures, deploymentFile, withFigures } from './figures.ts';
import { start } from './harness.ts';
import { freshPostgresDatabase, onServer } from './postgres.ts';
import { merchant, purchaseBody } from './purchase.ts';
import { benchArgs } from './args.ts';

const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const { values: args } = benchArgs(import.meta.url, {
  options: {
    store: { type: 'string', default: 'sqlite' },
    instances: { type: 'string', default: '1' },
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '24' },
    rounds: { type: 'string', default: '3' },
    peers: { type: 'string', default: 'stubs,mock' },
    'cpu-prof': { type: 'string' },
    baseline: { type: 'string' },
    variant: { type: 'string', multiple: true },
    save: { type: 'boolean', default: false },
  },
});
const store = args.store as 'sqlite' | 'postgres';
const counts = args.instances!.split(',').map(Number);
if (store !== 'sqlite' && store !== 'postgres') throw new Error('--store is sqlite or postgres');
if (counts.some((n) => !Number.isInteger(n) || n < 1))
  throw new Error('--instances is a list of instance counts, e.g. 1,2,3');
const peers = args.peers === 'none' ? [] : args.peers!.split(',');
if (peers.some((p) => p !== 'stubs' && p !== 'mock')) throw new Error('--peers is stubs, mock, both or none');
const seconds = Number(args.duration);
const loadAverage = os.loadavg()[0]!;

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
/** A read of a transaction the target stored (queryCard), made once its first purchase is known. */
const query = (transactionID: string) =>
  signed('queryCard', { method: 'queryCard', ...merchant, transactionID, hash: 'x' });

/** A target under load: where to send, which processes do its work, and how to stop it. */
interface Running {
  urls: string[];
  /** The processes whose CPU is the target's (an instance, the mock's front and Prism). */
  pids(): number[];
  /** The database's processes serving it (PostgreSQL backends on this machine); none for the others. */
  databasePids(): Promise<number[]>;
  stop(): Promise<void>;
}
interface Target {
  name: string;
  instances?: number;
  start(round: number): Promise<Running>;
}

/**
 * The process ids of the PostgreSQL backends serving `name` when the server runs on this machine
 * (its backends are then in /proc): their CPU is the database's share of the work.
 */
async function backends(name: string): Promise<number[]> {
  const rows = await onServer<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = $1', [name]);
  return rows.map((r) => r.pid).filter((pid) => existsSync(`/proc/${pid}/stat`));
}

/** A process's children (Linux), for the Prism process the mock starts. */
const childrenOf = (pid: number): number[] => {
  const file = `/proc/${pid}/task/${pid}/children`;
  return existsSync(file) ? readFileSync(file, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number) : [];
};

const stopped = (child: ChildProcess, signal: NodeJS.Signals = 'SIGKILL') =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill(signal);
  });

/** Spawns node with args; resolves with the URL it prints (`pattern`'s first group). */
function spawnServer(
  script: string[],
  env: NodeJS.ProcessEnv,
  pattern: RegExp,
): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(path.join(ROOT, 'node_modules/.bin/node'), script, {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    const read = (chunk: Buffer) => {
      out += chunk;
      const m = pattern.exec(out);
      if (m) resolve({ child, url: m[1]! });
    };
    child.stdout!.on('data', read);
    child.stderr!.on('data', (chunk: Buffer) => (out += chunk));
    child.on('exit', (code) => reject(new Error(`${script.at(0)} exited with ${code}: ${out.trim()}`)));
  });
}

const dir = mkdtempSync(path.join(os.tmpdir(), 'pgw-deploy-'));

function sandboxTarget(n: number, root = ROOT, name = `sandbox×${n}`, variant: Record<string, string> = {}): Target {
  return {
    name,
    instances: n,
    async start(round) {
      const db =
        store === 'sqlite'
          ? { url: path.join(dir, `bench-${n}-${round}.db`), name: undefined, drop: async () => {} }
          : await freshPostgresDatabase(`${n}_${round}`);
      const key = randomBytes(32).toString('base64');
      const profile = args['cpu-prof'] ? ['--cpu-prof', '--cpu-prof-dir', path.resolve(args['cpu-prof'])] : [];
      const one = () =>
        spawnServer(
          [...profile, path.join(root, 'sandbox/main.ts'), '--port', '0', '--quiet'],
          { PGW_DB: db.url, PGW_SANDBOX_DATA_KEY: key, NODE_ENV: 'production', ...variant },
          /sandbox on (http:\/\/[^\s]+)/,
        );
      const instances: ChildProcess[] = [];
      const stop = async () => {
        // SIGTERM lets a profiled instance write its profile as it exits.
        await Promise.all(instances.map((c) => stopped(c, profile.length ? 'SIGTERM' : 'SIGKILL')));
        await db.drop();
      };
      try {
        // The first instance makes the schema; the others then start on it.
        const first = await one();
        instances.push(first.child);
        const started = await Promise.allSettled(Array.from({ length: n - 1 }, one));
        for (const s of started) if (s.status === 'fulfilled') instances.push(s.value.child);
        const failed = started.find((s) => s.status === 'rejected');
        if (failed) throw failed.reason;
        const urls = [first.url, ...started.map((s) => (s as PromiseFulfilledResult<{ url: string }>).value.url)];
        return {
          urls,
          pids: () => instances.map((c) => c.pid!),
          databasePids: () => (db.name ? backends(db.name) : Promise.resolve([])),
          stop,
        };
      } catch (error) {
        await stop();
        throw error;
      }
    },
  };
}

const PEERS: Record<string, Target> = {
  stubs: {
    name: 'stubs',
    async start() {
      const s = await start('servers/stubs.ts');
      return {
        urls: [`http://127.0.0.1:${s.port}`],
        pids: () => [s.child.pid!],
        databasePids: async () => [],
        stop: () => stopped(s.child),
      };
    },
  },
  mock: {
    name: 'mock',
    async start() {
      const { child, url } = await spawnServer(
        [path.join(ROOT, 'mock/run.ts'), '--port', '0'],
        {}, // as a team runs it: Prism does not start with NODE_ENV=production
        /ready at (http:\/\/[^\s]+)/,
      );
      return {
        urls: [url],
        pids: () => [child.pid!, ...childrenOf(child.pid!)],
        databasePids: async () => [],
        stop: () => stopped(child, 'SIGTERM'),
      };
    },
  },
};

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
const ticksOf = (pids: number[]) => pids.map(processTicks);
const spent = (pids: number[], before: number[]) =>
  pids.reduce((sum, pid, k) => sum + processTicks(pid) - before[k]!, 0);

// autocannon takes several URLs and spreads its connections over them; its types say one string.
const load = (urls: string[], duration: number, read: ReturnType<typeof signed>) =>
  autocannon({
    url: urls as unknown as string,
    connections: Number(args.connections),
    duration,
    requests: [purchase, read],
  });

/** One target, one round: started, checked (every URL sells and reads), warmed up, loaded, stopped. */
async function measure(target: Target, round: number): Promise<DeploymentRow> {
  const running = await target.start(round);
  try {
    // Every instance sells, and reads what another one sold: one database behind them all.
    const sold = await send(running.urls[0]!, purchase);
    for (const url of running.urls) await send(url, query(sold.transactionID!));
    const read = query(sold.transactionID!);
    await load(running.urls, 3, read);
    const pids = running.pids();
    const database = await running.databasePids();
    const before = { own: ticksOf(pids), database: ticksOf(database), machine: machineTicks() };
    const r = await load(running.urls, seconds, read);
    const machine = machineTicks();
    const ownMs = spent(pids, before.own) * TICK_MS;
    const databaseMs = spent(database, before.database) * TICK_MS;
    const perRequest = (ms: number) => Number((ms / r.requests.total).toFixed(3));
    const row: DeploymentRow = {
      target: target.name,
      rps: Math.round(r.requests.average),
      p50: r.latency.p50,
      p99: r.latency.p99,
      non2xx: r.non2xx,
      errors: r.errors,
      // The target's own CPU per answered request: the cost that the machine's load does not change.
      cpuMs: perRequest(ownMs),
      ...(database.length ? { databaseCpuMs: perRequest(databaseMs) } : {}),
      // Per cent of all cores, everything on the machine (other users' work included).
      machineBusy: Math.round(((machine.busy - before.machine.busy) / (machine.total - before.machine.total)) * 100),
      rounds: [],
    };
    console.error(
      `round ${round + 1}, ${target.name}: ${row.rps} req/s, p99 ${row.p99} ms, CPU ${row.cpuMs} ms/request${row.databaseCpuMs === undefined ? '' : ` + database ${row.databaseCpuMs} ms`}`,
    );
    return row;
  } finally {
    await running.stop();
  }
}

const targets = [
  ...peers.map((p) => PEERS[p]!),
  ...(args.baseline ? [sandboxTarget(counts[0]!, path.resolve(args.baseline), 'baseline')] : []),
  ...counts.map((n) => sandboxTarget(n)),
  ...(args.variant ?? []).map((v) => {
    const [name, ...value] = v.split('=');
    if (!name || !value.length) throw new Error(`--variant is NAME=VALUE, not ${v}`);
    return sandboxTarget(counts[0]!, ROOT, `sandbox×${counts[0]} ${v}`, { [name]: value.join('=') });
  }),
];
const results = new Map<string, DeploymentRow[]>(targets.map((t) => [t.name, []]));
try {
  for (let round = 0; round < Number(args.rounds); round++)
    for (const target of targets) results.get(target.name)!.push(await measure(target, round));
} catch (error) {
  // One line (an instance's own refusal, a database that cannot be made), not a stack.
  console.error(`bench: ${error instanceof Error ? error.message : String(error)}`);
  rmSync(dir, { recursive: true, force: true });
  process.exit(1); // bench/run.ts ends with exit(0) once this module is done
} finally {
  rmSync(dir, { recursive: true, force: true });
}

/** Each target's median round by throughput, with every round's throughput beside it. */
const rows = targets.map((t) => {
  const rounds = results.get(t.name)!;
  const median = [...rounds].sort((a, b) => a.rps - b.rps)[Math.floor(rounds.length / 2)]!;
  return { ...median, rounds: rounds.map((r) => r.rps) };
});
const run: DeploymentRun = {
  date: new Date().toISOString(),
  node: process.version,
  cpus: os.cpus().length,
  loadAverage,
  store,
  connections: Number(args.connections),
  duration: seconds,
  rounds: Number(args.rounds),
  rows,
};
console.log(deploymentFigures(run));
if (args.save) {
  const file = deploymentFile(store);
  await mkdir(path.dirname(path.join(ROOT, file)), { recursive: true });
  await writeFile(path.join(ROOT, file), `${JSON.stringify(run, null, 2)}\n`);
  const page = path.join(ROOT, 'docs/BENCHMARKS.md');
  await writeFile(page, withFigures(await readFile(page, 'utf8'), `deployment-${store}`, deploymentFigures(run)));
  console.log(`\nsaved in ${file}; its figures written into docs/BENCHMARKS.md`);
}
