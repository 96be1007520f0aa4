// The embedded store behind the async Store interface: node:sqlite is synchronous, but a handler that
// awaits inside a transaction gives the event loop to other requests, which would then run their
// statements inside the open transaction (one connection, one transaction). So every unit of work
// takes a queue (an async mutex): a transaction holds it from BEGIN to COMMIT, a statement outside a
// transaction takes it for its own run. AsyncLocalStorage tells the transaction's own statements
// (and nested transactions) that they already hold it.
import { AsyncLocalStorage } from 'node:async_hooks';
import { DatabaseSync } from 'node:sqlite';
import { BATCH_ROWS, SqliteDatabase, type Row, type Store } from './store.ts';
import { freshId } from './fresh-id.ts';

/**
 * Rows of a batch read from a file (at most BATCH_ROWS): a few hundred, so that a batch's rows are
 * done with before the young generation is next collected, rather than copied and promoted by it.
 */
const FILE_BATCH_ROWS = 256;

/** SQLite serialises whole transactions here, so the row-lock clause PostgreSQL needs is dropped. */
const sqliteSql = (sql: string) => sql.replace(/\s+FOR\s+UPDATE(\s+SKIP\s+LOCKED)?\s*$/i, '');

export class SqliteStore implements Store {
  readonly kind = 'sqlite' as const;
  readonly database: SqliteDatabase;
  private readonly file: string;
  private readonly inside = new AsyncLocalStorage<true>();
  private queue: Promise<void> = Promise.resolve();

  constructor(file: string) {
    this.file = file;
    this.database = new SqliteDatabase(file);
  }

  get schemaVersion(): Promise<number> {
    return this.exclusive(async () => this.database.schemaVersion);
  }

  /** Runs work alone: after every unit queued before it, and before any queued after it. */
  private exclusive<T>(work: () => Promise<T>): Promise<T> {
    if (this.inside.getStore()) return work();
    const turn = this.queue.then(() => this.inside.run(true, work));
    this.queue = turn.then(
      () => undefined,
      () => undefined,
    );
    return turn;
  }

  async get<T extends Row = Row>(sql: string, ...params: unknown[]): Promise<T | undefined> {
    return this.exclusive(async () => this.database.get<T>(sqliteSql(sql), ...params));
  }

  async all<T extends Row = Row>(sql: string, ...params: unknown[]): Promise<T[]> {
    return this.exclusive(async () => this.database.all<T>(sqliteSql(sql), ...params));
  }

  async run(sql: string, ...params: unknown[]): Promise<{ changes: number }> {
    return this.exclusive(async () => {
      const result = this.database.statement(sqliteSql(sql)).run(...(params as never[]));
      return { changes: Number(result.changes) };
    });
  }

  /**
   * Outside a transaction, a file's rows are read through a connection of their own: WAL gives it a
   * snapshot, so the stream neither holds the queue nor sees another request's uncommitted writes.
   * Inside a transaction (or for :memory:, which has no second connection) the rows are read whole
   * under the queue and then yielded.
   */
  async *iterate<T extends Row = Row>(sql: string, ...params: unknown[]): AsyncIterable<T> {
    for await (const batch of this.read(sql, params, false)) yield* batch as T[];
  }

  batches(sql: string, ...params: unknown[]): AsyncIterable<unknown[][]> {
    return this.read(sql, params, true) as AsyncIterable<unknown[][]>;
  }

  /** iterate and batches: a batch of rows a step, as objects or (arrays) as arrays of their values. */
  private async *read(sql: string, params: unknown[], arrays: boolean): AsyncIterable<unknown[]> {
    if (this.inside.getStore() || this.file === ':memory:') {
      const rows = await this.exclusive(async () => {
        const statement = this.database.db.prepare(sqliteSql(sql));
        statement.setReturnArrays(arrays);
        return statement.all(...(params as never[]));
      });
      for (let i = 0; i < rows.length; i += BATCH_ROWS) yield rows.slice(i, i + BATCH_ROWS);
      return;
    }
    const reader = new DatabaseSync(this.file, { readOnly: true });
    try {
      reader.exec('BEGIN'); // one snapshot for the whole stream
      const statement = reader.prepare(sqliteSql(sql));
      statement.setReturnArrays(arrays);
      let batch: unknown[] = [];
      for (const row of statement.iterate(...(params as never[]))) {
        batch.push(row);
        if (batch.length < FILE_BATCH_ROWS) continue;
        yield batch;
        batch = [];
      }
      if (batch.length) yield batch;
      reader.exec('COMMIT');
    } finally {
      reader.close();
    }
  }

  transaction<T>(fn: () => Promise<T>): Promise<T> {
    if (this.inside.getStore()) return fn();
    return this.exclusive(async () => {
      this.database.db.exec('BEGIN IMMEDIATE');
      try {
        const result = await fn();
        this.database.db.exec('COMMIT');
        return result;
      } catch (error) {
        this.database.db.exec('ROLLBACK');
        throw error;
      }
    });
  }

  freshId(table: string, column: string, make: () => string): Promise<string> {
    return freshId((sql, ...params) => this.get(sql, ...params), table, column, make);
  }

  async close(): Promise<void> {
    await this.exclusive(async () => this.database.close());
  }
}
