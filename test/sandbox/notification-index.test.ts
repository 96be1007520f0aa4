// Found by review: nothing indexed an account's notifications, so a clock advance read every
// notification of the instance (inside SQLite's write lock) to find the account's undelivered ones.
// Schema v16 indexes them by signer (notifications_signer). A database the previous sandbox left (v15,
// holding notifications) is migrated on both stores, and the advance's query is planned with the index.
import { DatabaseSync } from 'node:sqlite';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PENDING_OF_ACCOUNT } from '../../sandbox/clock-store.ts';
import { CLAIM_DUE_SQL } from '../../sandbox/delivery-queue.ts';
import { openStore } from '../../sandbox/open-store.ts';
import { MIGRATIONS, type Store } from '../../sandbox/store.ts';
import {
  databaseOfVersion,
  PG_URL,
  postgresDatabase,
  SKIP_PG,
  sqliteDatabase,
  type Database,
} from '../support/instances.ts';

/** The schema the sandbox had before the index. */
const BEFORE = 15;
const NOTIFICATION = `INSERT INTO notifications (event, subject, url, body, signer_kind, signer_id, next_attempt_at)
  VALUES ('payoutTransaction', 'PTX-OLD', 'https://m.test/old', '{}', 'merchant', 'indexm000001', '2026-01-01 00:00:00')`;

/** The plan of the advance's query for the account's notifications, in the store's own words. */
async function planOfAdvance(db: Database): Promise<string> {
  const params = ['merchant', 'indexm000001', 6];
  if (db.kind === 'sqlite') {
    const file = new DatabaseSync(db.url);
    try {
      const rows = file.prepare(`EXPLAIN QUERY PLAN ${PENDING_OF_ACCOUNT}`).all(...params) as { detail: string }[];
      return rows.map((r) => r.detail).join('\n');
    } finally {
      file.close();
    }
  }
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    // A table of one row is read whole whatever its indexes: the planner is told to use one if it can.
    await client.query('SET enable_seqscan = off');
    let n = 0;
    const { rows } = await client.query(`EXPLAIN ${PENDING_OF_ACCOUNT.replace(/\?/g, () => `$${++n}`)}`, params);
    return rows.map((r: { 'QUERY PLAN': string }) => r['QUERY PLAN']).join('\n');
  } finally {
    await client.end();
  }
}

const STORES: { name: string; make: () => Promise<Database> }[] = [
  { name: 'SQLite', make: async () => sqliteDatabase() },
  ...(PG_URL ? [{ name: 'PostgreSQL', make: () => postgresDatabase(PG_URL!, 'notifindex') }] : []),
];
if (!PG_URL) it.skip(`the notifications' signer index on PostgreSQL: ${SKIP_PG}`, () => {});

describe.each(STORES)("the notifications' signer index ($name)", ({ name, make }) => {
  let db: Database;
  let store: Store;
  beforeAll(async () => {
    db = await make();
    await databaseOfVersion(db, BEFORE, [NOTIFICATION]);
    store = await openStore(db.url);
  });
  afterAll(async () => {
    await store?.close();
    await db?.drop();
  });

  it('is made by the migration from schema v15, the notifications kept', async () => {
    expect(await store.schemaVersion).toBe(MIGRATIONS.length);
    const found =
      db.kind === 'sqlite'
        ? await store.all("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'notifications'")
        : await store.all("SELECT indexname AS name FROM pg_indexes WHERE tablename = 'notifications'");
    expect(found.map((r) => r.name)).toContain('notifications_signer');
    expect(await store.all('SELECT subject FROM notifications')).toEqual([{ subject: 'PTX-OLD' }]);
  });

  it("plans the clock advance's read of the account's notifications with it", async () => {
    expect(await planOfAdvance(db)).toMatch(/notifications_signer/);
  });

  // The claim ranks the due notifications by account once, then reads each ranked one by its key:
  // SQLite, left to choose, read the due rows and scanned the whole ranking for each (seconds a claim
  // at 10,000 due). Its plan, not its time, is held here.
  // Planned through the store itself, so that the plan is of the text SQLite runs (its sqliteSql drops
  // PostgreSQL's FOR UPDATE OF n SKIP LOCKED), not of a copy of that rule here.
  it.skipIf(name !== 'SQLite')("claims by reading each ranked notification by its key (SQLite's plan)", async () => {
    const rows = await store.all<{ detail: string }>(
      `EXPLAIN QUERY PLAN ${CLAIM_DUE_SQL}`,
      6,
      'x',
      'x',
      6,
      'x',
      'x',
      20,
    );
    expect(rows.map((r) => r.detail).join('\n')).toMatch(/SEARCH n USING INTEGER PRIMARY KEY/);
  });
});
