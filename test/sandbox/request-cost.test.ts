// What a request costs the store (docs/BENCHMARKS.md): the statements and transactions of a purchase
// and of a query, on both stores, and what each store's durability setting is. A read-check-write's
// atomicity across instances is tested in instances.test.ts and store.test.ts; here, that a unit of
// work that only reads takes no lock and that one that writes holds its lock until it commits.
import { AsyncLocalStorage } from 'node:async_hooks';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../sandbox/open-store.ts';
import type { SqliteStore } from '../../sandbox/store-sqlite.ts';
import type { Store } from '../../sandbox/store.ts';
import type { RunningSandbox } from '../../sandbox/index.ts';
import { hardeningSandbox, merchant, purchase, send, signed } from '../hardening/support.ts';
import { freshDatabase, PG_URL, SKIP_PG } from './support.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});
const sqliteFile = () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'pgw-cost-'));
  dirs.push(dir);
  return path.join(dir, 'sandbox.db');
};

/** This test's request, as its store calls see it (the batch poller's calls run beside it, outside). */
const request = new AsyncLocalStorage<true>();
const inRequest = () => request.getStore() === true;

/** Counts the request's statements (each a round trip on PostgreSQL) and the transactions it begins. */
function counting(sb: RunningSandbox, begins: () => number) {
  let statements = 0;
  const s = sb.store as unknown as Record<'get' | 'all' | 'run', (...args: unknown[]) => Promise<unknown>>;
  for (const method of ['get', 'all', 'run'] as const) {
    const own = s[method].bind(sb.store);
    s[method] = (...args) => {
      if (inRequest()) statements++;
      return own(...args);
    };
  }
  return async (operationId: string, body: Record<string, unknown>) => {
    const [before, began] = [statements, begins()];
    const answer = await request.run(true, () => send(sb, signed(operationId, body)));
    return { json: answer.json, statements: statements - before, transactions: begins() - began };
  };
}

function costs(
  name: string,
  open: () => Promise<{ sb: RunningSandbox; close(): Promise<void>; begins: () => number }>,
) {
  it(`${name}: a purchase is three statements in one transaction, a query two statements and none`, async () => {
    const { sb, close, begins } = await open();
    try {
      const measure = counting(sb, begins);
      const bought = await measure('processCard', purchase());
      expect(bought.json.responseCode).toBe('0');
      // The account with its clock, the blacklist, the insert that draws its identifier and reads the row back.
      expect({ statements: bought.statements, transactions: bought.transactions }).toEqual({
        statements: 3,
        transactions: 1,
      });
      const read = await measure('queryCard', {
        method: 'queryCard',
        ...merchant,
        transactionID: bought.json.transactionID,
      });
      expect(read.json.responseCode).toBe('0');
      expect({ statements: read.statements, transactions: read.transactions }).toEqual({
        statements: 2,
        transactions: 0,
      });
    } finally {
      await close();
    }
  });
}

describe('what a request costs the store', () => {
  costs('SQLite', async () => {
    const sb = await hardeningSandbox(sqliteFile());
    const db = (sb.store as unknown as SqliteStore).database.db;
    let begun = 0;
    const exec = db.exec.bind(db);
    db.exec = (sql: string) => {
      if (inRequest() && /^BEGIN/.test(sql)) begun++;
      return exec(sql);
    };
    return { sb, close: () => sb.close(), begins: () => begun };
  });

  if (!PG_URL) it.skip(`PostgreSQL: ${SKIP_PG}`, () => {});
  else
    costs('PostgreSQL', async () => {
      const database = await freshDatabase(PG_URL!);
      const sb = await hardeningSandbox(database.url);
      let begun = 0;
      const query = pg.Client.prototype.query;
      pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
        if (inRequest() && args[0] === 'BEGIN') begun++;
        return (query as (...a: unknown[]) => unknown).apply(this, args);
      } as typeof query;
      const close = async () => {
        pg.Client.prototype.query = query;
        await sb.close();
        await database.drop();
      };
      return { sb, close, begins: () => begun };
    });
});

describe('a unit of work on SQLite takes the write lock at its first write, and holds it until it commits', () => {
  it('reads alone leave the file to other writers; a write locks it out until the commit', async () => {
    const file = sqliteFile();
    const store = await openStore(file);
    const other = new DatabaseSync(file);
    other.exec('PRAGMA busy_timeout = 0');
    const otherCanWrite = () => {
      try {
        other.exec('BEGIN IMMEDIATE');
        other.exec('ROLLBACK');
        return true;
      } catch {
        return false;
      }
    };
    try {
      const seen = await store.transaction(async () => {
        await store.get('SELECT COUNT(*) AS n FROM accounts');
        const whileReading = otherCanWrite();
        await store.run("INSERT INTO sandbox_clock (name, offset_ms) VALUES ('merchant:x', 0)");
        return { whileReading, whileWriting: otherCanWrite() };
      });
      expect(seen).toEqual({ whileReading: true, whileWriting: false });
      expect(otherCanWrite()).toBe(true);
    } finally {
      other.close();
      await store.close();
    }
  });
});

describe('durability settings', () => {
  it('SQLite: synchronous NORMAL by default (WAL), FULL when PGW_SQLITE_SYNCHRONOUS says so, a bad value refused', async () => {
    const level = async (env: NodeJS.ProcessEnv) => {
      const store = await openStore(sqliteFile(), env);
      try {
        return (await store.get<{ synchronous: number }>('PRAGMA synchronous'))?.synchronous;
      } finally {
        await store.close();
      }
    };
    expect(await level({})).toBe(1);
    expect(await level({ PGW_SQLITE_SYNCHRONOUS: 'full' })).toBe(2);
    await expect(level({ PGW_SQLITE_SYNCHRONOUS: 'OFF' })).rejects.toThrow(
      'PGW_SQLITE_SYNCHRONOUS is NORMAL or FULL, not OFF',
    );
  });

  it.skipIf(!PG_URL)(
    `PostgreSQL: the server's synchronous_commit unless PGW_PG_SYNCHRONOUS_COMMIT sets it; statements prepared once a connection${PG_URL ? '' : ` (${SKIP_PG})`}`,
    async () => {
      const database = await freshDatabase(PG_URL!);
      const stores: Store[] = [];
      try {
        const open = async (env: NodeJS.ProcessEnv) => {
          const store = await openStore(database.url, env);
          stores.push(store);
          return store;
        };
        const server = await open({});
        const off = await open({ PGW_PG_SYNCHRONOUS_COMMIT: 'off' });
        const on = await open({ PGW_PG_SYNCHRONOUS_COMMIT: 'on' });
        const setting = async (store: Store) =>
          (await store.get<{ synchronous_commit: string }>('SHOW synchronous_commit'))?.synchronous_commit;
        expect(await setting(off)).toBe('off');
        expect(await setting(on)).toBe('on');
        expect(['on', 'off', 'local', 'remote_write', 'remote_apply']).toContain(await setting(server));
        await expect(open({ PGW_PG_SYNCHRONOUS_COMMIT: 'maybe' })).rejects.toThrow(
          'PGW_PG_SYNCHRONOUS_COMMIT is one of on, off, local, remote_write, remote_apply, not maybe',
        );
        const prepared = await server.transaction(async () => {
          await server.run("INSERT INTO sandbox_clock (name, offset_ms) VALUES ('merchant:p', 0)");
          await server.get('SELECT offset_ms FROM sandbox_clock WHERE name = ?', 'merchant:p');
          await server.get('SELECT offset_ms FROM sandbox_clock WHERE name = ?', 'merchant:p');
          return server.all<{ statement: string }>('SELECT statement FROM pg_prepared_statements');
        });
        expect(prepared.map((p) => p.statement)).toContain('SELECT offset_ms FROM sandbox_clock WHERE name = $1');
      } finally {
        await Promise.all(stores.map((s) => s.close()));
        await database.drop();
      }
    },
  );
});
