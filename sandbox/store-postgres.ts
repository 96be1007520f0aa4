// The shared store: PostgreSQL, for several sandbox instances on one database. `pg` (node-postgres)
// is the most used and longest-kept client, with a pool and pg-cursor for streamed reads.
// Each transaction runs on one pooled client, found by its statements through AsyncLocalStorage;
// read-check-writes lock their rows with SELECT … FOR UPDATE (READ COMMITTED), and a transaction that
// PostgreSQL aborts as a deadlock or serialisation failure is run again from the start.
//
// What a request costs here is mostly round trips (docs/BENCHMARKS.md), so:
// - every statement is a named prepared statement: each connection parses and plans a text once;
// - a transaction begins at its first statement that writes or locks (beginsTransaction, store.ts), and
//   takes a pooled connection only then: a unit of work that only reads costs no BEGIN and COMMIT;
// - that statement carries the BEGIN (BeginThen): both go in one flight, before one Sync, and are
//   answered in one round trip. The transaction is the same; only the BEGIN's own round trip is gone;
// - a unit's last write (lastWrite: a purchase's one INSERT) waits for the unit's end, after its answer
//   is checked, and runs alone in autocommit when nothing came after it: no BEGIN and no COMMIT.
import { AsyncLocalStorage } from 'node:async_hooks';
import pg from 'pg';
import Cursor from 'pg-cursor';
import {
  BATCH_ROWS,
  beginsTransaction,
  isPlannedOnce,
  MIGRATIONS,
  type OpenOptions,
  refuseNewerSchema,
  refuseOlderSchema,
  type Row,
  type Store,
} from './store.ts';
import { freshId } from './fresh-id.ts';
import { poolSizeFromEnv, poolWaitFromEnv } from './pool-settings.ts';
import { SettingRefused } from './setting-refused.ts';

// The pool's settings and their defaults are pool-settings.ts's (read by `sandbox --help` without pg).
export { POOL_SIZE, POOL_WAIT_MS, poolSizeFromEnv, poolWaitFromEnv } from './pool-settings.ts';

const RETRYABLE = new Set(['40001', '40P01']);

/** A unit of work: its connection and whether its transaction began, once its first write or lock has asked. */
interface Unit {
  connection?: Promise<pg.PoolClient>;
  /** Settles once the statement that carries the BEGIN has run: true when the BEGIN ran. */
  opened?: Promise<boolean>;
  /** Its last write (lastWrite), not run yet: at the unit's end, or first thing for a statement after it. */
  deferred?: { sql: string; query: pg.QueryConfig } | undefined;
  /** Run again after its deferred write changed no row: every statement runs as it comes. */
  eager: boolean;
}

/** A deferred write that changed no row: the unit runs again, its statements as they come. */
class DeferredWriteMissed extends Error {}

/** What BeginThen reaches of pg's Query and its connection (pg's own extended-protocol steps). */
interface Wire {
  parse(query: { text: string }): void;
  bind(config: object): void;
  execute(config: object): void;
  parsedStatements: Record<string, string>;
}
const Query = pg.Query as unknown as new (
  config: pg.QueryConfig,
  values: undefined,
  callback: (error: Error | null, result: pg.QueryResult) => void,
) => pg.Query & {
  prepare(connection: Wire): void;
  handleCommandComplete(message: { text: string }, connection: Wire): void;
};

/**
 * A named prepared statement with a BEGIN sent ahead of it, in the same flight and before the same
 * Sync: PostgreSQL runs BEGIN, then the statement, and answers both in one round trip. After an
 * error the server skips to the Sync, so the statement never runs without its BEGIN. `begun` tells
 * whether BEGIN ran (the transaction is open and must end with COMMIT or ROLLBACK).
 */
export class BeginThen extends Query {
  begun = false;

  override prepare(connection: Wire): void {
    // The unnamed statement and portal: the statement's own Bind, next, replaces the portal.
    connection.parse({ text: 'BEGIN' });
    connection.bind({});
    connection.execute({});
    super.prepare(connection);
  }

  /** The first command completed is the BEGIN: not a result of the statement's. */
  override handleCommandComplete(message: { text: string }, connection: Wire): void {
    if (!this.begun && message.text === 'BEGIN') this.begun = true;
    else super.handleCommandComplete(message, connection);
  }
}

/** PostgreSQL's synchronous_commit for the sandbox's sessions (PGW_PG_SYNCHRONOUS_COMMIT), else the server's. */
const SYNCHRONOUS_COMMIT = new Set(['on', 'off', 'local', 'remote_write', 'remote_apply']);
export function synchronousCommitFromEnv(env: NodeJS.ProcessEnv): string | undefined {
  const value = env.PGW_PG_SYNCHRONOUS_COMMIT;
  if (value === undefined || value === '') return undefined;
  if (!SYNCHRONOUS_COMMIT.has(value))
    throw new SettingRefused(
      'PGW_PG_SYNCHRONOUS_COMMIT',
      `is one of ${[...SYNCHRONOUS_COMMIT].join(', ')}, not ${value}`,
    );
  return value;
}
const RETRIES = 20;
const CURSOR_ROWS = 200;

/**
 * The sandbox's session settings, sent as each connection starts (PGOPTIONS's form; PGOPTIONS itself
 * last, so that it can change them):
 * - plan_cache_mode=force_custom_plan: a prepared statement is planned for its values each time (it is
 *   still parsed once). PostgreSQL would otherwise settle on one generic plan after five runs, planned
 *   for the table as it was then: on a new database, a scan of an empty table, kept while the table
 *   grows (1.6 ms a lookup by primary key at 5,000 rows, measured) until an ANALYZE replaces it.
 * - synchronous_commit, when PGW_PG_SYNCHRONOUS_COMMIT gives it.
 */
function sessionOptions(env: NodeJS.ProcessEnv): string {
  const synchronousCommit = synchronousCommitFromEnv(env);
  return [
    '-c plan_cache_mode=force_custom_plan',
    ...(synchronousCommit ? [`-c synchronous_commit=${synchronousCommit}`] : []),
    ...(env.PGOPTIONS ? [env.PGOPTIONS] : []),
  ].join(' ');
}

/** `?` → `$1, $2, …` outside string literals; `INSERT OR IGNORE` → `ON CONFLICT DO NOTHING`. */
export function postgresSql(sql: string): string {
  let n = 0;
  let quoted = false;
  let out = '';
  for (const ch of sql) {
    if (ch === "'") quoted = !quoted;
    out += ch === '?' && !quoted ? `$${++n}` : ch;
  }
  if (/^\s*INSERT\s+OR\s+IGNORE\s+/i.test(out)) {
    // ON CONFLICT goes before a RETURNING clause.
    const [insert, returning] = out
      .replace(/^\s*INSERT\s+OR\s+IGNORE\s+/i, 'INSERT ')
      .replace(/;\s*$/, '')
      .split(/(?=\sRETURNING\s)/i);
    out = `${insert} ON CONFLICT DO NOTHING${returning ?? ''}`;
  }
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
// pg asks for each column's parser at every result: one function, made once.
const toNumber = (value: string) => Number(value);
const types = {
  getTypeParser: (oid: number, format?: 'text' | 'binary') =>
    oid === 20 || oid === 1700 ? toNumber : pg.types.getTypeParser(oid, format as 'text'),
};

/**
 * A pool connection that gives up connecting after 2 s: a database that does not answer fails the
 * request (and opens the breaker) rather than holding it, and the next ones, for as long as the
 * operating system tries to connect. The error says "timeout expired" (store-health.ts).
 */
class ConnectingClient extends pg.Client {
  constructor(config?: string | pg.ClientConfig) {
    super({ ...(typeof config === 'string' ? { connectionString: config } : config), connectionTimeoutMillis: 2000 });
  }
}

export class PostgresStore implements Store {
  readonly kind = 'postgres' as const;
  readonly pool: pg.Pool;
  /** The unit of work a statement belongs to: its client, once its first write or lock has begun it. */
  private readonly unit = new AsyncLocalStorage<Unit>();
  /** Each SQL text's prepared statement name (and its PostgreSQL text), made once. */
  private readonly prepared = new Map<string, { name: string; text: string }>();

  /**
   * The connections of the statements planned once (store.ts's plannedOnce) that run outside a
   * transaction: plan_cache_mode=force_generic_plan, each planned once per connection, saving the
   * database the plan of each run (the most of its work on a request). A generic plan made while a
   * table was empty (a scan, where an index would serve it once rows come) is replaced at the
   * table's next ANALYZE, and these connections last a minute at most, whose new plans see the
   * table's size: the connections of every other statement plan each run.
   */
  readonly plannedPool: pg.Pool;

  private constructor(url: string, options: string, poolWaitMs: number, poolSize: number) {
    const pool = (sessionOptions: string, more: pg.PoolConfig = {}) => {
      const made = new pg.Pool({
        connectionString: url,
        max: poolSize,
        // Two waits that pg-pool would bound by one figure, kept apart: a new connection's attempt
        // (the client's own time-out, below) and a request's wait for a connection while every one
        // is lent out. The second is not the database being away, only busy: at 2 s a burst of
        // requests on a loaded machine (200 at once on 3 instances, load 10) waited longer, failed
        // "timeout exceeded when trying to connect", and opened the breaker on a database that was
        // answering (store-health.ts). A request that waited the whole wait (PGW_DB_POOL_WAIT_MS) is
        // answered 503 with Retry-After, the breaker left closed.
        Client: ConnectingClient,
        connectionTimeoutMillis: poolWaitMs,
        types,
        // Set as each connection starts: no round trip of its own.
        options: sessionOptions,
        ...more,
      });
      // An idle client's error (the server restarted) must not end the process; the pool replaces it.
      made.on('error', () => {});
      // Nor may a checked-out one's (a backend ended, a fail-over, mid-request): pg fails the client's
      // queries with the error, and emits it too, with no listener while the pool has lent the client
      // out. The request it served fails (-4); released broken, the client is dropped by the pool.
      made.on('connect', (client) => client.on('error', () => {}));
      return made;
    };
    this.pool = pool(options);
    // After the store's own options, PGOPTIONS's included: a generic plan is what this pool is for.
    this.plannedPool = pool(`${options} -c plan_cache_mode=force_generic_plan`, { maxLifetimeSeconds: 60 });
  }

  /** The pool of a statement run outside a transaction. */
  private poolFor(sql: string): pg.Pool {
    return isPlannedOnce(sql) ? this.plannedPool : this.pool;
  }

  /** With migrate false: nothing migrated or made, and a database at another schema version refused. */
  static async open(
    url: string,
    env: NodeJS.ProcessEnv = process.env,
    { migrate = true }: OpenOptions = {},
  ): Promise<PostgresStore> {
    const store = new PostgresStore(url, sessionOptions(env), poolWaitFromEnv(env), poolSizeFromEnv(env));
    // A refused or failed migration (a database newer than this code) closes the pools first: before,
    // their connections stayed open in the process.
    try {
      if (migrate) await store.migrate();
      else {
        const version = (await store.get<{ version: number }>('SELECT version FROM pgw_schema'))?.version ?? 0;
        refuseNewerSchema(version);
        refuseOlderSchema(version);
      }
    } catch (error) {
      await store.close();
      throw error;
    }
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
      refuseNewerSchema(current);
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

  private statement(sql: string): { name: string; text: string } {
    let s = this.prepared.get(sql);
    if (!s) {
      s = { name: `pgw_${this.prepared.size}`, text: postgresSql(sql) };
      this.prepared.set(sql, s);
    }
    return s;
  }

  /** One statement where it belongs (see the file's head); `rowMode: 'array'` answers rows as arrays. */
  private async query(sql: string, params: unknown[], rowMode?: 'array'): Promise<pg.QueryResult> {
    const unit = this.unit.getStore();
    const { name, text } = this.statement(sql);
    const config: pg.QueryConfig = { name, text, values: params, ...(rowMode && { rowMode }) };
    if (unit?.deferred) await this.runDeferred(unit);
    // Outside a transaction the pool lends a connection for this statement alone and takes it back
    // when it has answered.
    if (!unit || (!unit.connection && !beginsTransaction(sql))) return this.poolFor(sql).query(config);
    if (!unit.connection) return this.open(unit, config);
    return (await this.inTransaction(unit)).query(config);
  }

  async lastWrite<T extends Row>(row: T, sql: string, ...params: unknown[]): Promise<T | undefined> {
    const unit = this.unit.getStore();
    // Outside a unit it is alone anyway; in a transaction begun, or after another deferred write, it runs now.
    if (!unit || unit.eager || unit.connection || unit.deferred) return this.get<T>(sql, ...params);
    unit.deferred = { sql, query: { ...this.statement(sql), values: params } };
    return row;
  }

  /** The unit's deferred write, run first thing in its transaction: a statement came after it. */
  private async runDeferred(unit: Unit): Promise<void> {
    const deferred = unit.deferred!;
    unit.deferred = undefined;
    if ((await this.open(unit, deferred.query)).rowCount !== 1) throw new DeferredWriteMissed();
  }

  /**
   * Takes the unit's connection and begins its transaction: with `first`, the statement that asked,
   * in the same round trip (BeginThen) once the connection has parsed it; else with a BEGIN of its own.
   */
  private async open(unit: Unit, first?: pg.QueryConfig): Promise<pg.QueryResult> {
    let opened!: (begun: boolean) => void;
    unit.opened = new Promise((resolve) => (opened = resolve));
    unit.connection = this.pool.connect();
    let begun = false;
    try {
      const client = await unit.connection;
      const parsed = (client as unknown as { connection: Wire }).connection.parsedStatements;
      if (!first || parsed[first.name!] === undefined) {
        // A statement new to this connection is parsed on its own first (pg records it as parsed at
        // the first ParseComplete, which would be the BEGIN's).
        await client.query('BEGIN');
        begun = true;
        return first ? await client.query(first) : (undefined as never);
      }
      const statement = new Promise<pg.QueryResult>((resolve, reject) => {
        const query = new BeginThen(first, undefined, (error, result) => {
          begun = query.begun;
          if (error) reject(error);
          else resolve(result);
        });
        client.query(query);
      });
      return await statement;
    } finally {
      opened(begun);
    }
  }

  /** The unit's connection, its transaction begun: a statement after the one that began it runs there. */
  private async inTransaction(unit: Unit): Promise<pg.PoolClient> {
    if (unit.deferred) await this.runDeferred(unit);
    if (!unit.connection) await this.open(unit);
    const client = await unit.connection!;
    if (!(await unit.opened)) throw new Error('The unit of work has no transaction: its BEGIN failed');
    return client;
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

  async arrays(sql: string, ...params: unknown[]): Promise<unknown[][]> {
    return (await this.query(sql, params, 'array')).rows as unknown[][];
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
    const unit = this.unit.getStore();
    // Inside a unit of work the cursor runs in its transaction (begun for it: a cursor holds a snapshot).
    const inTransaction = unit ? await this.inTransaction(unit) : undefined;
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
    if (this.unit.getStore()) return fn();
    let eager = false;
    for (let attempt = 1; ; attempt++) {
      const unit: Unit = { eager };
      const client = () => unit.connection?.catch(() => undefined);
      try {
        const result = await this.unit.run(unit, fn);
        if (unit.deferred) {
          // Nothing came after it, so nothing began a transaction: it runs alone, its own commit.
          const { sql, query } = unit.deferred;
          if ((await this.poolFor(sql).query(query)).rowCount !== 1) throw new DeferredWriteMissed();
        } else if (unit.connection && (await unit.opened)) await (await unit.connection).query('COMMIT');
        return result;
      } catch (error) {
        // ROLLBACK whether or not the BEGIN ran: with no transaction open it is only a warning.
        await (await client())?.query('ROLLBACK').catch(() => {});
        if (error instanceof DeferredWriteMissed && !eager) {
          eager = true;
          continue;
        }
        const code = (error as { code?: string }).code;
        if (!code || !RETRYABLE.has(code) || attempt >= RETRIES) throw error;
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 5 * attempt));
      } finally {
        (await client())?.release();
      }
    }
  }

  freshId(table: string, column: string, make: () => string): Promise<string> {
    return freshId((sql, ...params) => this.get(sql, ...params), table, column, make);
  }

  async close(): Promise<void> {
    await Promise.all([this.pool.end(), this.plannedPool.end()]);
  }
}
