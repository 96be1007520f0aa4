// The sandbox's embedded store: SQLite (node:sqlite), schema migrations by PRAGMA user_version, and
// one transaction per state change. node:sqlite is synchronous, so a transaction never interleaves
// with another request's: a read-check-write (a card key rotation, a capture) is atomic as written.
import { chmodSync, closeSync, mkdirSync, openSync } from 'node:fs';
import path from 'node:path';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import { SettingRefused } from './setting-refused.ts';

/**
 * A store a newer sandbox has migrated is not opened: this code would read tables it does not know as
 * if they were its own (a rolling upgrade's old instances, a checkout run on a shared database).
 */
export function refuseNewerSchema(version: number): void {
  if (version > MIGRATIONS.length)
    throw new Error(
      `the database is at schema v${version}, newer than this sandbox's v${MIGRATIONS.length}: a newer sandbox migrated it; run that version (or a later one) on it, or start on another database`,
    );
}

/**
 * An older schema is not opened by a program that migrates nothing (`sandbox accounts`): the
 * instances of an older sandbox run on it, and it must not write to tables it would read as its own.
 */
export function refuseOlderSchema(version: number): void {
  if (version < MIGRATIONS.length)
    throw new Error(
      `the database is at schema v${version}, older than this sandbox's v${MIGRATIONS.length}: an older sandbox's instances run on it; run that version's command on it, or upgrade them (this version's first start migrates it)`,
    );
}

/** How a store is opened: migrated to this code's schema (the sandbox), or as it is (see SqliteDatabase). */
export interface OpenOptions {
  /** false: no file made, nothing migrated, and a database at another schema version refused. */
  migrate?: boolean;
  /**
   * SQLite: false starts no checkpointing thread (store-sqlite.ts); SQLite's own automatic checkpoint
   * stays on (past 1,000 pages of log, and when the last connection closes). For a program that opens the store for a few statements and
   * closes it (`sandbox accounts`): the thread, a Node environment of its own, was about a third of
   * such a command's CPU, for checkpoints the instances serving the database make anyway.
   */
  checkpointThread?: boolean;
}

export const MIGRATIONS: string[] = [
  `CREATE TABLE accounts (
     kind TEXT NOT NULL, id TEXT NOT NULL, api_key TEXT NOT NULL, passphrase TEXT NOT NULL,
     partner_id TEXT, profile TEXT NOT NULL DEFAULT '{}', notify_url TEXT, created_at TEXT NOT NULL,
     PRIMARY KEY (kind, id));
   CREATE TABLE access_tokens (token TEXT PRIMARY KEY, merchant_id TEXT NOT NULL, amount TEXT, currency TEXT, expires_at TEXT NOT NULL);
   CREATE TABLE surcharge_rates (merchant_id TEXT NOT NULL, card_type TEXT NOT NULL, basis_points INTEGER NOT NULL, PRIMARY KEY (merchant_id, card_type));
   CREATE TABLE cards (
     card_id TEXT PRIMARY KEY, merchant_id TEXT NOT NULL, card_key TEXT NOT NULL, ivr_card_id TEXT NOT NULL,
     name TEXT NOT NULL, pan_encrypted TEXT NOT NULL, bin TEXT NOT NULL, last4 TEXT NOT NULL, fingerprint TEXT NOT NULL,
     card_type TEXT NOT NULL, expiry_month TEXT NOT NULL, expiry_year TEXT NOT NULL, added_at TEXT NOT NULL);
   CREATE TABLE blacklist (
     entry_id TEXT PRIMARY KEY, merchant_id TEXT NOT NULL, fingerprint TEXT NOT NULL, bin TEXT NOT NULL, last4 TEXT NOT NULL,
     expiry_month TEXT NOT NULL, expiry_year TEXT NOT NULL, name TEXT NOT NULL, UNIQUE (merchant_id, fingerprint));
   CREATE TABLE transactions (
     id TEXT PRIMARY KEY, merchant_id TEXT NOT NULL, kind TEXT NOT NULL, status TEXT NOT NULL, response_code INTEGER NOT NULL,
     response_message TEXT NOT NULL, amount INTEGER NOT NULL, captured INTEGER NOT NULL DEFAULT 0, refunded INTEGER NOT NULL DEFAULT 0,
     currency TEXT NOT NULL, reference TEXT, product TEXT, card_type TEXT, masked_pan TEXT, expiry_month TEXT, expiry_year TEXT,
     auth_code TEXT NOT NULL, auth_response_code TEXT NOT NULL, auth_message TEXT NOT NULL, receipt_no TEXT NOT NULL,
     settled_date TEXT, parent_id TEXT, custom TEXT NOT NULL DEFAULT '[]', created_at TEXT NOT NULL);
   CREATE INDEX transactions_reference ON transactions (merchant_id, reference);
   CREATE INDEX transactions_settled ON transactions (merchant_id, settled_date);
   CREATE TABLE dd_authorisations (
     fingerprint TEXT PRIMARY KEY, merchant_id TEXT NOT NULL, bsb TEXT NOT NULL, account_number TEXT NOT NULL, account_name TEXT NOT NULL,
     email TEXT, notify_url TEXT, hash_salt TEXT, created_at TEXT NOT NULL);
   CREATE TABLE direct_debits (
     id TEXT PRIMARY KEY, merchant_id TEXT NOT NULL, reference TEXT, amount INTEGER NOT NULL, currency TEXT NOT NULL,
     bsb TEXT NOT NULL, account_number TEXT NOT NULL, settlement_date TEXT NOT NULL, custom TEXT NOT NULL, created_at TEXT NOT NULL);
   CREATE TABLE batches (id TEXT PRIMARY KEY, merchant_id TEXT NOT NULL, notify_url TEXT, lines TEXT NOT NULL, created_at TEXT NOT NULL);
   CREATE TABLE merchant_requests (reference TEXT PRIMARY KEY, partner_id TEXT NOT NULL, status TEXT NOT NULL, merchant_id TEXT, created_at TEXT NOT NULL);
   CREATE TABLE agreements (id TEXT PRIMARY KEY, merchant_id TEXT NOT NULL, status TEXT NOT NULL, payer TEXT NOT NULL, terms TEXT NOT NULL, created_at TEXT NOT NULL);
   CREATE TABLE payto_payments (
     id TEXT PRIMARY KEY, merchant_id TEXT NOT NULL, agreement_id TEXT NOT NULL, status TEXT NOT NULL, reference TEXT NOT NULL,
     product TEXT, amount REAL NOT NULL, last_payment INTEGER, created_at TEXT NOT NULL);
   CREATE TABLE payids (pay_id TEXT PRIMARY KEY, merchant_id TEXT NOT NULL, name TEXT NOT NULL, status TEXT NOT NULL, reference TEXT, created_at TEXT NOT NULL);
   CREATE TABLE payid_transactions (
     id TEXT PRIMARY KEY, merchant_id TEXT NOT NULL, pay_id TEXT NOT NULL, amount REAL NOT NULL, refunded REAL NOT NULL DEFAULT 0,
     payer_name TEXT, reference TEXT, created_at TEXT NOT NULL);
   CREATE TABLE payouts (id TEXT PRIMARY KEY, merchant_id TEXT NOT NULL, reference TEXT NOT NULL, notify_url TEXT, created_at TEXT NOT NULL);
   CREATE TABLE payout_transactions (
     id TEXT PRIMARY KEY, payout_id TEXT NOT NULL, merchant_id TEXT NOT NULL, reference TEXT NOT NULL, payee TEXT NOT NULL,
     detail TEXT NOT NULL, attempts TEXT NOT NULL);
   CREATE TABLE notifications (
     id INTEGER PRIMARY KEY AUTOINCREMENT, event TEXT NOT NULL, subject TEXT NOT NULL, url TEXT NOT NULL, body TEXT NOT NULL,
     signer_kind TEXT NOT NULL, signer_id TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, delivered INTEGER NOT NULL DEFAULT 0,
     next_attempt_at TEXT NOT NULL, last_attempt_at TEXT, last_status INTEGER);`,
  // v2: the 3D Secure sessions checkEnrollment opens, for checkTDSAuth and checkPARes to find.
  `CREATE TABLE three_ds_sessions (token TEXT PRIMARY KEY, merchant_id TEXT NOT NULL, enrolled INTEGER NOT NULL, created_at TEXT NOT NULL);`,
  // v3: PayTo and PayID amounts in whole cents (they were REAL major units, summed as binary floats).
  `ALTER TABLE payto_payments ADD COLUMN amount_cents INTEGER NOT NULL DEFAULT 0;
   UPDATE payto_payments SET amount_cents = CAST(round(amount * 100) AS INTEGER);
   ALTER TABLE payto_payments DROP COLUMN amount;
   ALTER TABLE payto_payments RENAME COLUMN amount_cents TO amount;
   ALTER TABLE payid_transactions ADD COLUMN amount_cents INTEGER NOT NULL DEFAULT 0;
   ALTER TABLE payid_transactions ADD COLUMN refunded_cents INTEGER NOT NULL DEFAULT 0;
   UPDATE payid_transactions SET amount_cents = CAST(round(amount * 100) AS INTEGER), refunded_cents = CAST(round(refunded * 100) AS INTEGER);
   ALTER TABLE payid_transactions DROP COLUMN amount;
   ALTER TABLE payid_transactions DROP COLUMN refunded;
   ALTER TABLE payid_transactions RENAME COLUMN amount_cents TO amount;
   ALTER TABLE payid_transactions RENAME COLUMN refunded_cents TO refunded;`,
  // v4: batches run in slices: the lines still to run, where it stopped, and each line's result.
  `ALTER TABLE batches ADD COLUMN status TEXT NOT NULL DEFAULT 'completed';
   ALTER TABLE batches ADD COLUMN pending TEXT NOT NULL DEFAULT '[]';
   ALTER TABLE batches ADD COLUMN next_line INTEGER NOT NULL DEFAULT 0;
   CREATE TABLE batch_lines (batch_id TEXT NOT NULL, seq INTEGER NOT NULL, line TEXT NOT NULL, PRIMARY KEY (batch_id, seq));`,
  // v5: a direct debit the payer's bank dishonoured (the control API forces it).
  `ALTER TABLE direct_debits ADD COLUMN dishonoured_at TEXT;`,
  // v6: a notification claimed by one instance until its lease ends (sandbox/delivery-queue.ts).
  `ALTER TABLE notifications ADD COLUMN claimed_by TEXT;
   ALTER TABLE notifications ADD COLUMN claimed_until TEXT;
   CREATE INDEX notifications_due ON notifications (delivered, next_attempt_at);`,
  // v7: the vault key of a store that has no file beside it (PostgreSQL), made once, shared by every instance.
  `CREATE TABLE sandbox_keys (name TEXT PRIMARY KEY, value TEXT NOT NULL);`,
  // v8: the sandbox clock's offset, shared by every instance on the store (clock-store.ts).
  `CREATE TABLE sandbox_clock (name TEXT PRIMARY KEY, offset_ms INTEGER NOT NULL);`,
  // v9: the control API's forced outcomes, one per merchant and operation, for whichever instance serves the next call.
  `CREATE TABLE forced_outcomes (merchant_id TEXT NOT NULL, operation_id TEXT NOT NULL, outcome TEXT NOT NULL, PRIMARY KEY (merchant_id, operation_id));`,
  // v10: every delivery attempt of a notification, by whichever instance made it (the control API's history).
  `CREATE TABLE delivery_attempts (notification_id INTEGER NOT NULL, seq INTEGER NOT NULL, at TEXT NOT NULL, status INTEGER NOT NULL, ms INTEGER NOT NULL, PRIMARY KEY (notification_id, seq));`,
  // v11: payout attempts move with the clock (payout-attempts.ts); when a transaction's notification falls due.
  `ALTER TABLE payout_transactions ADD COLUMN notify_at TEXT;
   CREATE INDEX payout_transactions_due ON payout_transactions (notify_at);`,
  // v12: a notification sent again names the one it repeats (the control API's resend); chaos for a
  // notification address (sandbox/chaos.ts): the setting, each notification's number in its run, and
  // what the chaos did beside each attempt: a forged or stale copy, a repeat, a dropped answer (value: the
  // receiver's status), a delay or a hold (value: its ms).
  `ALTER TABLE notifications ADD COLUMN resent_from INTEGER;
   ALTER TABLE notifications ADD COLUMN chaos_seq INTEGER;
   CREATE TABLE chaos_settings (
     signer_kind TEXT NOT NULL, signer_id TEXT NOT NULL, url TEXT NOT NULL, seed INTEGER NOT NULL, rates TEXT NOT NULL,
     max_delay_ms INTEGER NOT NULL, stale_seconds INTEGER NOT NULL, next_seq INTEGER NOT NULL DEFAULT 1, created_at TEXT NOT NULL,
     PRIMARY KEY (signer_kind, signer_id, url));
   CREATE TABLE chaos_posts (
     notification_id INTEGER NOT NULL, attempt INTEGER NOT NULL, n INTEGER NOT NULL, kind TEXT NOT NULL, value INTEGER NOT NULL,
     at TEXT NOT NULL, PRIMARY KEY (notification_id, attempt, n));`,
  // v13: each account's request log (request-log.ts): a line per request made with its credentials, the
  // operation and outcome to filter by, the line itself as JSON.
  `CREATE TABLE request_log (
     id INTEGER PRIMARY KEY AUTOINCREMENT, account_kind TEXT NOT NULL, account_id TEXT NOT NULL, at TEXT NOT NULL,
     operation TEXT, outcome TEXT NOT NULL, entry TEXT NOT NULL);
   CREATE INDEX request_log_account ON request_log (account_kind, account_id, id);`,
  // v14: that the database's accounts were seeded (accounts.ts's seedAccounts): a row written once, by
  // the first start on a new database, in the transaction that seeds it. A database made before it
  // holds its seeded accounts already: it is marked here.
  `CREATE TABLE sandbox_seeded (name TEXT PRIMARY KEY, at TEXT NOT NULL);
   INSERT INTO sandbox_seeded (name, at) SELECT 'accounts', created_at FROM accounts ORDER BY created_at LIMIT 1;`,
  // v15: the base time of each account's latest clock advance (clock-store.ts): a notification of the
  // account that fell due by then fell due within the span the clock moved over, and its attempt is
  // dated at the time it fell due (notifier.ts).
  `ALTER TABLE sandbox_clock ADD COLUMN advanced_to TEXT;`,
  // v16: an account's notifications found by their signer (clock-store.ts's advance reads the account's
  // undelivered ones inside the write lock; each claim ranks the due ones by account): by the index,
  // not by reading every notification of the instance.
  `CREATE INDEX notifications_signer ON notifications (signer_kind, signer_id, delivered);`,
];

export type Row = Record<string, any>;

/**
 * The sandbox's store, asynchronous so that it can be a database server shared by several instances.
 * SQL keeps `?` placeholders (the PostgreSQL store numbers them). A read-check-write runs in
 * `transaction` and reads the rows it will change with `SELECT … FOR UPDATE`: PostgreSQL locks them
 * until the commit (another instance waits); the SQLite store drops the clause, its transactions
 * being serialised whole. `INSERT OR IGNORE` is written once and the PostgreSQL store translates it.
 */
export interface Store {
  readonly kind: 'sqlite' | 'postgres';
  get<T extends Row = Row>(sql: string, ...params: unknown[]): Promise<T | undefined>;
  all<T extends Row = Row>(sql: string, ...params: unknown[]): Promise<T[]>;
  run(sql: string, ...params: unknown[]): Promise<{ changes: number }>;
  /** Rows streamed, never all in memory: SQLite's statement iterator, a PostgreSQL cursor. */
  iterate<T extends Row = Row>(sql: string, ...params: unknown[]): AsyncIterable<T>;
  /**
   * The same stream a batch of at most BATCH_ROWS rows at a time, each row an array of its values in
   * the SELECT's order: a large read without an object and a promise per row. It holds its statement
   * (a PostgreSQL cursor and its pooled connection, an SQLite read transaction) until the last batch
   * is taken: a reader that may stall (a client's download) reads pages with `arrays` instead.
   */
  batches(sql: string, ...params: unknown[]): AsyncIterable<unknown[][]>;
  /**
   * One statement's rows, each an array of its values in the SELECT's order, as `all` reads them: a
   * page of a paged read (the settlement export's), which holds nothing once it has answered.
   */
  arrays(sql: string, ...params: unknown[]): Promise<unknown[][]>;
  /**
   * fn in one transaction, committed together or rolled back when it throws. Nested calls join the
   * outer one. The transaction begins at fn's first statement that writes or locks
   * (beginsTransaction). PostgreSQL retries fn on a serialisation failure or deadlock (40001, 40P01).
   */
  transaction<T>(fn: () => Promise<T>): Promise<T>;
  /**
   * A unit of work's last write: a statement that changes one row, given with the row it stores
   * (`row`, the columns it writes), which it answers. PostgreSQL defers it to the unit's end, after
   * the answer has been checked: when nothing else came after it, it runs alone, in autocommit (one
   * statement is atomic by itself), without BEGIN and COMMIT; any statement after it in the unit runs
   * it first, in the unit's transaction. When it changes no row, the unit is run again from its start
   * with its statements run as they come: the statement then runs at once and answers what it
   * returned (RETURNING), or undefined. Optional: a store without it runs the statement at once
   * (`lastWrite` below).
   */
  lastWrite?<T extends Row>(row: T, sql: string, ...params: unknown[]): Promise<T | undefined>;
  /** A new identifier for table.column, made by `make` until one is not taken (call it in the inserting transaction). */
  freshId(table: string, column: string, make: () => string): Promise<string>;
  readonly schemaVersion: Promise<number>;
  close(): Promise<void>;
}

/**
 * Statements whose plan depends neither on their values nor on their tables' sizes: each table they
 * read is reached through one index only, by equality on a unique key (or on a unique key's prefix,
 * for a table of settings). PostgreSQL plans them once per connection (a generic plan) where every
 * other statement is planned at each run (store-postgres.ts). The request path's statements: the
 * account's, a purchase's insert, a transaction's lookup by identifier.
 */
const plannedOnceStatements = new Set<string>();
export function plannedOnce(sql: string): string {
  plannedOnceStatements.add(sql);
  return sql;
}
export const isPlannedOnce = (sql: string) => plannedOnceStatements.has(sql);

/** store.lastWrite where the store defers it, else the statement run at once (its RETURNING row). */
export const lastWrite = <T extends Row>(store: Store, row: T, sql: string, ...params: unknown[]) =>
  store.lastWrite ? store.lastWrite(row, sql, ...params) : store.get<T>(sql, ...params);

/**
 * The most rows a batch of Store.batches holds: PostgreSQL's cursor fetches this many in one round
 * trip (about 500 KB of settlement rows). SQLite, with no round trip to save, hands out smaller
 * batches (store-sqlite.ts).
 */
export const BATCH_ROWS = 5000;

/**
 * Whether a statement must run inside its unit of work's transaction: anything but a plain SELECT (a
 * write), and a SELECT that locks rows or takes an advisory lock. Both stores begin a unit's
 * transaction at its first such statement: a plain SELECT before it reads what it would read inside
 * (PostgreSQL's READ COMMITTED gives each statement its own snapshot, and nothing is written yet), so
 * a unit that only reads costs no BEGIN and COMMIT, and one that writes holds its locks for less time.
 */
export const beginsTransaction = (sql: string) =>
  !/^\s*SELECT\b/i.test(sql) ||
  /\bFOR\s+(UPDATE|SHARE|NO\s+KEY\s+UPDATE|KEY\s+SHARE)\b|pg_advisory|nextval|setval/i.test(sql);

/** Whether PGW_DB names a PostgreSQL database (postgres:// or postgresql://) rather than an SQLite file. */
export const isPostgresUrl = (url: string) => /^postgres(ql)?:\/\//i.test(url);

/**
 * The synchronous SQLite database that the async SQLite store (store-sqlite.ts) wraps: file
 * permissions, WAL, the migrations by PRAGMA user_version. The sandbox itself uses the async `Store`.
 */
/**
 * SQLite's synchronous level in WAL mode (PGW_SQLITE_SYNCHRONOUS): NORMAL by default. Both keep every
 * committed transaction through a crash of the process (kill -9: the write-ahead log is written
 * before COMMIT returns, into the operating system's cache) and the file consistent through a power
 * loss; FULL also syncs the log to the disk at each commit, so a power loss loses no committed
 * transaction, where NORMAL may lose the last ones (those since the log was last synced, at a
 * checkpoint). NORMAL costs no fsync per commit (docs/BENCHMARKS.md measures both).
 */
export const SQLITE_SYNCHRONOUS = ['NORMAL', 'FULL'] as const;
export function sqliteSynchronousFromEnv(env: NodeJS.ProcessEnv): (typeof SQLITE_SYNCHRONOUS)[number] {
  const value = (env.PGW_SQLITE_SYNCHRONOUS || 'NORMAL').toUpperCase();
  if (!(SQLITE_SYNCHRONOUS as readonly string[]).includes(value))
    throw new SettingRefused('PGW_SQLITE_SYNCHRONOUS', `is NORMAL or FULL, not ${env.PGW_SQLITE_SYNCHRONOUS}`);
  return value as (typeof SQLITE_SYNCHRONOUS)[number];
}

/** How long a connection waits for another process's lock on the file before it fails. */
export const BUSY_TIMEOUT_MS = 5000;

export class SqliteDatabase {
  readonly db: DatabaseSync;

  /**
   * With migrate false the file is opened as it is: it is not made, nor its permissions changed, nor
   * migrated; one at another schema version is refused (a program that checked it first, read-only).
   */
  constructor(
    file: string,
    synchronous: (typeof SQLITE_SYNCHRONOUS)[number] = 'NORMAL',
    { migrate = true }: OpenOptions = {},
  ) {
    if (file !== ':memory:' && migrate) {
      // The store holds encrypted card numbers and the accounts' secrets: owner-only, whatever the
      // umask. SQLite gives its -wal and -shm files the database file's permissions.
      mkdirSync(path.dirname(path.resolve(file)), { recursive: true, mode: 0o700 });
      closeSync(openSync(file, 'a', 0o600));
      chmodSync(file, 0o600);
    }
    this.db = new DatabaseSync(file);
    // A refusal once the file is open (a schema newer than this code's, a failed migration) closes it
    // first: before, a refused migration left its handle open in the process.
    try {
      // The busy timeout first: another process starting on the same new file may hold the lock that
      // switching to WAL needs, and without the timeout this one would fail at once instead of waiting.
      this.db.exec(
        `PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}; PRAGMA foreign_keys = ON; PRAGMA synchronous = ${synchronous};`,
      );
      if (!migrate) {
        refuseNewerSchema(this.schemaVersion);
        refuseOlderSchema(this.schemaVersion);
      }
      if (file !== ':memory:') this.toWal();
      if (migrate) this.migrate();
    } catch (error) {
      this.db.close();
      throw error;
    }
  }

  /**
   * The file into WAL mode. Switching takes the file's exclusive lock, and where waiting could
   * deadlock (this connection holds a shared lock another one needs) SQLite answers BUSY at once,
   * without its busy handler: with 12 processes opening a new file together, 5 of 180 opens failed
   * with "database is locked". So the switch is tried again, for up to the busy timeout.
   */
  private toWal(): void {
    const deadline = Date.now() + 5000;
    const pause = new Int32Array(new SharedArrayBuffer(4));
    for (;;) {
      try {
        const mode = this.db.prepare('PRAGMA journal_mode = WAL').get() as { journal_mode: string };
        if (mode.journal_mode === 'wal') return;
      } catch (error) {
        if ((error as { errcode?: number }).errcode !== 5 /* SQLITE_BUSY */) throw error;
      }
      if (Date.now() > deadline) throw new Error('database is locked: another process holds it (5 s)');
      Atomics.wait(pause, 0, 0, 5 + Math.random() * 20); // a synchronous pause: the constructor is synchronous
    }
  }

  /**
   * Applies every migration the file has not had yet, each in its own transaction. The version is
   * read again inside the transaction: processes started together on a new file take turns at the
   * write lock, and the later ones find each migration done rather than apply it twice.
   */
  private migrate(): void {
    refuseNewerSchema(this.schemaVersion);
    if (this.schemaVersion >= MIGRATIONS.length) return;
    MIGRATIONS.forEach((sql, i) => {
      this.transaction(() => {
        if (this.schemaVersion > i) return;
        this.db.exec(sql);
        this.db.exec(`PRAGMA user_version = ${i + 1}`);
      });
    });
  }

  get schemaVersion(): number {
    return Number((this.db.prepare('PRAGMA user_version').get() as Row).user_version);
  }

  /** Runs fn in one transaction: everything it writes is committed together, or nothing is. */
  transaction<T>(fn: () => T): T {
    if (this.db.isTransaction) return fn();
    this.db.exec('BEGIN IMMEDIATE');
    try {
      const result = fn();
      this.db.exec('COMMIT');
      return result;
    } catch (error) {
      this.db.exec('ROLLBACK');
      throw error;
    }
  }

  /**
   * A new identifier for table.column, made by `make` until one is not taken. Random identifiers of
   * the gateway's forms can repeat (KOCI + 8 digits: one in 90 million a draw); read and insert run
   * in one synchronous transaction, so the identifier checked free is still free when inserted.
   */
  freshId(table: string, column: string, make: () => string): string {
    for (let attempt = 0; attempt < 32; attempt++) {
      const id = make();
      if (!this.get(`SELECT 1 FROM ${table} WHERE ${column} = ?`, id)) return id;
    }
    throw new Error(`No free identifier for ${table}.${column}`);
  }

  // Statements are prepared once per SQL text: preparing costs more than running a small one, and a
  // batch runs the same few statements thousands of times. The SQL texts are the handlers' constants.
  private readonly statements = new Map<string, StatementSync>();
  statement(sql: string): StatementSync {
    let s = this.statements.get(sql);
    if (!s) {
      s = this.db.prepare(sql);
      this.statements.set(sql, s);
    }
    return s;
  }

  get<T extends Row = Row>(sql: string, ...params: unknown[]): T | undefined {
    return this.statement(sql).get(...(params as never[])) as T | undefined;
  }

  all<T extends Row = Row>(sql: string, ...params: unknown[]): T[] {
    return this.statement(sql).all(...(params as never[])) as T[];
  }

  run(sql: string, ...params: unknown[]): void {
    this.statement(sql).run(...(params as never[]));
  }

  close(): void {
    if (this.db.isOpen) this.db.close();
  }
}
