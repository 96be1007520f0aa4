// A start refused once its store opened (createSandbox, and the PostgreSQL store's own opening) closes
// what it opened: no PostgreSQL connection of it, no SQLite handle on the file, stays in the process.
// Seen from outside the store: the server's pg_stat_activity for the database, the process's open
// file descriptors (/proc/self/fd).
import { mkdtempSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { createSandbox } from '../../sandbox/index.ts';
import { freshDatabase, PG_URL, SKIP_PG } from './support.ts';

// A fixed key: the refusals below are not the vault's.
const env = { PGW_SANDBOX_DATA_KEY: Buffer.alloc(32, 7).toString('base64') };
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The connections the server holds to this database, the asking one aside. */
async function connectionsTo(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query(
      'SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
    );
    return rows[0].n;
  } finally {
    await client.end();
  }
}

/** A made sandbox database damaged as a user may meet it: its seeding table gone (a partial restore). */
const damage = 'DROP TABLE sandbox_seeded';

describe.skipIf(!PG_URL)('a refused start on PostgreSQL', () => {
  async function fresh(): Promise<string> {
    const db = await freshDatabase(PG_URL!);
    cleanups.push(db.drop);
    return db.url;
  }
  async function admin(url: string, sql: string): Promise<void> {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query(sql).finally(() => client.end());
  }

  it('leaves no connection open when seeding the accounts fails', async () => {
    const url = await fresh();
    await (await createSandbox({ dbPath: url, env })).close();
    await admin(url, damage);
    await expect(createSandbox({ dbPath: url, env })).rejects.toThrow(/sandbox_seeded/);
    expect(await connectionsTo(url)).toBe(0);
  });

  it('leaves no connection open when the database is newer than this sandbox (its migration refused)', async () => {
    const url = await fresh();
    await (await createSandbox({ dbPath: url, env })).close();
    await admin(url, 'UPDATE pgw_schema SET version = 999');
    await expect(createSandbox({ dbPath: url, env })).rejects.toThrow(/newer than this sandbox's/);
    expect(await connectionsTo(url)).toBe(0);
  });
});
if (!PG_URL) it.skip(`a refused start on PostgreSQL: ${SKIP_PG}`, () => {});

/** This process's open descriptors on the file (its -wal and -shm beside it included). */
function handlesOn(file: string): number {
  return readdirSync('/proc/self/fd').filter((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`).startsWith(file);
    } catch {
      return false; // closed meanwhile (the listing's own descriptor)
    }
  }).length;
}

describe.skipIf(process.platform !== 'linux')('a refused start on SQLite', () => {
  it('leaves no handle on the database file when seeding the accounts fails', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'pgw-start-cleanup-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const file = path.join(dir, 'sandbox.db');
    await (await createSandbox({ dbPath: file, env })).close();
    expect(handlesOn(file)).toBe(0);
    const db = new DatabaseSync(file);
    db.exec(damage);
    db.close();
    await expect(createSandbox({ dbPath: file, env })).rejects.toThrow(/sandbox_seeded/);
    expect(handlesOn(file)).toBe(0);
  });

  it('leaves no handle on the database file when the database is newer than this sandbox', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'pgw-start-cleanup-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const file = path.join(dir, 'sandbox.db');
    await (await createSandbox({ dbPath: file, env })).close();
    const db = new DatabaseSync(file);
    db.exec('PRAGMA user_version = 999');
    db.close();
    await expect(createSandbox({ dbPath: file, env })).rejects.toThrow(/newer than this sandbox's/);
    expect(handlesOn(file)).toBe(0);
  });
});
