// Grouped commits on SQLite (sandbox/store-sqlite.ts): the units of work that write in one turn of the
// event loop share one transaction, each in a savepoint of its own, and one COMMIT ends them. What
// must hold whatever the grouping: no unit is answered before its writes are committed (another
// connection sees them), a failed unit's writes are undone and the others' kept, a failure that takes
// the whole transaction fails every member, and a read outside never sees a group's uncommitted writes.
// And the write-ahead log is copied into the database file by the store's own thread, within a
// fraction of a second of a commit, instead of by the commit that crosses 1,000 pages of log.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { Worker } from 'node:worker_threads';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../sandbox/store-sqlite.ts';

const INSERT = "INSERT INTO merchant_requests (reference, partner_id, status, created_at) VALUES (?, 'p', 's', 'x')";

let dir: string;
let store: SqliteStore;
let other: DatabaseSync;
let begins: number;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'pgw-group-'));
  const file = path.join(dir, 'sandbox.db');
  store = new SqliteStore(file, {});
  other = new DatabaseSync(file, { readOnly: true });
  begins = 0;
  const db = store.database.db;
  const exec = db.exec.bind(db);
  db.exec = (sql: string) => {
    if (/^BEGIN/.test(sql)) begins++;
    return exec(sql);
  };
});
afterEach(async () => {
  other.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Whether another connection sees the row: committed. */
const committed = (reference: string) =>
  Boolean(other.prepare('SELECT 1 FROM merchant_requests WHERE reference = ?').get(reference));

const insert = (reference: string) => store.transaction(() => store.run(INSERT, reference));

describe('grouped commits on SQLite', () => {
  it('ten units begun in one turn: one transaction, and each answered only once another connection sees its row', async () => {
    const seenWhenAnswered = await Promise.all(
      Array.from({ length: 10 }, (_, i) => insert(`r${i}`).then(() => committed(`r${i}`))),
    );
    expect(seenWhenAnswered).toEqual(Array(10).fill(true));
    expect(begins).toBe(1);
    // The next turn's units make a transaction of their own.
    await Promise.all([insert('later1'), insert('later2')]);
    expect(begins).toBe(2);
  });

  it("a failed unit's writes are undone, its group's other units are kept, and it waits for their commit too", async () => {
    const failing = store.transaction(async () => {
      await store.run(INSERT, 'failed');
      throw new Error('refused');
    });
    const failedAt = failing.then(
      () => 'answered',
      (error: Error) => `${error.message}; the others ${committed('kept1') ? '' : 'not '}committed`,
    );
    const kept = [insert('kept0'), insert('kept1')];
    expect(await failedAt).toBe('refused; the others committed');
    await Promise.all(kept);
    expect(['kept0', 'failed', 'kept1'].map(committed)).toEqual([true, false, true]);
    expect(begins).toBe(1);
  });

  it('a failure that ends the whole transaction fails every unit of the group: none is answered as done', async () => {
    const first = insert('before');
    const breaking = store.transaction(async () => {
      await store.run(INSERT, 'breaking');
      store.database.db.exec('ROLLBACK'); // as SQLite does on a full disk or an I/O error
      throw new Error('disk I/O error');
    });
    const outcomes = await Promise.allSettled([first, breaking]);
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected']);
    expect(['before', 'breaking'].map(committed)).toEqual([false, false]);
    // The store goes on: the next unit begins a new transaction.
    await insert('after');
    expect(committed('after')).toBe(true);
  });

  it("a unit refused on a member's writes fails with the commit's error when the group's COMMIT fails, not with its refusal", async () => {
    // The group's COMMIT fails (as on a full disk): the member's write never happened, so a refusal
    // drawn from it must not be answered.
    (store as unknown as { control: { commit: { run(): void } } }).control.commit = {
      run: () => {
        throw new Error('disk I/O error');
      },
    };
    const member = insert('member');
    const refused = store.transaction(async () => {
      await store.run(INSERT, 'own');
      if (await store.get('SELECT 1 FROM merchant_requests WHERE reference = ?', 'member'))
        throw new Error('refused: the member is there');
    });
    const outcomes = await Promise.allSettled([member, refused]);
    expect(outcomes.map((o) => (o.status === 'rejected' ? (o.reason as Error).message : 'answered'))).toEqual([
      'disk I/O error',
      'disk I/O error',
    ]);
    expect(['member', 'own'].map(committed)).toEqual([false, false]);
  });

  it("a read outside a unit never sees a group's uncommitted writes, and does not wait for the group", async () => {
    let inserted!: () => void;
    const written = new Promise<void>((resolve) => (inserted = resolve));
    const unit = store.transaction(async () => {
      await store.run(INSERT, 'pending');
      inserted();
      await new Promise((resolve) => setTimeout(resolve, 50)); // holds the group open
    });
    await written;
    expect(await store.get('SELECT 1 AS found FROM merchant_requests WHERE reference = ?', 'pending')).toBeUndefined();
    await unit;
    expect(await store.get('SELECT 1 AS found FROM merchant_requests WHERE reference = ?', 'pending')).toEqual({
      found: 1,
    });
  });

  it('a write outside any unit is a unit of its own: committed before it is answered', async () => {
    const answered = await Promise.all([
      store.run(INSERT, 'alone0').then(() => committed('alone0')),
      store.run(INSERT, 'alone1').then(() => committed('alone1')),
    ]);
    expect(answered).toEqual([true, true]);
  });
});

describe('a file another process writes to', () => {
  it('units that find the write lock taken by another writer wait for it: each answered once committed, the lock free once answered', async () => {
    // Another writer (a thread with its own connection: SQLite's locks are the file's) holds the lock a while.
    const holder = new Worker(
      `const { DatabaseSync } = require('node:sqlite'); const { workerData, parentPort } = require('node:worker_threads');
       const db = new DatabaseSync(workerData); db.exec('BEGIN IMMEDIATE'); parentPort.postMessage('locked');
       setTimeout(() => { db.exec('ROLLBACK'); db.close(); }, 150);`,
      { eval: true, workerData: path.join(dir, 'sandbox.db') },
    );
    const released = new Promise((resolve) => holder.once('exit', resolve));
    await new Promise((resolve) => holder.once('message', resolve));
    const seenWhenAnswered = await Promise.all(
      Array.from({ length: 10 }, (_, i) => insert(`shared${i}`).then(() => committed(`shared${i}`))),
    );
    await released;
    expect(seenWhenAnswered).toEqual(Array(10).fill(true));
    // Once a unit is answered, the lock is free: another writer may write at once.
    await insert('shared-after');
    const writer = new DatabaseSync(path.join(dir, 'sandbox.db'));
    writer.exec('PRAGMA busy_timeout = 0');
    try {
      expect(() => writer.exec('BEGIN IMMEDIATE; ROLLBACK')).not.toThrow();
    } finally {
      writer.close();
    }
  });
});

describe('checkpoints on SQLite', () => {
  it("a commit's rows reach the database file itself (a checkpoint, with its syncs) within seconds, though the log is far from 1,000 pages", async () => {
    await insert('checkpointed-marker');
    const inFile = () => readFileSync(path.join(dir, 'sandbox.db')).includes('checkpointed-marker');
    const deadline = Date.now() + 5_000;
    while (!inFile() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(inFile()).toBe(true);
    // The event loop's commits do not checkpoint: the store's thread does.
    expect(store.database.db.prepare('PRAGMA wal_autocheckpoint').get()).toEqual({ wal_autocheckpoint: 0 });
  });
});
