// The async Store on both implementations: the same checks on the SQLite file and on PostgreSQL
// (PGW_TEST_DATABASE_URL), and the read-check-write races that must have one winner.
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { csvColumns } from '../../generated/spec-constants.ts';
import { claimDue, renew, settle } from '../../sandbox/delivery-queue.ts';
import {
  SETTLEMENT_QUERIES,
  SETTLEMENT_ROWS,
  settlementPages,
  settlementQueriesOf,
} from '../../sandbox/handlers/settlement.ts';
import { createSandbox } from '../../sandbox/index.ts';
import { ddAuth, merchant, purchase, send, signed, storedCard } from '../hardening/support.ts';
import { openStore } from '../../sandbox/open-store.ts';
import { BATCH_ROWS, MIGRATIONS, type Store } from '../../sandbox/store.ts';

const PG_URL = process.env.PGW_TEST_DATABASE_URL;
const SKIP_PG =
  'PostgreSQL store: skipped, set PGW_TEST_DATABASE_URL to a database the tests may create databases in (scripts/postgres/ensure.sh prints one)';

/** A fresh database on the server PGW_TEST_DATABASE_URL names; its URL. */
async function freshDatabase(): Promise<string> {
  const name = `pgw_store_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(PG_URL!);
  url.pathname = `/${name}`;
  return url.toString();
}

async function dropDatabase(url: string): Promise<void> {
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${new URL(url).pathname.slice(1)} WITH (FORCE)`);
  await admin.end();
}

const CARD = `INSERT INTO cards (card_id, merchant_id, card_key, ivr_card_id, name, pan_encrypted, bin, last4, fingerprint, card_type, expiry_month, expiry_year, added_at)
  VALUES (?, 'm', ?, '1', 'A', 'x', '444433', '1111', ?, 'VC', '12', '30', '2026-01-01')`;

/** A card-key rotation as a handler writes it: read the key, check it, write a new one. */
async function rotate(store: Store, oldKey: string, newKey: string): Promise<boolean> {
  return store.transaction(async () => {
    const row = await store.get("SELECT card_key FROM cards WHERE card_id = 'c1' FOR UPDATE");
    if (row?.card_key !== oldKey) return false;
    await new Promise((resolve) => setImmediate(resolve)); // other requests run meanwhile
    await store.run("UPDATE cards SET card_key = ? WHERE card_id = 'c1'", newKey);
    return true;
  });
}

/** A capture against one authorisation: captured + amount may not exceed amount authorised. */
async function capture(store: Store, cents: number): Promise<boolean> {
  return store.transaction(async () => {
    const row = await store.get("SELECT amount, captured FROM transactions WHERE id = 't1' FOR UPDATE");
    if (!row || row.captured + cents > row.amount) return false;
    await new Promise((resolve) => setImmediate(resolve));
    await store.run("UPDATE transactions SET captured = captured + ? WHERE id = 't1'", cents);
    return true;
  });
}

const AUTH = `INSERT INTO transactions (id, merchant_id, kind, status, response_code, response_message, amount, currency, auth_code, auth_response_code, auth_message, receipt_no, created_at)
  VALUES ('t1', 'm', 'preauth', 'approved', 0, 'ok', 10000, 'AUD', '1', '00', 'ok', '1', '2026-01-01')`;

const NOTIFICATION =
  "INSERT INTO notifications (event, subject, url, body, signer_kind, signer_id, next_attempt_at) VALUES ('e', ?, 'http://x', '{}', 'merchant', 'm', '2026-01-01T00:00:00Z')";
const NOW = '2026-01-01T00:00:00Z';
const LATER = '2026-01-01T00:05:00Z';

/** Workers claiming and delivering until nothing is due; how many times each subject was delivered. */
async function drain(stores: Store[], workers: number): Promise<Map<string, number>> {
  const delivered = new Map<string, number>();
  await Promise.all(
    Array.from({ length: workers }, async (_, w) => {
      const store = stores[w % stores.length]!;
      for (;;) {
        const claimed = await claimDue(store, { by: `w${w}`, now: NOW, until: LATER, maxAttempts: 5, limit: 5 });
        if (claimed.length === 0) return;
        for (const n of claimed) {
          delivered.set(n.subject, (delivered.get(n.subject) ?? 0) + 1);
          await new Promise((resolve) => setImmediate(resolve)); // the POST
          await settle(store, n.id, `w${w}`, { ok: true, status: 200, at: NOW, retryAt: LATER });
        }
      }
    }),
  );
  return delivered;
}

function storeSuite(kind: 'sqlite' | 'postgres', open: () => Promise<{ url: string; done: () => Promise<void> }>) {
  let url: string;
  let done: () => Promise<void>;
  let store: Store;
  beforeAll(async () => {
    ({ url, done } = await open());
    store = await openStore(url);
  });
  afterAll(async () => {
    await store?.close();
    await done?.();
  });

  it('is the store asked for, at the last schema version', async () => {
    expect(store.kind).toBe(kind);
    expect(await store.schemaVersion).toBe(MIGRATIONS.length);
  });

  it('runs ? statements, counts changes, ignores a duplicate INSERT OR IGNORE, rolls a failed transaction back', async () => {
    await store.run(CARD, 'c0', 'k0', 'f0');
    expect(await store.get('SELECT card_key FROM cards WHERE card_id = ?', 'c0')).toEqual({ card_key: 'k0' });
    expect(
      await store.run(
        'INSERT OR IGNORE INTO surcharge_rates (merchant_id, card_type, basis_points) VALUES (?, ?, ?)',
        'm',
        'VC',
        100,
      ),
    ).toEqual({ changes: 1 });
    expect(
      await store.run(
        'INSERT OR IGNORE INTO surcharge_rates (merchant_id, card_type, basis_points) VALUES (?, ?, ?)',
        'm',
        'VC',
        200,
      ),
    ).toEqual({ changes: 0 });
    await expect(
      store.transaction(async () => {
        await store.run("UPDATE cards SET card_key = 'changed' WHERE card_id = ?", 'c0');
        throw new Error('refused');
      }),
    ).rejects.toThrow('refused');
    expect((await store.get('SELECT card_key FROM cards WHERE card_id = ?', 'c0'))?.card_key).toBe('k0');
    expect(await store.freshId('cards', 'card_id', () => 'c0x')).toBe('c0x');
    await expect(store.freshId('cards', 'card_id', () => 'c0')).rejects.toThrow(/No free identifier/);
  });

  it("reads the settlement export's rows in file order from an index: no sort, whatever the table's size", async () => {
    const args = ['m', '2026-10-01', '2026-10-30'];
    const plan =
      kind === 'sqlite'
        ? (await store.all(`EXPLAIN QUERY PLAN ${SETTLEMENT_ROWS}`, ...args)).map((r) => r.detail).join('\n')
        : // A tiny table would be scanned and sorted whatever its indexes: forbid both, and a sort
          // still appears unless an index gives the order.
          await store.transaction(async () => {
            await store.run('SET LOCAL enable_seqscan = off');
            await store.run('SET LOCAL enable_sort = off');
            return (await store.all(`EXPLAIN ${SETTLEMENT_ROWS}`, ...args)).map((r) => r['QUERY PLAN']).join('\n');
          });
    expect(plan).toMatch(/transactions_settled/);
    expect(plan).not.toMatch(/TEMP B-TREE|Sort/i);
  });

  it("reads the settlement export's later pages from the index too: each a seek after its key, no sort", async () => {
    const plans: Record<string, string> = {};
    for (const [name, sql, args] of [
      ['sameDay', SETTLEMENT_QUERIES.sameDay, ['m', '2026-10-01', 7]],
      ['laterDays', SETTLEMENT_QUERIES.laterDays, ['m', '2026-10-01', '2026-10-30']],
    ] as const)
      plans[name] =
        kind === 'sqlite'
          ? (await store.all(`EXPLAIN QUERY PLAN ${sql}`, ...args)).map((r) => r.detail).join('\n')
          : await store.transaction(async () => {
              await store.run('SET LOCAL enable_seqscan = off');
              await store.run('SET LOCAL enable_sort = off');
              return (await store.all(`EXPLAIN ${sql}`, ...args)).map((r) => r['QUERY PLAN']).join('\n');
            });
    for (const plan of Object.values(plans)) {
      expect(plan).toMatch(/transactions_settled/);
      expect(plan).not.toMatch(/TEMP B-TREE|Sort/i);
    }
    // The rest of a day starts at its key (SQLite: rowid in the search; PostgreSQL: in the index condition).
    expect(plans.sameDay).toMatch(kind === 'sqlite' ? /rowid>\?/ : /Index Cond: .*rowid > /s);
  });

  it('reads the settlement rows a page at a time, the pages together the one ordered read, whatever the page size', async () => {
    const insert = (id: string, merchant: string, kind: string, day: string) =>
      store.run(
        `INSERT INTO transactions (id, merchant_id, kind, status, response_code, response_message, amount, currency, auth_code, auth_response_code, auth_message, receipt_no, settled_date, created_at)
         VALUES (?, ?, ?, 'approved', 0, 'ok', 100, 'AUD', '1', '00', 'ok', '1', ?, '2026-01-01')`,
        id,
        merchant,
        kind,
        day,
      );
    // Days interleaved in the order written; rows of other merchants, kinds and days between them.
    const days = ['2026-10-02', '2026-10-05', '2026-10-03', '2026-10-05', '2026-10-09'];
    await store.transaction(async () => {
      for (let i = 0; i < 40; i++) {
        await insert(`pg-${i}`, 'paged', 'purchase', days[i % days.length]!);
        if (i % 7 === 0) await insert(`pg-c${i}`, 'paged', 'capture', days[(i + 2) % days.length]!);
        if (i % 5 === 0) await insert(`pg-r${i}`, 'paged', 'refund', days[i % days.length]!);
        if (i % 6 === 0) await insert(`pg-o${i}`, 'paged-other', 'purchase', days[i % days.length]!);
      }
    });
    const one = (await store.all(SETTLEMENT_ROWS.replace(/ LIMIT \d+$/, ''), 'paged', '2026-10-03', '2026-10-09')).map(
      (r) => r.id,
    );
    expect(one.length).toBeGreaterThan(20);
    expect(one).not.toContain('pg-0'); // 2026-10-02: before the range
    for (const size of [1, 2, 3, 8, one.length, one.length + 1, 500]) {
      const read: string[] = [];
      for await (const page of settlementPages(store, settlementQueriesOf(size), 'paged', '2026-10-03', '2026-10-09')) {
        expect(page.length).toBeGreaterThan(0);
        expect(page.length).toBeLessThanOrEqual(size);
        read.push(...page.map((row) => String(row[0])));
      }
      expect(read, `pages of ${size}`).toEqual(one);
    }
    await store.run("DELETE FROM transactions WHERE merchant_id IN ('paged', 'paged-other')");
  });

  it('streams rows with iterate', async () => {
    // tok0000 to tok0449 in one statement, as for batches below.
    await store.run(
      `WITH RECURSIVE g(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM g WHERE n < 449)
       INSERT INTO access_tokens (token, merchant_id, expires_at) SELECT 'tok' || substr(CAST(10000 + n AS TEXT), 2), 'm', 'x' FROM g`,
    );
    const seen: string[] = [];
    for await (const row of store.iterate<{ token: string }>('SELECT token FROM access_tokens ORDER BY token'))
      seen.push(row.token);
    expect(seen).toHaveLength(450);
    expect(seen[449]).toBe('tok0449');
  });

  it('streams rows in batches of arrays with batches, in order, each batch at most BATCH_ROWS', async () => {
    const total = 2 * BATCH_ROWS + 7;
    // b000000 to b010006 in one statement (batches is what is tested: 10,007 inserts one by one took
    // 19 s of a loaded run on PostgreSQL).
    await store.run(
      `WITH RECURSIVE g(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM g WHERE n < ?)
       INSERT INTO merchant_requests (reference, partner_id, status, created_at)
       SELECT 'b' || substr(CAST(1000000 + n AS TEXT), 2), 'batches', 's', 'x' FROM g`,
      total - 1,
    );
    expect((await store.get("SELECT count(*) AS n FROM merchant_requests WHERE partner_id = 'batches'"))?.n).toEqual(
      total,
    );
    const sizes: number[] = [];
    const rows: unknown[][] = [];
    for await (const batch of store.batches(
      "SELECT reference, partner_id FROM merchant_requests WHERE partner_id = 'batches' ORDER BY reference",
    )) {
      sizes.push(batch.length);
      rows.push(...batch);
    }
    expect(sizes.every((n) => n > 0 && n <= BATCH_ROWS)).toBe(true);
    expect(rows).toHaveLength(total);
    expect(rows[0]).toEqual(['b000000', 'batches']);
    expect(rows.at(-1)).toEqual([`b${String(total - 1).padStart(6, '0')}`, 'batches']);
    await store.run("DELETE FROM merchant_requests WHERE partner_id = 'batches'");
  });

  it("a statement outside a transaction does not run inside (nor roll back with) another request's transaction", async () => {
    let begun!: () => void;
    const open = new Promise<void>((resolve) => (begun = resolve));
    const failing = store.transaction(async () => {
      await store.run(
        "INSERT INTO merchant_requests (reference, partner_id, status, created_at) VALUES ('inside', 'p', 's', 'x')",
      );
      begun();
      await new Promise((resolve) => setTimeout(resolve, 30));
      throw new Error('rolled back');
    });
    await open; // the other request's transaction is open now
    const outside = store.run(
      "INSERT INTO merchant_requests (reference, partner_id, status, created_at) VALUES ('outside', 'p', 's', 'x')",
    );
    await expect(failing).rejects.toThrow('rolled back');
    await outside;
    const refs = (await store.all('SELECT reference FROM merchant_requests ORDER BY reference')).map(
      (r) => r.reference,
    );
    expect(refs).toEqual(['outside']);
  });

  it('200 concurrent rotations of one card key: exactly one wins', async () => {
    await store.run(CARD, 'c1', 'old', 'f1');
    const wins = await Promise.all(Array.from({ length: 200 }, (_, i) => rotate(store, 'old', `new${i}`)));
    expect(wins.filter(Boolean)).toHaveLength(1);
  });

  it('200 concurrent captures of 100.00 against an authorisation of 100.00 (1.00 each fits 100 of them): the total stops at the amount', async () => {
    await store.run(AUTH);
    const done = await Promise.all(Array.from({ length: 200 }, () => capture(store, 100)));
    expect(done.filter(Boolean)).toHaveLength(100);
    expect((await store.get("SELECT captured FROM transactions WHERE id = 't1'"))?.captured).toBe(10000);
  });

  it('200 notifications, 8 workers claiming at once: each delivered exactly once', async () => {
    await store.run('DELETE FROM notifications');
    await store.transaction(async () => {
      for (let i = 0; i < 200; i++) await store.run(NOTIFICATION, `s${i}`);
    });
    const delivered = await drain([store], 8);
    expect(delivered.size).toBe(200);
    expect([...delivered.values()].filter((n) => n !== 1)).toEqual([]);
  });

  it('a claim whose instance died is taken again once its lease ends, and the dead claim cannot settle it', async () => {
    await store.run('DELETE FROM notifications');
    await store.run(NOTIFICATION, 'lost');
    const [taken] = await claimDue(store, { by: 'dead', now: NOW, until: LATER, maxAttempts: 5, limit: 5 });
    expect(taken?.subject).toBe('lost');
    expect(await claimDue(store, { by: 'other', now: NOW, until: LATER, maxAttempts: 5, limit: 5 })).toEqual([]);
    const [again] = await claimDue(store, {
      by: 'other',
      now: LATER,
      until: '2026-01-01T00:10:00Z',
      maxAttempts: 5,
      limit: 5,
    });
    expect(again?.subject).toBe('lost');
    // A holder only late (a busy machine), not dead, finds its claim gone before it posts (finding,
    // issue 44: it posted anyway, a duplicate the second holder posted too).
    expect(await renew(store, taken!.id, 'dead', '2026-01-01T00:20:00Z')).toBe(false);
    expect(await renew(store, again!.id, 'other', '2026-01-01T00:20:00Z')).toBe(true);
    expect(
      await claimDue(store, {
        by: 'third',
        now: '2026-01-01T00:15:00Z',
        until: '2026-01-01T00:30:00Z',
        maxAttempts: 5,
        limit: 5,
      }),
    ).toEqual([]);
    expect(await settle(store, taken!.id, 'dead', { ok: true, status: 200, at: LATER, retryAt: LATER })).toBe(false);
    expect(await settle(store, again!.id, 'other', { ok: true, status: 200, at: LATER, retryAt: LATER })).toBe(true);
    expect(await store.get('SELECT delivered, attempts FROM notifications WHERE id = ?', again!.id)).toEqual({
      delivered: 1,
      attempts: 1,
    });
  });

  if (kind === 'postgres') {
    it("three stores (three instances' pools) on one database: one rotation wins of 200, captures stop at the amount, 200 notifications delivered once each", async () => {
      const stores = await Promise.all([openStore(url), openStore(url), openStore(url)]);
      try {
        await store.run("UPDATE cards SET card_key = 'again' WHERE card_id = 'c1'");
        await store.run("UPDATE transactions SET captured = 0 WHERE id = 't1'");
        const wins = await Promise.all(Array.from({ length: 200 }, (_, i) => rotate(stores[i % 3]!, 'again', `n${i}`)));
        expect(wins.filter(Boolean)).toHaveLength(1);
        const captures = await Promise.all(Array.from({ length: 200 }, (_, i) => capture(stores[i % 3]!, 100)));
        expect(captures.filter(Boolean)).toHaveLength(100);
        expect((await store.get("SELECT captured FROM transactions WHERE id = 't1'"))?.captured).toBe(10000);
        await store.run('DELETE FROM notifications');
        await store.transaction(async () => {
          for (let i = 0; i < 200; i++) await store.run(NOTIFICATION, `p${i}`);
        });
        const delivered = await drain(stores, 12);
        expect(delivered.size).toBe(200);
        expect([...delivered.values()].filter((n) => n !== 1)).toEqual([]);
      } finally {
        await Promise.all(stores.map((s) => s.close()));
      }
    });
  }
}

describe('Store on SQLite (a file)', () => {
  it('opens a new file from several processes started at the same moment: each waits its turn, each migration runs once', async () => {
    const store = new URL('../../sandbox/store.ts', import.meta.url).pathname;
    const open = `import { SqliteDatabase } from ${JSON.stringify(store)}; const d = new SqliteDatabase(process.argv[1]); console.log(d.schemaVersion); d.close();`;
    // 12 at once, six times: switching a new file to WAL failed 5 times in 180 such opens (SQLite's
    // immediate BUSY), which 4 processes three times caught only under CI's load.
    for (let round = 0; round < 6; round++) {
      const dir = mkdtempSync(path.join(tmpdir(), 'pgw-start-'));
      const file = path.join(dir, 'sandbox.db');
      const runs = await Promise.all(
        Array.from({ length: 12 }, () => {
          const child = spawn(process.execPath, ['--input-type=module', '-e', open, file], {
            stdio: ['ignore', 'pipe', 'pipe'],
          });
          let out = '';
          child.stdout!.on('data', (d) => (out += d));
          child.stderr!.on('data', (d) => (out += d));
          // 'close', not 'exit': a child can exit before its output has been read from the pipe.
          return new Promise<{ code: number | null; out: string }>((resolve) =>
            child.on('close', (code) => resolve({ code, out })),
          );
        }),
      );
      rmSync(dir, { recursive: true, force: true });
      for (const run of runs) expect(run, run.out).toEqual({ code: 0, out: `${MIGRATIONS.length}\n` });
    }
  }, 120_000);

  storeSuite('sqlite', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'pgw-store-'));
    return { url: path.join(dir, 'sandbox.db'), done: async () => rmSync(dir, { recursive: true, force: true }) };
  });

  it('keeps the file owner-only and opens a file an older sandbox left at schema v3', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'pgw-store-'));
    try {
      const file = path.join(dir, 'old.db');
      const { DatabaseSync } = await import('node:sqlite');
      const old = new DatabaseSync(file);
      for (const [i, sql] of MIGRATIONS.slice(0, 3).entries()) old.exec(`${sql}; PRAGMA user_version = ${i + 1};`);
      old.exec(
        "INSERT INTO payto_payments (id, merchant_id, agreement_id, status, reference, amount, created_at) VALUES ('p', 'm', 'a', 's', 'r', 1234, 'x')",
      );
      old.close();
      const store = await openStore(file);
      expect(await store.schemaVersion).toBe(MIGRATIONS.length);
      expect((await store.get("SELECT amount FROM payto_payments WHERE id = 'p'"))?.amount).toBe(1234);
      await store.close();
      expect(statSync(file).mode & 0o777).toBe(0o600);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe.skipIf(!PG_URL)(`Store on PostgreSQL${PG_URL ? '' : ` (${SKIP_PG})`}`, () => {
  storeSuite('postgres', async () => {
    const url = await freshDatabase();
    return { url, done: () => dropDatabase(url) };
  });
});

describe.skipIf(!PG_URL)(`Notifications across three processes on PostgreSQL${PG_URL ? '' : ` (${SKIP_PG})`}`, () => {
  it('kill -9 of one instance mid-delivery: every notification still arrives, duplicates only from the dead claim', async () => {
    const url = await freshDatabase();
    const store = await openStore(url);
    const received: string[] = [];
    const receiver = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        received.push(JSON.parse(body).subject);
        setTimeout(() => res.end('ok'), 5); // a receiver that takes a moment
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/`;
    const workers: ChildProcess[] = [];
    try {
      const epoch = '2000-01-01T00:00:00.000Z';
      await store.transaction(async () => {
        for (let i = 0; i < 300; i++)
          await store.run(NOTIFICATION.replace("'2026-01-01T00:00:00Z'", `'${epoch}'`), `k${i}`);
      });
      const worker = new URL('../support/delivery-worker.ts', import.meta.url).pathname;
      for (const name of ['a', 'b', 'c']) {
        const child = fork(worker, [url, name, receiverUrl], { stdio: 'ignore' });
        workers.push(child);
        await new Promise((resolve) => child.once('message', resolve));
      }
      while (received.length < 60) await new Promise((resolve) => setTimeout(resolve, 5));
      workers[0]!.kill('SIGKILL');
      const deadline = Date.now() + 30_000;
      while (
        Date.now() < deadline &&
        (await store.get('SELECT count(*) AS n FROM notifications WHERE delivered = 1'))!.n < 300
      )
        await new Promise((resolve) => setTimeout(resolve, 100));
      expect((await store.get('SELECT count(*) AS n FROM notifications WHERE delivered = 1'))!.n).toBe(300);
      expect(new Set(received).size).toBe(300);
      // At-least-once: what the dead instance had claimed (5 at most) may arrive twice, nothing else.
      const duplicates = received.length - new Set(received).size;
      console.info(`kill test: ${received.length} posts for 300 notifications, ${duplicates} duplicates`);
      expect(duplicates).toBeLessThanOrEqual(5);
    } finally {
      for (const w of workers) w.kill('SIGKILL');
      receiver.close();
      await store.close();
      await dropDatabase(url);
    }
  }, 60_000);
});

describe.skipIf(!PG_URL)(`The sandbox on PostgreSQL${PG_URL ? '' : ` (${SKIP_PG})`}`, () => {
  it('exports a settlement file of several cursor batches: the day asked only, in order, card numbers masked', async () => {
    const { readSettlement } = await import('../../runtime/settlement.ts');
    const url = await freshDatabase();
    const sb = await createSandbox({ env: { PGW_DB: url } });
    try {
      const total = 2 * BATCH_ROWS + 11;
      // The rows in one statement (the export is what is tested, not 10,000 inserts: one by one they
      // took 25 s of a loaded run), written in the order the loop wrote them before: t-0, then at
      // every thousandth row another day's, a refund (not a settled card payment) and another
      // merchant's after it, each row's rowid in that order.
      await sb.store.run(
        `INSERT INTO transactions (id, merchant_id, kind, status, response_code, response_message, amount, captured, currency, reference, product, card_type, masked_pan, expiry_month, expiry_year, auth_code, auth_response_code, auth_message, receipt_no, settled_date, custom, created_at)
         SELECT v.prefix || g, v.merchant, v.kind, 'approved', 0, 'Transaction approved', 1234, 1234, 'AUD', 'R-' || v.prefix || g, 'Tea', 'visa', '456471XXXXXX0004', '02', '29', '123456', '00', 'Approved', '123456789', v.day, '[]', v.day || ' 10:00:00'
         FROM generate_series(0, ?::int - 1) AS g
         CROSS JOIN (VALUES (0, 't-', ?, 'purchase', '2026-11-02'), (1, 'next-', ?, 'purchase', '2026-11-03'),
                            (2, 'refund-', ?, 'refund', '2026-11-02'), (3, 'other-', 'another-merchant', 'purchase', '2026-11-02'))
           AS v(n, prefix, merchant, kind, day)
         WHERE v.n = 0 OR g % 1000 = 0
         ORDER BY g, v.n`,
        total,
        merchant.merchantUUID,
        merchant.merchantUUID,
        merchant.merchantUUID,
      );
      expect(
        (await sb.store.all("SELECT id FROM transactions WHERE reference LIKE 'R-%' ORDER BY rowid LIMIT 6")).map(
          (r) => r.id,
        ),
        'the rows in the order written',
      ).toEqual(['t-0', 'next-0', 'refund-0', 'other-0', 't-1', 't-2']);
      expect((await sb.store.get("SELECT count(*)::int AS n FROM transactions WHERE reference LIKE 'R-%'"))?.n).toBe(
        total + 3 * 11,
      );
      const answer = await send(
        sb,
        signed('getSettlement', {
          method: 'getSettlement',
          ...merchant,
          settlementFrom: '2026-11-02',
          settlementTo: '2026-11-02',
          version: '1.6',
          hash: 'x',
        }),
      );
      const file = readSettlement(answer.response.body as Uint8Array);
      expect(file.columns).toEqual([...csvColumns.settlement['1.6']]);
      expect(file.rows).toHaveLength(total);
      expect(file.rows.map((r) => r.transactionID)).toEqual(Array.from({ length: total }, (_, i) => `t-${i}`));
      expect(new Set(file.rows.map((r) => r.settlementDate))).toEqual(new Set(['2026-11-02']));
      expect(new Set(file.rows.map((r) => r.paymentCardNumber))).toEqual(new Set(['456471XXXXXX0004']));
      expect(file.rows[0]).toMatchObject({
        transactionReferenceID: 'R-t-0',
        transactionAmount: '12.34',
        feeAmount: '0.22',
      });
    } finally {
      await sb.close();
      await dropDatabase(url);
    }
  });

  // A database restart or fail-over, or an administrator ending a backend, while a request holds the
  // connection: pg emits 'error' on a checked-out client, and with no listener that ended the process.
  it('a connection ended by the server while a request holds it fails that request only; the next is served', async () => {
    const url = await freshDatabase();
    const store = await openStore(url);
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    try {
      const held = store.transaction(async () => {
        // The advisory lock begins the unit's transaction (beginsTransaction, sandbox/store.ts): the pid
        // is the held connection's. A plain SELECT would run on whichever pooled client came next, and
        // the request would then pass or fail by which one the following SELECT got.
        const { pid } = (await store.get<{ pid: number }>(
          'SELECT pg_backend_pid() AS pid, pg_advisory_xact_lock(1) AS locked',
        ))!;
        await admin.query('SELECT pg_terminate_backend($1)', [pid]);
        return store.get('SELECT 1 AS one');
      });
      // pg words it by when the connection's end arrives: in the query, or before it was sent.
      await expect(held).rejects.toThrow(/terminat|connection error/);
      expect(await store.get('SELECT 1 AS one')).toEqual({ one: 1 });
    } finally {
      await admin.end();
      await store.close();
      await dropDatabase(url);
    }
  });

  it('closing while requests are in flight lets them finish: each is answered, none fails on a closed pool', async () => {
    const url = await freshDatabase();
    const errors: string[] = [];
    const sb = await createSandbox({
      env: { PGW_DB: url },
      logger: { warn: () => {}, error: (message, fields) => void errors.push(`${message} ${JSON.stringify(fields)}`) },
    });
    try {
      const answers = Array.from({ length: 40 }, (_, i) =>
        send(sb, signed('processCard', purchase({ transactionReferenceID: `CLOSE-${i}` }))),
      );
      await new Promise((resolve) => setImmediate(resolve));
      await sb.close();
      const codes = (await Promise.all(answers)).map((a) => a.json?.responseCode);
      expect(
        codes.filter((c) => c !== '0'),
        errors.join('\n'),
      ).toEqual([]);
      expect(errors).toEqual([]);
    } finally {
      await dropDatabase(url);
    }
  });

  it('a sandbox started with PGW_DB=postgres://… answers a purchase, stores it there, and a second instance on the database shares its vault key', async () => {
    const url = await freshDatabase();
    const first = await createSandbox({ env: { PGW_DB: url } });
    const second = await createSandbox({ env: { PGW_DB: url } });
    try {
      expect(first.store.kind).toBe('postgres');
      const paid = await send(first, signed('processCard', purchase({ transactionReferenceID: 'PG-1' })));
      expect(paid.json).toMatchObject({ responseCode: '0', transactionReferenceID: 'PG-1' });
      // The other instance reads what the first stored: one database.
      const queried = await send(
        second,
        signed('queryCard', { method: 'queryCard', ...merchant, transactionID: paid.json.transactionID }),
      );
      expect(queried.json).toMatchObject({
        responseCode: '0',
        transactionID: paid.json.transactionID,
        transactionStatus: 'approved',
      });
      // A card the first stores opens with the second's key: one vault key, kept in the database (no PGW_SANDBOX_DATA_KEY here).
      const added = await storedCard(first);
      expect(added.responseCode).toBe('0');
      const stored = await second.store.get<{ pan_encrypted: string }>(
        'SELECT pan_encrypted FROM cards WHERE card_id = ?',
        added.cardID,
      );
      expect(second.vault.decrypt(stored!.pan_encrypted)).toBe('4564710000000004');
      expect(await second.store.all('SELECT name FROM sandbox_keys')).toEqual([{ name: 'vault' }]);
    } finally {
      await first.close();
      await second.close();
      await dropDatabase(url);
    }
  });

  it('a database whose cards another key encrypted is given no key of its own by a start without it (no stray key row)', async () => {
    // The cards stored under PGW_SANDBOX_DATA_KEY, the database then opened without it: the start is
    // refused, and it must not leave a new key in sandbox_keys on its way.
    const url = await freshDatabase();
    const key = Buffer.alloc(32, 7).toString('base64');
    const first = await createSandbox({ env: { PGW_DB: url, PGW_SANDBOX_DATA_KEY: key } });
    try {
      const added = await storedCard(first);
      expect(added.responseCode).toBe('0');
    } finally {
      await first.close();
    }
    try {
      // Refused (createSandbox as npm start), in words that are true: there is no key in the database
      // (not 'another key than the key kept in the database'), and not run on a throwaway key.
      await expect(createSandbox({ env: { PGW_DB: url } })).rejects.toThrow(
        /^the cards stored in .* were stored under a key this start does not have: the database keeps no key of its own \(none is kept when PGW_SANDBOX_DATA_KEY is set\); set PGW_SANDBOX_DATA_KEY to the key they were stored with/,
      );
      const rows = await createSandbox({ env: { PGW_DB: url, PGW_SANDBOX_DATA_KEY: key } });
      try {
        expect(await rows.store.all('SELECT name FROM sandbox_keys')).toEqual([]);
      } finally {
        await rows.close();
      }
    } finally {
      await dropDatabase(url);
    }
  });

  it("the control API's clock and forced outcomes are shared: set on one instance, the others answer by them", async () => {
    const url = await freshDatabase();
    const [a, b] = [
      await createSandbox({ env: { PGW_DB: url }, control: true }),
      await createSandbox({ env: { PGW_DB: url }, control: true }),
    ];
    const servers = [a.server(), b.server()];
    try {
      const [baseA, baseB] = await Promise.all(
        servers.map(
          (server) =>
            new Promise<string>((resolve) =>
              server.listen(0, '127.0.0.1', () =>
                resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`),
              ),
            ),
        ),
      );
      const auth = { authorization: `Basic ${btoa(`${merchant.merchantUUID}:${merchant.apiKey}`)}` };
      const debit = await send(
        b,
        signed('processDDebit', {
          method: 'processDDebit',
          ...merchant,
          transactionAmount: '5.00',
          transactionCurrency: 'AUD',
          paymentAccountBSB: '802950',
          paymentAccountNumber: '123321',
          paymentAccountName: 'Jane',
          customerName: 'Jane',
          transactionProduct: 'Plan',
          transactionReferenceID: 'CLOCK-1',
          hash: 'x',
        }),
      );
      expect(debit.json.responseCode, debit.json.responseMessage).toBe('10'); // pending until its settlement date
      const moved = await (
        await fetch(`${baseA}/_sandbox/clock/advance`, {
          method: 'POST',
          headers: auth,
          body: JSON.stringify({ days: 3 }),
        })
      ).json();
      expect(moved.offsetSeconds).toBeGreaterThanOrEqual(3 * 86_400 - 1);
      const seen = await (await fetch(`${baseB}/_sandbox/clock`, { headers: auth })).json();
      expect(seen.offsetSeconds).toBeGreaterThanOrEqual(3 * 86_400 - 1);
      // Instance b's gateway answers on the moved clock: the debit has settled.
      expect(
        (
          await send(
            b,
            signed('queryDD', { method: 'queryDD', ...merchant, transactionID: debit.json.transactionID, hash: 'x' }),
          )
        ).json.responseCode,
      ).toBe('0');
      // An outcome forced through a declines the next purchase through b, and only that one.
      const forced = await (
        await fetch(`${baseA}/_sandbox/outcomes/next`, {
          method: 'POST',
          headers: auth,
          body: JSON.stringify({ operationId: 'processCard', outcome: 'insufficientFunds' }),
        })
      ).json();
      expect(forced.responseCode).toBe(0);
      expect(
        (await send(b, signed('processCard', purchase({ transactionReferenceID: 'FORCED-1' })))).json,
      ).toMatchObject({ responseCode: '5', authResponseCode: '51' });
      expect(
        (await send(a, signed('processCard', purchase({ transactionReferenceID: 'FORCED-2' })))).json.responseCode,
      ).toBe('0');
    } finally {
      for (const server of servers) server.close();
      await a.close();
      await b.close();
      await dropDatabase(url);
    }
  });

  it('a notification claimed by an instance that died is delivered by another once the lease runs out, once', async () => {
    const url = await freshDatabase();
    const posted: string[] = [];
    const recorder = (async (to: string) => {
      posted.push(to);
      return new Response(null, { status: 204 });
    }) as typeof fetch;
    const first = await createSandbox({ env: { PGW_DB: url }, fetch: recorder });
    const second = await createSandbox({ env: { PGW_DB: url }, fetch: recorder });
    try {
      const auth = await send(first, ddAuth('https://merchant.test/dd'));
      expect(auth.json.responseCode).toBe('0');
      // Queued in the request's own transaction: committed with it.
      expect(await second.store.all('SELECT event, delivered FROM notifications')).toEqual([
        { event: 'directDebitOutcome', delivered: 0 },
      ]);
      // The first instance claims it and dies before posting.
      const claimed = await claimDue(first.store, {
        by: first.notifier.instanceId,
        now: first.clock.timestamp(),
        until: first.clock.timestamp(60_000),
        maxAttempts: 6,
        limit: 10,
      });
      expect(claimed).toHaveLength(1);
      await first.close();
      expect(await second.notifier.deliverDue()).toBe(0); // still held
      expect(posted).toEqual([]);
      second.clock.advance(61_000);
      expect(await second.notifier.deliverDue()).toBe(1);
      expect(await second.notifier.deliverDue()).toBe(0);
      expect(posted).toEqual(['https://merchant.test/dd']);
      expect(await second.store.get('SELECT attempts, delivered, claimed_by FROM notifications')).toEqual({
        attempts: 1,
        delivered: 1,
        claimed_by: null,
      });
    } finally {
      await first.close().catch(() => {});
      await second.close();
      await dropDatabase(url);
    }
  });
});
