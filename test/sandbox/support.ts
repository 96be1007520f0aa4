// A sandbox on an in-memory store behind a real HTTP server, a typed client for it, and a record of
// the notifications it posts. A scenario file run on PostgreSQL (test/sandbox/postgres-*.test.ts)
// calls useStore first: each sandbox it starts then gets a fresh database of its own.
import { once } from 'node:events';
import pg from 'pg';
import { afterAll, expect, it } from 'vitest';
import type { AddressInfo } from 'node:net';
import { createGatewayClient, type GatewayClient } from '../../generated/client.ts';
import type { ClientOptions } from '../../runtime/client.ts';
import { sandbox as sandboxData } from '../../contract/index.ts';
import { tablesWithColumn } from '../../sandbox/context.ts';
import { type ControlClient, createControlClient } from '../../sandbox/control-client.ts';
import { createSandbox, type RunningSandbox, type SandboxOptions } from '../../sandbox/index.ts';

export interface Posted {
  url: string;
  headers: Record<string, string>;
  body: any;
}

export interface TestSandbox {
  sandbox: RunningSandbox;
  client: GatewayClient;
  base: string;
  posted: Posted[];
  close(): Promise<void>;
}

/** The PostgreSQL server the tests may create databases in, and why its tests are skipped without it. */
export const PG_URL = process.env.PGW_TEST_DATABASE_URL;
export const SKIP_PG =
  'skipped: set PGW_TEST_DATABASE_URL to a PostgreSQL database the tests may create databases in (scripts/postgres/ensure.sh prints one)';

let server: string | undefined;

/**
 * Every sandbox started after this (without a dbPath of its own) runs on a fresh database of this
 * PostgreSQL server; undefined: on an in-memory SQLite store again. The setting is the process's: a
 * file that sets it resets it when it is done, since test files may share a worker.
 */
export function useStore(postgresUrl: string | undefined): void {
  server = postgresUrl;
}

/**
 * The stores a file's scenarios run on: the in-memory SQLite store, and PostgreSQL when
 * PGW_TEST_DATABASE_URL names a server (SKIP_PG says why not). startSandboxOn starts a sandbox on one,
 * leaving the process's own setting (useStore) as it was.
 */
export const STORES: { name: string; url: string | undefined }[] = [
  { name: 'SQLite', url: undefined },
  ...(PG_URL ? [{ name: 'PostgreSQL', url: PG_URL }] : []),
];

/** A sandbox on this store (a fresh PostgreSQL database, or in-memory SQLite), whatever useStore says. */
export async function startSandboxOn(url: string | undefined, options: SandboxOptions = {}): Promise<TestSandbox> {
  const before = server;
  server = url;
  try {
    return await startSandbox(options);
  } finally {
    server = before;
  }
}

/**
 * Scenario files' tests again, each sandbox on a fresh PostgreSQL database: the same behaviour on both
 * stores. Called with top-level await from a test file (`import.meta.url` and the scenario files,
 * relative to it), which then collects the files' tests.
 */
export async function onPostgres(name: string, from: string, ...scenarioFiles: string[]): Promise<void> {
  if (!PG_URL) {
    it.skip(`${name} scenarios on PostgreSQL: ${SKIP_PG}`, () => {});
    return;
  }
  useStore(PG_URL);
  // The next file run by this worker starts its sandboxes on its own store again.
  afterAll(() => {
    server = undefined;
  });
  it('runs its sandboxes on PostgreSQL', async () => {
    const t = await startSandbox();
    expect(t.sandbox.store.kind).toBe('postgres');
    await t.close();
  });
  // A worker runs many files in one process and keeps the modules it loaded: a scenario file this
  // worker has run already would be that module again, its tests collected by nobody. The query makes
  // it a module of its own, evaluated here; what it imports (this module among them) stays shared.
  for (const file of scenarioFiles) await import(`${new URL(file, from).pathname}?on=postgres`);
}

/** A fresh database on the server, and how to drop it. */
export async function freshDatabase(url: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `pgw_sandbox_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
  const admin = async (sql: string) => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await admin(`CREATE DATABASE ${name}`);
  const own = new URL(url);
  own.pathname = `/${name}`;
  return { url: own.toString(), drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

export async function startSandbox(options: SandboxOptions = {}): Promise<TestSandbox> {
  const posted: Posted[] = [];
  const database = server && !options.dbPath ? await freshDatabase(server) : undefined;
  const sandbox = await createSandbox({
    dbPath: database?.url ?? ':memory:',
    env: { PGW_SANDBOX_PARTNER_NOTIFY_URL: 'https://partner.test/notify' },
    fetch: (async (url: string, init: RequestInit) => {
      posted.push({ url, headers: init.headers as Record<string, string>, body: JSON.parse(String(init.body)) });
      return new Response(null, { status: 204 });
    }) as typeof fetch,
    ...options,
  });
  const http = sandbox.server();
  http.listen(0, '127.0.0.1');
  await once(http, 'listening');
  const base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  const client = clientOf(sandbox, base);
  return {
    sandbox,
    client,
    base,
    posted,
    close: async () => {
      const closed = new Promise((resolve) => http.close(resolve));
      // A long poll its client gave up on can keep its connection open for the poll's whole wait (undici
      // leaves one aborted as its new connection was being made): cut what is left after a grace, as
      // npm start does on SIGTERM (sandbox/main.ts).
      const cut = setTimeout(() => http.closeAllConnections(), 250);
      await closed;
      clearTimeout(cut);
      await sandbox.close();
      await database?.drop();
    },
  };
}

/**
 * The sandbox's merchant's own control client (its merchantUUID and api key, as a team signs in to
 * its request log: payment-gateway logs); another apiKey makes a stranger's.
 */
export function merchantControl(
  t: Pick<TestSandbox, 'sandbox' | 'base'>,
  apiKey = t.sandbox.seed.apiKey,
): ControlClient {
  return createControlClient({ baseUrl: t.base, accountId: t.sandbox.seed.merchantUUID, apiKey });
}

/** A sandbox with its control API on, and its merchant's own control client (merchantControl). */
export interface ControlledSandbox extends TestSandbox {
  control: ControlClient;
}

export async function startSandboxWithControl(options: SandboxOptions = {}): Promise<ControlledSandbox> {
  const t = await startSandbox({ control: true, ...options });
  return { ...t, control: merchantControl(t) };
}

/** A typed client of the sandbox's merchant (and partner), with more options (headers, fetch, retry). */
export function clientOf(sandbox: RunningSandbox, base: string, options: Partial<ClientOptions> = {}): GatewayClient {
  const s = sandbox.seed;
  return createGatewayClient({
    baseUrl: base,
    merchantUUID: s.merchantUUID,
    apiKey: s.apiKey,
    passphrase: s.passphrase,
    partner: { partnerUUID: s.partnerUUID, apiKey: s.apiKey, passphrase: s.passphrase },
    ...options,
  });
}

/**
 * Row counts of every table: a refusal must leave them all as they were. The request log is not
 * counted: it is where a refusal is told (request-log.ts), not a change the request made.
 */
export async function counts(sandbox: RunningSandbox): Promise<Record<string, number>> {
  let query = countQueries.get(sandbox.store);
  if (!query) {
    query = tablesWithColumn(sandbox.store).then((all) => {
      const tables = all.filter((t) => t !== 'request_log');
      return { tables, sql: `SELECT ${tables.map((t, i) => `(SELECT count(*) FROM ${t}) AS n${i}`).join(', ')}` };
    });
    countQueries.set(sandbox.store, query);
  }
  const { tables, sql } = await query;
  const row = (await sandbox.store.get(sql))!;
  return Object.fromEntries(tables.map((table, i) => [table, Number(row[`n${i}`])]));
}
/**
 * Each store's tables (its schema is made when it opens) and the one statement that counts them all:
 * the fuzz counts before and after each of its 6,660 requests, and with a statement per table the
 * file took 11.95 s of CPU, 9.41 s with one.
 */
const countQueries = new WeakMap<object, Promise<{ tables: string[]; sql: string }>>();

export const card = {
  visa: { ...sandboxData.testCard, paymentCardName: sandboxData.customer.customerName },
  lowFunds: { paymentCardNumber: '4564710000000020', paymentCardExpiry: '0520', paymentCardName: 'Jane Citizen' },
};

export const customer = sandboxData.customer;

/** A zip's first entry's time, as its local header writes it (a DOS date and time: fields, no zone). */
export function entryTime(zip: Uint8Array): string {
  const view = new DataView(zip.buffer, zip.byteOffset, zip.byteLength);
  const time = view.getUint16(10, true);
  const date = view.getUint16(12, true);
  const two = (n: number) => String(n).padStart(2, '0');
  return `${1980 + (date >> 9)}-${two((date >> 5) & 15)}-${two(date & 31)} ${two(time >> 11)}:${two((time >> 5) & 63)}:${two((time & 31) * 2)}`;
}
