// The embedded store behind the async Store interface: node:sqlite is synchronous, but a handler that
// awaits inside a transaction gives the event loop to other requests, which would then run their
// statements inside the open transaction (one connection, one transaction). So a unit of work takes a
// queue (an async mutex) from its first write to its end, and a write of any other unit that comes
// meanwhile waits for its turn. AsyncLocalStorage tells a unit's own statements (and nested
// transactions) that they belong to it.
//
// A unit begins at its first statement that writes or locks (beginsTransaction, store.ts): its plain
// reads before it run as reads outside do, as they would on PostgreSQL, so a unit of work that only
// reads never takes the write lock.
//
// Grouped commits: the units that write within one turn of the event loop share one transaction.
// The first takes the file's write lock (BEGIN IMMEDIATE); each runs, at its turn, inside a SAVEPOINT
// of its own, so that its failure undoes its own writes only; one COMMIT at the end of the loop's
// turn (setImmediate) ends them all, and no unit answers before it (nor does a failed one, whose
// refusal may rest on a member's writes). A commit costs about the same for one unit or for ten (the
// pages the write-ahead log takes are mostly shared: the table's last page, the indexes'), so under
// load a purchase's commit costs a fraction of what it did (docs/BENCHMARKS.md). Durability is each
// unit's as before: kill -9 loses only units that were not answered; a power loss is as
// PGW_SQLITE_SYNCHRONOUS says (store.ts).
//
// While a group is open the connection holds writes no one has committed, so plain reads outside a
// unit's turn go through a second, read-only connection of their own: WAL gives each of its
// statements the last committed state, never the group's writes, and reads never wait for the queue.
// Another instance's group holding the file's write lock is waited for without holding the event
// loop (waitForLock); the log is checkpointed by a thread of the store's own (CHECKPOINTER).
import { AsyncLocalStorage } from 'node:async_hooks';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import { Worker } from 'node:worker_threads';
import {
  BATCH_ROWS,
  BUSY_TIMEOUT_MS,
  beginsTransaction,
  SqliteDatabase,
  sqliteSynchronousFromEnv,
  type OpenOptions,
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
const sqliteSql = (sql: string) =>
  sql.replace(/\s+FOR\s+(UPDATE|SHARE)(\s+OF\s+\w+(\s*,\s*\w+)*)?(\s+SKIP\s+LOCKED)?\s*$/i, '');

/**
 * The write-ahead log is copied into the database file (a checkpoint) by a thread of its own, every
 * CHECKPOINT_MS, rather than by whichever commit crosses SQLite's 1,000 pages: a checkpoint syncs
 * the log and then the file (two fsyncs) and copies every page changed since the last, which held
 * the event loop, and every request waiting on it, for milliseconds at a time. PASSIVE: it takes no
 * lock a writer waits for, so commits go on appending to the log meanwhile. If the thread cannot
 * run, the connection goes back to checkpointing at its commits.
 */
const CHECKPOINT_MS = 250;
const CHECKPOINTER = `
const { parentPort, workerData } = require('node:worker_threads');
const { DatabaseSync } = require('node:sqlite');
const db = new DatabaseSync(workerData.file);
db.exec('PRAGMA busy_timeout = ' + workerData.busyMs + '; PRAGMA synchronous = ' + workerData.synchronous);
// A checkpoint that fails (the file busy past the timeout) is tried again at the next tick.
const timer = setInterval(() => { try { db.exec('PRAGMA wal_checkpoint(PASSIVE)'); } catch {} }, workerData.ms);
// Asked to stop: its connection closed, then the thread ends with nothing left to run.
parentPort.once('message', () => { clearInterval(timer); db.close(); parentPort.close(); });
`;
/** How often a writer that found the file locked by another instance tries again (waitForLock). */
const LOCK_RETRY_MS = 1;

/** A unit of work: once begun (its savepoint open in the group's transaction), it holds the queue until it ends. */
interface Unit {
  begin?: Promise<void>;
  release?: () => void;
  group?: Group;
}

/** The units sharing one transaction, and the commit that answers them all. */
interface Group {
  committed: Promise<void>;
  settle(error?: unknown): void;
}

/** A SQL text as the handlers write it, read once: SQLite's text, whether it writes, its statements. */
interface Statement {
  sql: string;
  writes: boolean;
  main?: StatementSync;
  reader?: StatementSync;
}

export class SqliteStore implements Store {
  readonly kind = 'sqlite' as const;
  readonly database: SqliteDatabase;
  private readonly file: string;
  /** Plain reads outside a unit's turn, on the last committed state (none for :memory:, which cannot have two connections). */
  private readonly reader: DatabaseSync | undefined;
  private readonly readerControl: { begin: StatementSync; commit: StatementSync } | undefined;
  private snapshotOpen = false;
  private readonly unit = new AsyncLocalStorage<Unit>();
  private tail: Promise<void> = Promise.resolve();
  private group: Group | undefined;
  private readonly statements = new Map<string, Statement>();
  private readonly control: Record<'noWait' | 'wait' | 'savepoint' | 'release' | 'undo' | 'commit', StatementSync>;

  private readonly checkpointer: Worker | undefined;

  constructor(file: string, env: NodeJS.ProcessEnv = process.env, options: OpenOptions = {}) {
    this.file = file;
    const synchronous = sqliteSynchronousFromEnv(env);
    this.database = new SqliteDatabase(file, synchronous, options);
    const db = this.database.db;
    this.control = {
      noWait: db.prepare('PRAGMA busy_timeout = 0'),
      wait: db.prepare(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`),
      savepoint: db.prepare('SAVEPOINT unit'),
      release: db.prepare('RELEASE unit'),
      undo: db.prepare('ROLLBACK TO unit'),
      commit: db.prepare('COMMIT'),
    };
    if (file !== ':memory:') {
      this.reader = new DatabaseSync(file, { readOnly: true });
      this.reader.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
      this.readerControl = { begin: this.reader.prepare('BEGIN'), commit: this.reader.prepare('COMMIT') };
      if (options.checkpointThread !== false) this.checkpointer = this.checkpointInThread(synchronous);
    }
  }

  private checkpointInThread(synchronous: string): Worker {
    const db = this.database.db;
    db.exec('PRAGMA wal_autocheckpoint = 0');
    const worker = new Worker(CHECKPOINTER, {
      eval: true,
      workerData: { file: this.file, synchronous, ms: CHECKPOINT_MS, busyMs: BUSY_TIMEOUT_MS },
    });
    worker.unref(); // the store's close() ends it; it never keeps a process alive
    const atCommits = () => {
      if (db.isOpen) db.exec('PRAGMA wal_autocheckpoint = 1000');
    };
    worker.on('error', atCommits);
    worker.on('exit', atCommits);
    return worker;
  }

  private async stopCheckpointer(): Promise<void> {
    const worker = this.checkpointer;
    if (!worker) return;
    worker.removeAllListeners('exit');
    const exited = new Promise((resolve) => worker.once('exit', resolve));
    worker.ref(); // waited for now: this process must not end before the thread has closed its connection
    worker.postMessage('stop');
    await exited;
  }

  get schemaVersion(): Promise<number> {
    return this.read(() => this.database.schemaVersion);
  }

  /** The queue's next turn: resolves with the function that ends it. */
  private turn(): Promise<() => void> {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const turn = this.tail.then(() => release);
    this.tail = this.tail.then(() => released);
    return turn;
  }

  /** The unit begun: its turn of the queue taken, then its savepoint in the group's transaction (once, whoever asks first). */
  private begin(unit: Unit): Promise<void> {
    unit.begin ??= this.turn().then((release) => this.join(unit, release));
    return unit.begin;
  }

  /**
   * At the unit's turn: the group's transaction begun if none is open (the file's write lock), the
   * unit's savepoint opened. At once when the lock is free; else waited for without holding the
   * event loop (waitForLock).
   */
  private join(unit: Unit, release: () => void): void | Promise<void> {
    let busy: unknown;
    try {
      if (!this.group) busy = this.tryBegin();
    } catch (error) {
      release();
      throw error;
    }
    if (busy === undefined) return this.enter(unit, release);
    return this.waitForLock(busy).then(
      () => this.enter(unit, release),
      (error: unknown) => {
        release();
        throw error;
      },
    );
  }

  /** The unit inside the group's transaction: its savepoint opened (the group opened first if it is not). */
  private enter(unit: Unit, release: () => void): void {
    try {
      if (!this.group) this.openGroup();
      this.control.savepoint.run();
    } catch (error) {
      if (this.group === undefined && this.database.db.isTransaction) this.database.db.exec('ROLLBACK');
      release();
      throw error;
    }
    unit.group = this.group!;
    unit.release = release;
  }

  /** A group for the transaction just begun (tryBegin). */
  private openGroup(): void {
    let settle!: (error?: unknown) => void;
    const committed = new Promise<void>((resolve, reject) => {
      settle = (error) => (error === undefined ? resolve() : reject(error));
    });
    committed.catch(() => {}); // a group no unit waits on (a failed one's) must not be an unhandled rejection
    const group: Group = { committed, settle };
    this.group = group;
    // The end of this turn of the event loop: every unit that began in it has had its turn by then,
    // unless one holds it across an await of something else; the commit then waits for its turn.
    setImmediate(() => void this.commitAtTurn(group));
  }

  private async commitAtTurn(group: Group): Promise<void> {
    if (this.group !== group) return;
    const release = await this.turn();
    try {
      this.commit(group);
    } finally {
      release();
    }
  }

  /** Ends the group's transaction (at a turn of the queue: no unit is inside it) and answers its units. */
  private commit(group: Group): void {
    if (this.group !== group) return; // already ended: it failed, or close() committed it
    this.group = undefined;
    try {
      this.control.commit.run();
      this.endSnapshot(); // the reads after it see it
      group.settle();
    } catch (error) {
      if (this.database.db.isTransaction) this.database.db.exec('ROLLBACK');
      group.settle(error);
    }
  }

  /**
   * BEGIN IMMEDIATE without waiting: undefined when begun, SQLite's busy error when another process
   * holds the file's write lock (any other error is thrown).
   */
  private tryBegin(): unknown {
    this.control.noWait.run();
    try {
      this.database.db.exec('BEGIN IMMEDIATE'); // exec, as the tests count it (request-cost.test.ts)
      return undefined;
    } catch (error) {
      if ((error as { errcode?: number }).errcode !== 5 /* SQLITE_BUSY */) throw error;
      return error;
    } finally {
      this.control.wait.run();
    }
  }

  /**
   * Another process holds the file's write lock (another instance's group): tried again every
   * LOCK_RETRY_MS, for up to the busy timeout, while the event loop goes on serving what needs no
   * lock (reads, other requests' parsing and checks, whose units queue behind this one and then make
   * one group with it), where SQLite's busy handler would sleep in it. Two instances on one file then
   * take the lock in turns, a group each; committing each unit at once instead, to give the lock
   * back sooner, measured 2.6 times slower (docs/BENCHMARKS.md).
   */
  private async waitForLock(busy: unknown): Promise<void> {
    const deadline = Date.now() + BUSY_TIMEOUT_MS;
    for (;;) {
      if (Date.now() > deadline) throw busy;
      await new Promise((resolve) => setTimeout(resolve, LOCK_RETRY_MS));
      busy = this.tryBegin();
      if (busy === undefined) return;
    }
  }

  /** A unit failed at its turn: its own writes undone; if SQLite rolled the whole transaction back, the group failed with it. */
  private undo(unit: Unit, cause: unknown): void {
    const group = unit.group!;
    if (this.group !== group) return;
    try {
      if (!this.database.db.isTransaction) throw cause;
      this.control.undo.run();
      this.control.release.run();
    } catch (error) {
      this.group = undefined;
      if (this.database.db.isTransaction) this.database.db.exec('ROLLBACK');
      group.settle(error);
    }
  }

  /** A SQL text's statement on the connection asked for, prepared once. */
  private prepared(sql: string): Statement {
    let s = this.statements.get(sql);
    if (!s) {
      s = { sql: sqliteSql(sql), writes: beginsTransaction(sql) };
      this.statements.set(sql, s);
    }
    return s;
  }

  private on(s: Statement, connection: 'main' | 'reader'): StatementSync {
    if (connection === 'reader') {
      s.reader ??= this.reader!.prepare(s.sql);
      return s.reader;
    }
    s.main ??= this.database.db.prepare(s.sql);
    return s.main;
  }

  /**
   * Runs one statement where it belongs: in its unit's savepoint (the unit begun at its first write),
   * as a unit of its own when it writes outside one, else as a read of the last committed state.
   */
  private statement<T>(sql: string, run: (statement: StatementSync, connection: DatabaseSync) => T): Promise<T> {
    const s = this.prepared(sql);
    const unit = this.unit.getStore();
    const main = () => run(this.on(s, 'main'), this.database.db);
    try {
      if (unit?.release) return Promise.resolve(main());
    } catch (error) {
      return Promise.reject(error);
    }
    if (unit && s.writes) return this.begin(unit).then(main);
    if (s.writes) return this.transaction(() => this.statement(sql, run));
    if (!this.reader) return this.read(main);
    return this.read(() => {
      this.snapshot();
      return run(this.on(s, 'reader'), this.reader!);
    });
  }

  /**
   * The reader's reads of one callback of the event loop (a request's, up to its next wait for I/O)
   * share one read transaction, ended at the callback's end (nextTick) or by a commit of this
   * process: starting a read transaction takes the write-ahead log's shared-memory locks, which cost
   * more than reading a row by its key. The snapshot is never older than the callback's start, so a
   * request sees every commit made before it arrived, and its own, as before.
   */
  private snapshot(): void {
    if (this.snapshotOpen) return;
    this.readerControl!.begin.run();
    this.snapshotOpen = true;
    process.nextTick(this.endSnapshot);
  }

  private readonly endSnapshot = () => {
    if (!this.snapshotOpen) return;
    this.snapshotOpen = false;
    this.readerControl!.commit.run();
  };

  /**
   * A read outside a unit's turn: at once on the reader's connection; on :memory: (one connection), at
   * once unless a group is open, else at a turn of the queue once the group has committed.
   */
  private read<T>(run: () => T): Promise<T> {
    if (this.reader || !this.group) {
      try {
        return Promise.resolve(run());
      } catch (error) {
        return Promise.reject(error);
      }
    }
    return this.turn().then((release) => {
      try {
        if (this.group) this.commit(this.group);
        return run();
      } finally {
        release();
      }
    });
  }

  get<T extends Row = Row>(sql: string, ...params: unknown[]): Promise<T | undefined> {
    return this.statement(sql, (statement) => statement.get(...(params as never[])) as T | undefined);
  }

  all<T extends Row = Row>(sql: string, ...params: unknown[]): Promise<T[]> {
    return this.statement(sql, (statement) => statement.all(...(params as never[])) as T[]);
  }

  run(sql: string, ...params: unknown[]): Promise<{ changes: number }> {
    return this.statement(sql, (statement) => ({ changes: Number(statement.run(...(params as never[])).changes) }));
  }

  /**
   * Outside a transaction, a file's rows are read through a connection of their own: WAL gives it a
   * snapshot, so the stream neither holds the queue nor sees another request's uncommitted writes.
   * Inside a transaction (or for :memory:, which has no second connection) the rows are read whole
   * under the queue and then yielded.
   */
  async *iterate<T extends Row = Row>(sql: string, ...params: unknown[]): AsyncIterable<T> {
    for await (const batch of this.stream(sql, params, false)) yield* batch as T[];
  }

  batches(sql: string, ...params: unknown[]): AsyncIterable<unknown[][]> {
    return this.stream(sql, params, true) as AsyncIterable<unknown[][]>;
  }

  /** A plain read as `all` runs it (the reader's snapshot of this callback, outside a unit), rows as arrays. */
  arrays(sql: string, ...params: unknown[]): Promise<unknown[][]> {
    return this.statement(sql, (statement) => {
      // The statement is shared with `all` and `get` of the same text: objects again once read.
      statement.setReturnArrays(true);
      try {
        return statement.all(...(params as never[])) as unknown as unknown[][];
      } finally {
        statement.setReturnArrays(false);
      }
    });
  }

  /** iterate and batches: a batch of rows a step, as objects or (arrays) as arrays of their values. */
  private async *stream(sql: string, params: unknown[], arrays: boolean): AsyncIterable<unknown[]> {
    if (this.unit.getStore() || this.file === ':memory:') {
      const rows = await this.statement(sql, (_, connection) => {
        const statement = connection.prepare(sqliteSql(sql));
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
    let result: T;
    try {
      result = await this.unit.run(unit, fn);
    } catch (error) {
      await this.end(unit, error);
      throw error;
    }
    await this.end(unit);
    return result;
  }

  /**
   * The unit's end: its savepoint released (or, when it failed, rolled back to), its turn given up,
   * then the group's commit waited for. A begin still on its way (a statement fn did not wait for)
   * is waited for first, so that it does not open a savepoint after its unit has ended.
   */
  private async end(unit: Unit, failure?: unknown): Promise<void> {
    if (unit.begin && !unit.release) await unit.begin.catch(() => {});
    if (!unit.release) return;
    const group = unit.group!;
    try {
      if (failure === undefined) this.control.release.run();
      else this.undo(unit, failure);
    } catch (error) {
      this.undo(unit, error);
      failure = error;
    } finally {
      unit.release();
    }
    if (failure === undefined) return group.committed;
    // A failed unit's failure (a refusal) may rest on a member's writes, read in its turn: when the
    // group's commit fails, those writes never happened, and the unit fails with the commit's error.
    await group.committed;
    throw failure;
  }

  freshId(table: string, column: string, make: () => string): Promise<string> {
    return freshId((sql, ...params) => this.get(sql, ...params), table, column, make);
  }

  async close(): Promise<void> {
    const release = await this.turn();
    try {
      if (this.group) this.commit(this.group);
      this.endSnapshot();
      await this.stopCheckpointer();
      this.reader?.close();
      this.database.close();
    } finally {
      release();
    }
  }
}
