// The shared store: PostgreSQL, for several sandbox instances on one database. `pg` (node-postgres)
// is the most used and longest-kept client, with a pool and pg-cursor for streamed reads.
// Each transaction runs on one pooled client, found by its statements through AsyncLocalStorage;
// read-check-writes lock their rows with SELECT … FOR UPDATE (READ COMMITTED), and a transaction that
// PostgreSQL aborts as a deadlock or serialisation failure is run again from the start.
import { AsyncLocalStorage } from 'node:async_hooks';
import pg from 'pg';
import Cursor from 'pg-cursor';
import { BATCH_ROWS, MIGRATIONS, type Row, type Store } from './store.ts';
import { freshId } from './fresh-id.ts';

const RETRYABLE = new Set(['40001', '40P01']);
const RETRIES = 20;
const CURSOR_ROWS = 200;

/** `?` → `$1, $2, …` outside string literals; `INSERT OR IGNORE` → `ON CONFLICT DO NOTHING`. */
export function postgresSql(sql: string): string {
  let n = 0;
  let quoted = false;
  let out = '';
  for (const ch of sql) {
    if (ch === "'") quoted = !quoted;
    out += ch === '?' && !quoted ? `$${++n}` : ch;
  }
  if (/^\s*INSERT\s+OR\s+IGNORE\s+/i.test(out))
    out = `${out.replace(/^\s*INSERT\s+OR\s+IGNORE\s+/i, 'INSERT ').replace(/;\s*$/, '')} ON CONFLICT DO NOTHING`;
  return out;
}

/**
 * The SQLite migrations in PostgreSQL's words: the notifications' serial id; INTEGER as BIGINT (an
 * SQLite INTEGER holds 64 bits: amounts in cents reach 10^14); and a `rowid` column on every table,
 * a BIGSERIAL, because PostgreSQL has no rowid and the sandbox orders rows written in the same second
 * by it (`ORDER BY created_at, rowid`): the same SQL then means the order rows were written on both.
 */
export const postgresMigration = (sql: string) =>
  sql
    .replace(/INTEGER PRIMARY KEY AUTOINCREMENT/g, 'BIGSERIAL PRIMARY KEY')
    .replace(/\bINTEGER\b/g, 'BIGINT')
    .replace(/CREATE TABLE (\w+) \(/g, 'CREATE TABLE $1 (rowid BIGSERIAL NOT NULL, ')
    // Every SQLite index ends in the rowid, so `ORDER BY <index's columns>, rowid` reads in order from
    // it; the same index here gets the column too, or PostgreSQL sorts (the settlement export's query).
    .replace(/(CREATE INDEX \w+ ON \w+ \([^)]*)\)/g, '$1, rowid)');

// COUNT and SUM answer int8/numeric, which pg gives as strings; the sandbox's figures fit a double.
const types = {
  getTypeParser: (oid: number, format?: 'text' | 'binary') =>
    oid === 20 || oid === 1700 ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format as 'text'),
};

export class PostgresStore implements Store {
  readonly kind = 'postgres' as const;
  readonly pool: pg.Pool;
  private readonly client = new AsyncLocalStorage<pg.PoolClient>();

  private constructor(url: string) {
    // A database that does not answer fails a connection within 2 s rather than holding the request (and
    // the next ones) for as long as the operating system tries to connect.
    this.pool = new pg.Pool({
      connectionString: url,
      max: Number(process.env.PGW_DB_POOL ?? 10),
      connectionTimeoutMillis: 2000,
      types,
    });
    // An idle client's error (the server restarted) must not end the process; the pool replaces it.
    this.pool.on('error', () => {});
    // Nor may a checked-out one's (a backend ended, a fail-over, mid-request): pg fails the client's
    // queries with the error, and emits it too, with no listener while the pool has lent the client
    // out. The request it served fails (-4); released broken, the client is dropped by the pool.
    this.pool.on('connect', (client) => client.on('error', () => {}));
  }

  static async open(url: string): Promise<PostgresStore> {
    const store = new PostgresStore(url);
    await store.migrate();
    return store;
  }

  /** Every migration not yet applied, under an advisory lock so that instances starting together apply each once. */
  private async migrate(): Promise<void> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('SELECT pg_advisory_xact_lock(20201123)');
      await client.query('CREATE TABLE IF NOT EXISTS pgw_schema (version INTEGER NOT NULL)');
      await client.query('INSERT INTO pgw_schema SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM pgw_schema)');
      const current: number = (await client.query('SELECT version FROM pgw_schema')).rows[0].version;
      for (let i = current; i < MIGRATIONS.length; i++) {
        await client.query(postgresMigration(MIGRATIONS[i]!));
        await client.query('UPDATE pgw_schema SET version = $1', [i + 1]);
      }
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  }

  get schemaVersion(): Promise<number> {
    return this.get<{ version: number }>('SELECT version FROM pgw_schema').then((r) => r?.version ?? 0);
  }

  private query(sql: string, params: unknown[]): Promise<pg.QueryResult> {
    return (this.client.getStore() ?? this.pool).query(postgresSql(sql), params);
  }

  async get<T extends Row = Row>(sql: string, ...params: unknown[]): Promise<T | undefined> {
    return (await this.query(sql, params)).rows[0] as T | undefined;
  }

  async all<T extends Row = Row>(sql: string, ...params: unknown[]): Promise<T[]> {
    return (await this.query(sql, params)).rows as T[];
  }

  async run(sql: string, ...params: unknown[]): Promise<{ changes: number }> {
    return { changes: (await this.query(sql, params)).rowCount ?? 0 };
  }

  /** A cursor read CURSOR_ROWS at a time: memory stays flat whatever the result's size. */
  async *iterate<T extends Row = Row>(sql: string, ...params: unknown[]): AsyncIterable<T> {
    for await (const rows of this.read(sql, params, CURSOR_ROWS, 'object')) yield* rows as T[];
  }

  /** A cursor read BATCH_ROWS at a time, rows as arrays: a round trip per batch, no object per row. */
  batches(sql: string, ...params: unknown[]): AsyncIterable<unknown[][]> {
    return this.read(sql, params, BATCH_ROWS, 'array') as AsyncIterable<unknown[][]>;
  }

  private async *read(sql: string, params: unknown[], size: number, rowMode: 'object' | 'array') {
    const inTransaction = this.client.getStore();
    const client = inTransaction ?? (await this.pool.connect());
    const cursor = client.query(
      new Cursor(postgresSql(sql), params, { types, ...(rowMode === 'array' && { rowMode }) } as never),
    );
    // The next batch is asked for before this one is handed out: the server reads and sends it while
    // the caller works through this one, rather than after.
    let next: Promise<unknown[]> = cursor.read(size);
    try {
      for (;;) {
        const rows = await next;
        if (rows.length === 0) return;
        next = cursor.read(size);
        yield rows;
      }
    } finally {
      await next.catch(() => {}); // a read under way is finished before the cursor closes
      await cursor.close();
      if (!inTransaction) (client as pg.PoolClient).release();
    }
  }

  async transaction<T>(fn: () => Promise<T>): Promise<T> {
    if (this.client.getStore()) return fn();
    for (let attempt = 1; ; attempt++) {
      const client = await this.pool.connect();
      try {
        await client.query('BEGIN');
        const result = await this.client.run(client, fn);
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => {});
        const code = (error as { code?: string }).code;
        if (!code || !RETRYABLE.has(code) || attempt >= RETRIES) throw error;
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 5 * attempt));
      } finally {
        client.release();
      }
    }
  }

  freshId(table: string, column: string, make: () => string): Promise<string> {
    return freshId((sql, ...params) => this.get(sql, ...params), table, column, make);
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
