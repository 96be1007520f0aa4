// The embedded store behind the async Store interface: node:sqlite is synchronous, but a handler that
// awaits inside a transaction gives the event loop to other requests, which would then run their
// statements inside the open transaction (one connection, one transaction). So a transaction takes a
// queue (an async mutex) from its BEGIN to its COMMIT, and a statement of any other unit of work that
// comes while a transaction is open waits for its turn. A statement that comes while none is open
// runs at once: it is synchronous, nothing can interleave with it. AsyncLocalStorage tells a
// transaction's own statements (and nested transactions) that they belong to it.
//
// A transaction begins (BEGIN IMMEDIATE, the file's write lock) at its first statement that writes or
// locks (beginsTransaction, store.ts): its plain reads before it run as reads outside do, as they
// would on PostgreSQL, so a unit of work that only reads never takes the write lock.
import { AsyncLocalStorage } from 'node:async_hooks';
import { DatabaseSync } from 'node:sqlite';
import {
  BATCH_ROWS,
  beginsTransaction,
  SqliteDatabase,
  sqliteSynchronousFromEnv,
  type Row,
  type Store,
} from './store.ts';
import { freshId } from './fresh-id.ts';

/**
 * Rows of a batch read from a file (at most BATCH_ROWS): a few hundred, so that a batch's rows are
 * done with before the young generation is next collected, rather than copied and promoted by it.
 */
const FILE_BATCH_ROWS = 256;

/** SQLite serialises whole transactions here, so the row-lock clause PostgreSQL needs is dropped. */
const sqliteSql = (sql: string) => sql.replace(/\s+FOR\s+UPDATE(\s+SKIP\s+LOCKED)?\s*$/i, '');

/** A unit of work: once begun, it holds the queue until its COMMIT or ROLLBACK. */
interface Unit {
  begin?: Promise<void>;
  release?: () => void;
}

export class SqliteStore implements Store {
  readonly kind = 'sqlite' as const;
  readonly database: SqliteDatabase;
  private readonly file: string;
  private readonly unit = new AsyncLocalStorage<Unit>();
  private tail: Promise<void> = Promise.resolve();

  constructor(file: string, env: NodeJS.ProcessEnv = process.env) {
    this.file = file;
    this.database = new SqliteDatabase(file, sqliteSynchronousFromEnv(env));
  }

  get schemaVersion(): Promise<number> {
    return this.statement('SELECT', () => this.database.schemaVersion);
  }

  /** The queue's next turn: resolves with the function that ends it. */
  private turn(): Promise<() => void> {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const turn = this.tail.then(() => release);
    this.tail = this.tail.then(() => released);
    return turn;
  }

  /** The unit's transaction begun: its turn of the queue taken, then BEGIN IMMEDIATE (once, whoever asks first). */
  private begin(unit: Unit): Promise<void> {
    unit.begin ??= this.turn().then((release) => this.beginImmediate(unit, release));
    return unit.begin;
  }

  private beginImmediate(unit: Unit, release: () => void): void {
    try {
      this.database.db.exec('BEGIN IMMEDIATE');
    } catch (error) {
      release();
      throw error;
    }
    unit.release = release;
  }

  /** Runs one synchronous statement where it belongs: in its unit's transaction, at once, or at its turn. */
  private async statement<T>(sql: string, run: () => T): Promise<T> {
    const unit = this.unit.getStore();
    if (unit?.release) return run();
    if (unit && beginsTransaction(sql)) {
      await this.begin(unit);
      return run();
    }
    if (!this.database.db.isTransaction) return run();
    const release = await this.turn();
    try {
      return run();
    } finally {
      release();
    }
  }

  get<T extends Row = Row>(sql: string, ...params: unknown[]): Promise<T | undefined> {
    return this.statement(sql, () => this.database.get<T>(sqliteSql(sql), ...params));
  }

  all<T extends Row = Row>(sql: string, ...params: unknown[]): Promise<T[]> {
    return this.statement(sql, () => this.database.all<T>(sqliteSql(sql), ...params));
  }

  run(sql: string, ...params: unknown[]): Promise<{ changes: number }> {
    return this.statement(sql, () => {
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
    if (this.unit.getStore() || this.file === ':memory:') {
      const rows = await this.statement(sql, () => {
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

  async transaction<T>(fn: () => Promise<T>): Promise<T> {
    if (this.unit.getStore()) return fn();
    const unit: Unit = {};
    try {
      const result = await this.unit.run(unit, fn);
      if (unit.release) this.database.db.exec('COMMIT');
      return result;
    } catch (error) {
      if (unit.release && this.database.db.isTransaction) this.database.db.exec('ROLLBACK');
      throw error;
    } finally {
      unit.release?.();
    }
  }

  freshId(table: string, column: string, make: () => string): Promise<string> {
    return freshId((sql, ...params) => this.get(sql, ...params), table, column, make);
  }

  async close(): Promise<void> {
    const release = await this.turn();
    try {
      this.database.close();
    } finally {
      release();
    }
  }
}
