// Several sandbox instances on one database, as a shared deployment runs them: each one a separate
// OS process started as `npm start` starts it (node sandbox/main.ts, the control API on), with PGW_DB
// and PORT from the environment and one PGW_SANDBOX_DATA_KEY for all (so that every instance reads
// the cards another stored). The database is an SQLite file (WAL, BEGIN IMMEDIATE, busy_timeout
// serialise the processes' transactions) or, given PGW_TEST_DATABASE_URL, a fresh PostgreSQL database.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { createGatewayClient, type GatewayClient } from '../../generated/client.ts';
import { createControlClient, type ControlClient } from '../../sandbox/control-client.ts';
import { MIGRATIONS } from '../../sandbox/store.ts';
import { postgresMigration } from '../../sandbox/store-postgres.ts';
import { ended } from './children.ts';

const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '../..');
const NODE = path.join(ROOT, 'node_modules/.bin/node');
const MAIN = path.join(ROOT, 'sandbox/main.ts');
/** A sandbox with one rule broken (test/support/broken-instance.ts): the checks must catch it. */
const BROKEN = path.join(ROOT, 'test/support/broken-instance.ts');

export const PG_URL = process.env.PGW_TEST_DATABASE_URL;
export const SKIP_PG =
  'skipped: set PGW_TEST_DATABASE_URL to a PostgreSQL database the tests may create databases in (scripts/postgres/ensure.sh prints one)';

/** The credentials every new sandbox database is seeded with (the spec's x-sandbox ones). */
export interface Credentials {
  merchantUUID: string;
  partnerUUID: string;
  apiKey: string;
  passphrase: string;
}

export interface Database {
  kind: 'sqlite' | 'postgres';
  /** What PGW_DB says: the SQLite file, or the postgres:// URL. */
  url: string;
  drop(): Promise<void>;
}

/** How many delivery attempts the store records for each notification, by its body. */
export function recordedAttempts(db: Database): Promise<{ body: string; attempts: number }[]> {
  return rowsOf(db, 'SELECT body, attempts FROM notifications');
}

/** The accounts the store holds, by kind and id (read straight from the database, not through the sandbox). */
export function storedAccounts(db: Database): Promise<{ kind: string; id: string; partner_id: string | null }[]> {
  return rowsOf(db, 'SELECT kind, id, partner_id FROM accounts ORDER BY kind, id');
}

async function rowsOf<T>(db: Database, sql: string): Promise<T[]> {
  if (db.kind === 'postgres') {
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      return (await client.query(sql)).rows;
    } finally {
      await client.end();
    }
  }
  const file = new DatabaseSync(db.url, { readOnly: true });
  try {
    return file.prepare(sql).all() as T[];
  } finally {
    file.close();
  }
}

/** A new SQLite file in a new temporary folder. */
export function sqliteDatabase(): Database {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pgw-instances-'));
  return {
    kind: 'sqlite',
    url: path.join(dir, 'shared.db'),
    drop: async () => rmSync(dir, { recursive: true, force: true }),
  };
}

/**
 * A new database on the PostgreSQL server `admin` names (PGW_TEST_DATABASE_URL), dropped by drop().
 * Its name starts with PGW_TEST_DATABASE_PREFIX (default pgw) for a server shared with others.
 */
export async function postgresDatabase(admin: string, label: string): Promise<Database> {
  const name = `${process.env.PGW_TEST_DATABASE_PREFIX ?? 'pgw'}_${label}_${process.pid}_${randomBytes(3).toString('hex')}`;
  const run = async (sql: string) => {
    const client = new pg.Client({ connectionString: admin });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await run(`CREATE DATABASE ${name}`);
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return { kind: 'postgres', url: url.href, drop: () => run(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

/** A database at schema version `version`, as the sandbox of that version made it, holding what `rows` insert. */
export async function databaseOfVersion(db: Database, version: number, rows: string[]): Promise<void> {
  if (db.kind === 'sqlite') {
    const file = new DatabaseSync(db.url);
    try {
      for (const sql of MIGRATIONS.slice(0, version)) file.exec(sql);
      for (const sql of rows) file.exec(sql);
      file.exec(`PRAGMA user_version = ${version}`);
    } finally {
      file.close();
    }
    return;
  }
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    await client.query('CREATE TABLE pgw_schema (version INTEGER NOT NULL)');
    await client.query('INSERT INTO pgw_schema VALUES ($1)', [version]);
    for (const sql of MIGRATIONS.slice(0, version)) await client.query(postgresMigration(sql));
    for (const sql of rows) await client.query(sql);
  } finally {
    await client.end();
  }
}

export interface Instance {
  index: number;
  child: ChildProcess;
  base: string;
  /** The instance's stdout and stderr so far (for a failure's message). */
  output(): string;
  /** What it wrote to stderr alone. */
  errors(): string;
  /** Whether the process has ended. */
  exited: boolean;
}

// The stores' durability settings pass through, so that the races and the kill test run under either
// (PGW_SQLITE_SYNCHRONOUS=FULL npm test -- test/sandbox/instances.test.ts); no other PGW_ setting does.
const DURABILITY = new Set(['PGW_SQLITE_SYNCHRONOUS', 'PGW_PG_SYNCHRONOUS_COMMIT']);
const clean = () =>
  Object.fromEntries(
    Object.entries(process.env).filter(([k]) => DURABILITY.has(k) || !/^(PORT|HOST|NODE_ENV|PGW_)/.test(k)),
  );

/** Starts one instance on `db` and waits for its banner (it listens once the banner is printed). */
export interface InstanceOptions {
  /** Start a broken sandbox instead: the rule it breaks (test/support/broken-instance.ts). */
  broken?: 'transactions' | 'at-most-once';
  env?: Record<string, string>;
}

export function startInstance(
  index: number,
  db: Database,
  key: string,
  options: InstanceOptions = {},
): Promise<Instance> {
  const script = options.broken ? BROKEN : MAIN;
  const child = spawn(NODE, [script], {
    cwd: db.kind === 'sqlite' ? path.dirname(db.url) : os.tmpdir(),
    env: {
      ...clean(),
      PGW_DB: db.url,
      PORT: '0',
      PGW_SANDBOX_DATA_KEY: key,
      PGW_QUIET: '1',
      ...(options.broken ? { PGW_BROKEN_RULE: options.broken } : {}),
      ...options.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => {
    out += c.toString();
    err += c.toString();
  });
  const instance: Instance = { index, child, base: '', output: () => out, errors: () => err, exited: false };
  child.once('exit', () => (instance.exited = true));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => fail(new Error(`instance ${index} printed no banner within 60 s: ${out}`)), 60_000);
    const fail = (error: Error) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(error);
    };
    child.stdout!.on('data', () => {
      const m = /sandbox on (http:\/\/\S+)/.exec(out);
      if (m && !instance.base) {
        clearTimeout(timer);
        instance.base = m[1]!;
        resolve(instance);
      }
    });
    child.once('exit', (code, signal) =>
      fail(new Error(`instance ${index} exited (${code ?? signal}) before it listened: ${out.trim()}`)),
    );
  });
}

/** Waits until the instance answers its health check (GET /openapi.json, as a load balancer asks). */
export async function untilAnswers(instance: Instance, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const r = await fetch(`${instance.base}/openapi.json`, { signal: AbortSignal.timeout(5_000) });
      await r.body?.cancel();
      if (r.status === 200) return;
    } catch {}
    if (Date.now() > deadline)
      throw new Error(`instance ${instance.index} at ${instance.base} does not answer: ${instance.output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export interface Deployment {
  db: Database;
  instances: Instance[];
  /** One typed client per instance, signing as the seeded merchant and partner. */
  clients: GatewayClient[];
  /** One control API client per instance (/_sandbox, HTTP Basic as the seeded merchant). */
  controls: ControlClient[];
  credentials: Credentials;
  /** The client of request i, round-robin over the instances (a load balancer without stickiness). */
  spread(i: number): GatewayClient;
  /** kill -9 of every instance still running, then the database dropped. */
  stop(): Promise<void>;
}

/**
 * `count` instances on `db`: the first one makes the schema and seeds the accounts, the others start
 * on it (together: instances restarted by an orchestrator start at once), then each must answer.
 */
export async function startDeployment(
  db: Database,
  credentials: Credentials,
  count = 3,
  options: InstanceOptions = {},
): Promise<Deployment> {
  const key = randomBytes(32).toString('base64');
  const instances: Instance[] = [];
  const stop = async () => {
    await Promise.all(instances.map((i) => killed(i)));
    await db.drop();
  };
  try {
    instances.push(await startInstance(0, db, key, options));
    instances.push(
      ...(await Promise.all(Array.from({ length: count - 1 }, (_, i) => startInstance(i + 1, db, key, options)))),
    );
    await Promise.all(instances.map((i) => untilAnswers(i)));
  } catch (error) {
    await stop();
    throw error;
  }
  const clients = instances.map((i) =>
    createGatewayClient({
      baseUrl: i.base,
      merchantUUID: credentials.merchantUUID,
      apiKey: credentials.apiKey,
      passphrase: credentials.passphrase,
      partner: { partnerUUID: credentials.partnerUUID, apiKey: credentials.apiKey, passphrase: credentials.passphrase },
      timeoutMs: 60_000,
    }),
  );
  const controls = instances.map((i) =>
    createControlClient({ baseUrl: i.base, accountId: credentials.merchantUUID, apiKey: credentials.apiKey }),
  );
  return { db, instances, clients, controls, credentials, spread: (i) => clients[i % clients.length]!, stop };
}

/** kill -9 (no clean-up of any kind, as a crashed machine), and wait for the process to be gone. */
export function killed(instance: Instance): Promise<void> {
  return ended(instance.child, 'SIGKILL');
}

export interface Delivery {
  key: string;
  /** When the receiver got it (deliveries are listed in that order). */
  receivedAt: number;
}

export interface Receiver {
  url: string;
  deliveries: Delivery[];
  close(): Promise<void>;
}

/**
 * A notification receiver on 127.0.0.1: it records every POST under the key `keyOf` gives its JSON
 * body and answers 200 after `delayMs` (a receiver that takes a moment, so deliveries are in flight).
 */
export async function startReceiver(keyOf: (body: any) => string, delayMs = 20): Promise<Receiver> {
  const deliveries: Delivery[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      let key: string;
      try {
        key = keyOf(JSON.parse(body));
      } catch {
        key = `unreadable: ${body.slice(0, 80)}`;
      }
      const d: Delivery = { key, receivedAt: Date.now() };
      deliveries.push(d);
      setTimeout(() => res.end('ok'), delayMs);
    });
  });
  server.keepAliveTimeout = 1_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/notify`,
    deliveries,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
