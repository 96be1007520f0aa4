// An access token issued while `sandbox accounts rotate` runs does not outlive the rotation. The
// gateway authenticates getAccessToken (the account read with its credentials) and inserts the token
// later, in a transaction of its own: a rotation that commits in between, or between the insert and
// its commit, must leave no token that works under the old credentials (rotate's help: the old ones,
// and the tokens they were issued, stop working at the next request). Each interleaving is forced by
// holding the sandbox's own store at the token's INSERT while the command rotates the merchant.
// On an SQLite file always; on PostgreSQL too when PGW_TEST_DATABASE_URL is set.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import type { Store } from '../../sandbox/store.ts';
import { ROOT } from '../support/contract.ts';
import { freshDatabase, PG_URL, SKIP_PG, startSandbox, type TestSandbox } from './support.ts';

const STORES = [
  { name: 'SQLite', url: undefined as string | undefined },
  ...(PG_URL ? [{ name: 'PostgreSQL', url: PG_URL }] : []),
];
if (!PG_URL) it.skip(`access tokens during a rotation on PostgreSQL: ${SKIP_PG}`, () => {});

/** A sandbox on a database the command can open too: an SQLite file, or a fresh PostgreSQL database. */
async function sandboxOnShared(
  server: string | undefined,
): Promise<{ t: TestSandbox; db: string; done: () => Promise<void> }> {
  if (server) {
    const database = await freshDatabase(server);
    const t = await startSandbox({ dbPath: database.url });
    const done = async () => {
      await t.close();
      await database.drop();
    };
    return { t, db: database.url, done };
  }
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pgw-rotation-'));
  const db = path.join(dir, 'sandbox.db');
  const t = await startSandbox({ dbPath: db });
  const done = async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  };
  return { t, db, done };
}

/**
 * The store's run held at the access token's INSERT until released: before it runs ('before'), or
 * after it ran and before its transaction commits ('after'). `reached` resolves when it is held.
 */
function holdTokenInsert(store: Store, when: 'before' | 'after') {
  let reached!: () => void;
  let release!: () => void;
  const wasReached = new Promise<void>((resolve) => (reached = resolve));
  const released = new Promise<void>((resolve) => (release = resolve));
  const run = store.run.bind(store);
  store.run = async (sql: string, ...params: unknown[]) => {
    const held = /INSERT INTO access_tokens/.test(sql);
    if (held && when === 'before') {
      reached();
      await released;
    }
    const result = await run(sql, ...params);
    if (held && when === 'after') {
      reached();
      await released;
    }
    return result;
  };
  return { reached: wasReached, release };
}

/**
 * Resolves once the rotation waits for a lock the held request has: on PostgreSQL, when a backend of
 * its database waits for a lock (pg_stat_activity); on SQLite, whose wait for the file's write lock
 * cannot be seen from here, after 2 s (the command starts and reaches its write in less); at once
 * when the rotation is done.
 */
async function rotationWaiting(postgres: string | undefined, rotating: Promise<unknown>): Promise<void> {
  if (!postgres) return new Promise((resolve) => setTimeout(resolve, 2000));
  let rotated = false;
  void rotating.then(() => (rotated = true));
  const client = new pg.Client({ connectionString: postgres });
  await client.connect();
  try {
    while (!rotated) {
      const { rows } = await client.query(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
      );
      if (rows[0].n > 0) return;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  } finally {
    await client.end();
  }
}

describe.each(STORES)('an access token issued during a rotation, on $name', ({ url }) => {
  let done: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await done?.();
    done = undefined;
  });

  // The operator's command, in a process of its own as the operator runs it (in this one, its SQLite
  // connection's wait for the file's lock would hold the sandbox's event loop, and so the lock).
  const rotate = (db: string, merchant: string) =>
    new Promise<{ code: number; err: string }>((resolve) =>
      execFile(
        path.join(ROOT, 'node_modules/.bin/node'),
        [path.join(ROOT, 'cli/main.ts'), 'sandbox', 'accounts', 'rotate', merchant, '--json', '--db', db],
        { cwd: ROOT, env: { PATH: process.env.PATH }, timeout: 30_000 },
        (error, _stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, err: stderr }),
      ),
    );

  it.each(['before', 'after'] as const)(
    'does not work after the rotation: the rotation commits while the request is held %s its INSERT',
    async (when) => {
      const shared = await sandboxOnShared(url);
      done = shared.done;
      const { t, db } = shared;
      const hold = holdTokenInsert(t.sandbox.store, when);
      // Authenticated under the seeded merchant's credentials, then held.
      const issuing = t.client.getAccessToken({ transactionAmount: '10.00', transactionCurrency: 'AUD' });
      await hold.reached;
      const rotating = rotate(db, t.sandbox.seed.merchantUUID);
      if (when === 'before') {
        // Held before its INSERT, the request holds nothing: the rotation commits meanwhile.
        await rotating;
      } else {
        // Held after it, its transaction is open: the rotation commits meanwhile, or waits for it.
        await Promise.race([rotating, rotationWaiting(url && db, rotating)]);
      }
      hold.release();
      const rotated = await rotating;
      expect(rotated.err).toBe('');
      expect(rotated.code).toBe(0);
      const issued = (await issuing) as { responseCode: string; responseMessage: string; accessToken?: string };
      if (issued.accessToken) {
        const quote = await t.client.getSurcharge({
          accessToken: issued.accessToken,
          transactionAmount: '10.00',
          transactionCurrency: 'AUD',
          paymentCardNumber: '4564710000000004',
        });
        expect(quote, 'the token issued under the old credentials still works').toMatchObject({
          responseCode: '-1',
        });
      }
      if (when === 'before')
        // Its credentials were no longer the account's when the token would have been stored.
        expect(issued).toEqual({ responseCode: '-1', responseMessage: 'Invalid authentication credentials' });
    },
    60_000,
  );
});
