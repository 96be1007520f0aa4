// npm run bench -- --store sqlite|postgres --instances 1,2,3 [--duration 10] [--connections 24]:
// a deployment of N sandbox processes (sandbox/main.ts, as `npm start` runs them) on one database,
// loaded round-robin by the load generator (autocannon spreads its connections over the instances'
// URLs, as a load balancer would), with a mix of writes and reads: processCard (a purchase, one
// transaction that inserts), queryCard and getSurcharge (reads). Each instance count is measured
// after a warm-up; reported: throughput, p50 and p99, non-2xx answers.
//
// --store postgres: the database is PGW_BENCH_DATABASE_URL, else PGW_TEST_DATABASE_URL, else
// scripts/postgres/ensure.sh's; a fresh database is made in it for each instance count (psql).
// --store sqlite: one instance only; an SQLite file is one process's store.
//
// The load generator, the instances and (for postgres) the database server share this machine's
// cores: instances beyond the core count add contention, not capacity. The figures say what this
// machine does, not what a deployment with a core per instance would.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { buildRequest, operation } from '../contract/index.ts';

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
if (args.store === 'sqlite' && counts.some((n) => n !== 1)) throw new Error('--store sqlite runs one instance: an SQLite file is one process\'s store; several instances need --store postgres');

const merchant = { merchantUUID: '5265f8eed6a19', apiKey: 'ksmnwxab' };
function signed(operationId: string, body: Record<string, unknown>) {
  const op = operation(operationId);
  const r = buildRequest(op, { body, signBody: true });
  return { method: r.verb as 'POST', path: r.url, headers: r.headers as Record<string, string>, body: r.body as string };
}
const purchase = signed('processCard', { method: 'processCard', ...merchant, transactionAmount: '1.00', transactionCurrency: 'AUD', transactionProduct: 'x', customerName: 'Jane', customerCountry: 'AU', customerState: 'QLD', customerCity: 'B', customerAddress: '1 St', customerPostCode: '4000', paymentCardNumber: '4564710000000004', paymentCardExpiry: '0229', paymentCardName: 'Jane', paymentCardCSC: '847', hash: 'x' });
/** A read of a transaction the deployment stored (queryCard), made once its first purchase is known. */
const query = (transactionID: string) => signed('queryCard', { method: 'queryCard', ...merchant, transactionID, hash: 'x' });

function postgresBase(): string {
  return process.env.PGW_BENCH_DATABASE_URL || process.env.PGW_TEST_DATABASE_URL || execFileSync('bash', [path.join(ROOT, 'scripts/postgres/ensure.sh')], { encoding: 'utf8' }).trim();
}

/** A new, empty database for one measurement: its URL. */
function freshDatabase(n: number, dir: string): string {
  if (args.store === 'sqlite') return path.join(dir, `bench-${n}.db`);
  const base = new URL(postgresBase());
  const name = `pgw_bench_${process.pid}_${n}`;
  execFileSync('psql', [base.href, '-qc', `DROP DATABASE IF EXISTS ${name}`, '-c', `CREATE DATABASE ${name}`], { stdio: 'inherit' });
  base.pathname = `/${name}`;
  return base.href;
}

function startInstance(db: string, key: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(path.join(ROOT, 'node_modules/.bin/node'), [path.join(ROOT, 'sandbox/main.ts'), '--port', '0', '--quiet'], {
    env: { ...process.env, PGW_DB: db, PGW_SANDBOX_DATA_KEY: key, NODE_ENV: 'production' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk;
      const m = /sandbox on (http:\/\/[^\s]+)/.exec(out);
      if (m) resolve({ child, url: m[1]! });
    });
    child.on('exit', (code) => reject(new Error(`a sandbox instance exited with ${code}: ${out}`)));
  });
}

async function send(url: string, r: ReturnType<typeof signed>): Promise<Record<string, string>> {
  const answer = await fetch(url + r.path, { method: r.method, headers: r.headers, body: r.body });
  const json = (await answer.json()) as Record<string, string>;
  if (json.responseCode !== '0') throw new Error(`${url}${r.path}: ${JSON.stringify(json)}`);
  return json;
}

// autocannon takes several URLs and spreads its connections over them; its types say one string.
const load = (urls: string[], seconds: number, read: ReturnType<typeof signed>) =>
  autocannon({ url: urls as unknown as string, connections: Number(args.connections), duration: seconds, requests: [purchase, read] });

const dir = mkdtempSync(path.join(os.tmpdir(), 'pgw-deploy-'));
const rows: { n: number; rps: number; p50: number; p99: number; non2xx: number; errors: number }[] = [];
try {
  for (const n of counts) {
    const db = freshDatabase(n, dir);
    const key = randomBytes(32).toString('base64');
    // The first instance makes the schema; the others then start on it.
    const first = await startInstance(db, key);
    const instances = [first, ...(await Promise.all(Array.from({ length: n - 1 }, () => startInstance(db, key))))];
    try {
      // Every instance sells, and reads what another one sold: one database behind them all.
      const sold = await send(instances[0]!.url, purchase);
      for (const i of instances) await send(i.url, query(sold.transactionID!));
      const read = query(sold.transactionID!);
      await load(instances.map((i) => i.url), 3, read);
      const r = await load(instances.map((i) => i.url), Number(args.duration), read);
      rows.push({ n, rps: Math.round(r.requests.average), p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx, errors: r.errors });
      console.error(`${n} instance(s): ${Math.round(r.requests.average)} req/s, p99 ${r.latency.p99} ms`);
    } finally {
      for (const i of instances) i.child.kill();
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
console.log(`store ${args.store}; mix processCard + queryCard, ${args.connections} connections round-robin over the instances, ${args.duration} s after a 3 s warm-up; node ${process.version}, ${os.cpus().length} cores shared by the load generator, the instances${args.store === 'postgres' ? ' and PostgreSQL' : ''}\n`);
console.log('| instances | req/s | p50 | p99 | non-2xx | errors |');
console.log('|---:|---:|---:|---:|---:|---:|');
for (const r of rows) console.log(`| ${r.n} | ${r.rps} | ${r.p50} ms | ${r.p99} ms | ${r.non2xx} | ${r.errors} |`);
