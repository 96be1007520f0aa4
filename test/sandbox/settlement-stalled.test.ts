// Finding (a shared sandbox's operator, severity high): on PostgreSQL getSettlement read the whole file
// through one cursor, its pooled connection held in a transaction until the client had taken the last
// byte. A client that asked for a large file and read nothing held that connection for as long as it
// stayed connected (three connections 'active' after 150 s on a 6.6 MB export); as many stalled
// downloads as the pool has connections left every other request of the instance waiting 30 s for
// one and answered HTTP 500 -4 ("timeout exceeded when trying to connect"), the control API -4, and
// the health check 503, so that a load balancer would drop every instance. The file is now read a
// page at a time, each page its own short statement continuing after the last key, its connection
// back in the pool before the page is written to the client; a request that waits for a connection
// until the pool gives up is answered 503 with Retry-After, as an outage is; and a download whose
// client takes none of it for PGW_SANDBOX_ANSWER_STALL_MS is ended.
import { once } from 'node:events';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import zlib from 'node:zlib';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sandbox as sandboxData } from '../../contract/index.ts';
import { createSandbox, HEALTH_PATH, type RunningSandbox } from '../../sandbox/index.ts';
import type { GatewayRequest } from '../../server-stubs/index.ts';
import { signed } from '../hardening/support.ts';
import { doc } from '../support/contract.ts';
import { startSandboxProcess } from '../support/sandbox-process.ts';
import { until } from '../support/until.ts';
import { freshDatabase, PG_URL, SKIP_PG } from './support.ts';

/** The pool's size (PGW_DB_POOL): fewer connections than stalled downloads. */
const POOL = 2;
const STALLED = POOL + 1;
/**
 * The stalled merchant's rows: a zip of about 15.5 MB (15.05 MB at 150,000 rows), as big as the
 * 200,000 rows of md5 letters made it before, several times what a loopback socket's buffers hold
 * (each stalled answer had made about a third of it when it stalled). The volume is what the stalls
 * need; the rows' number only sets how many pages (PAGE_ROWS, 500) the order is checked across: 310.
 */
const ROWS = 155_000;
/**
 * Letters only (no digit run a card-number scan could read), upper and lower case at random: 256 KB
 * of them, made once, from which each row's long fields (reference and product, 64 letters each) are
 * cut, at an offset 997 letters on from the last row's. No text repeats within deflate's 32 KB window
 * (about 170 lines), so the file hardly deflates: 5.7 bits a letter, where the md5 digests' letters
 * these fields were made of before (16 of them, 4 bits) needed 200,000 rows for the same zip.
 */
const LETTERS = randomBytes(256 * 1024).map((byte) => (byte % 52 < 26 ? 65 + (byte % 52) : 71 + (byte % 52)));
/** Where row n's field starts in LETTERS, SQL (1-based): `offset` apart for its two fields. */
const start = (n: string, offset: number) => `1 + (${n} * 997 + ${offset}) % ${LETTERS.length - 64}`;

/** Settled days long past (whatever day the tests run on), each asked for whole. */
const DAYS = ['2021-03-01', '2021-03-02'] as const;
/** The pool's wait for a connection, before and after this change (store-postgres.ts). */
const POOL_WAIT_MS = 30_000;
const OTHER = 'stallother0001';

/** Row g's identifier; the days interleave in the order written, so the file's order (day, then rowid) is not the rows'. */
const dayOf = (g: number) => (g % 3 === 0 ? DAYS[0] : DAYS[1]);
/** The file's transaction IDs in order: day by day, within a day in the order written. */
const expectedIds = (n: number, prefix = 't-') => {
  const ids: string[] = [];
  for (const day of DAYS) for (let g = 1; g <= n; g++) if (dayOf(g) === day) ids.push(`${prefix}${g}`);
  return ids;
};

/** A settlement request for a merchant (the sandbox's credentials), signed. */
const settlementRequest = (merchantUUID: string): GatewayRequest =>
  signed('getSettlement', {
    method: 'getSettlement',
    merchantUUID,
    apiKey: sandboxData.apiKey,
    settlementFrom: DAYS[0],
    settlementTo: DAYS[1],
    version: '1.6',
  });

/** Sends the request over HTTP; resolves with the answer's head, its body not read (paused). */
function send(base: string, request: GatewayRequest): Promise<http.IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${base}${request.url}`, {
      method: request.verb,
      headers: request.headers as Record<string, string>,
    });
    req.on('response', (res) => {
      res.pause();
      resolve(res);
    });
    req.on('error', reject);
    req.end(request.body as string);
  });
}

/** The rest of an answer's body; rejects when the connection ends before the body does. */
async function bodyOf(res: http.IncomingMessage): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const part of res) parts.push(part as Buffer);
  return Buffer.concat(parts);
}

/**
 * The one entry of a settlement zip, read as the zip says: the central directory names the entry and
 * gives its method, CRC-32, sizes and local header; its bytes are inflated by node:zlib, natively
 * (reading the IDs of one 15 MB file of the first test took 0.8 to 1.1 s of CPU through fflate's
 * unzipSync, 0.5 s so), and held to the CRC-32 and size the directory gives, which unzipSync did not check.
 */
function entryOf(zip: Buffer, name: string): Buffer {
  const end = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  expect(end, 'the end of central directory record').toBeGreaterThanOrEqual(0);
  expect(zip.readUInt16LE(end + 10), 'entries in the zip').toBe(1);
  const dir = zip.readUInt32LE(end + 16);
  expect(zip.readUInt32LE(dir), 'the central directory header').toBe(0x02014b50);
  const nameLength = zip.readUInt16LE(dir + 28);
  expect(zip.toString('utf8', dir + 46, dir + 46 + nameLength)).toBe(name);
  expect(zip.readUInt16LE(dir + 10), 'the compression method (deflate)').toBe(8);
  const local = zip.readUInt32LE(dir + 42);
  expect(zip.readUInt32LE(local), 'the local file header').toBe(0x04034b50);
  const start = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
  const data = zlib.inflateRawSync(zip.subarray(start, start + zip.readUInt32LE(dir + 20)));
  expect(data.length, "the entry's size").toBe(zip.readUInt32LE(dir + 24));
  expect(zlib.crc32(data), "the entry's CRC-32").toBe(zip.readUInt32LE(dir + 16));
  return data;
}

/** The transaction IDs (first column) of a settlement zip's CSV, in order, and its header. */
function idsOf(zip: Buffer): { header: string; ids: string[] } {
  const csv = entryOf(zip, 'settlement.csv').toString('utf8');
  const lines = csv.split('\n');
  if (lines.at(-1) === '') lines.pop();
  return { header: lines[0]!, ids: lines.slice(1).map((line) => line.slice(0, line.indexOf(','))) };
}

describe.skipIf(!PG_URL)(`stalled settlement downloads on PostgreSQL${PG_URL ? '' : ` (${SKIP_PG})`}`, () => {
  let database: Awaited<ReturnType<typeof freshDatabase>>;
  let sb: RunningSandbox;
  let server: http.Server;
  let base = '';
  let db: pg.Client;
  /** The sandbox's answers to getSettlement, as its HTTP server writes them. */
  const answers: http.ServerResponse[] = [];
  const stalled: http.IncomingMessage[] = [];

  beforeAll(async () => {
    database = await freshDatabase(PG_URL!);
    // The stall cut (60 s by default) is not what this test is about: a slow machine reading the three
    // downloads one after another must not meet it.
    sb = await createSandbox({
      dbPath: database.url,
      env: { PGW_SANDBOX_ANSWER_STALL_MS: '600000', PGW_DB_POOL: String(POOL) },
      control: true,
    });
    server = sb.server();
    server.prependListener('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
      if (req.method === 'POST' && req.url?.startsWith('/post')) answers.push(res);
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    db = new pg.Client({ connectionString: database.url });
    await db.connect();
    // Another merchant (another team), with the sandbox's key and passphrase, and a few rows of its own.
    await db.query(
      "INSERT INTO accounts (kind, id, api_key, passphrase, partner_id, created_at) VALUES ('merchant', $1, $2, $3, $4, '2021-01-01 00:00:00')",
      [OTHER, sandboxData.apiKey, sb.seed.passphrase, sb.seed.partnerUUID],
    );
    // The long fields cut from LETTERS (a bytea parameter: its substring is a seek, a text's a scan).
    const cut = (offset: number) => `convert_from(substring($7::bytea from ${start('g', offset)} for 64), 'UTF8')`;
    const insert = (merchant: string, count: number, kind: string, idPrefix: string) =>
      db.query(
        `INSERT INTO transactions (id, merchant_id, kind, status, response_code, response_message, amount, captured, currency, reference, product, card_type, masked_pan, expiry_month, expiry_year, auth_code, auth_response_code, auth_message, receipt_no, settled_date, custom, created_at)
         SELECT $1 || g, $2, $3, 'approved', 0, 'Transaction approved', 1234, 1234, 'AUD', ${cut(0)}, ${cut(131_071)},
                'visa', '456471XXXXXX0004', '02', '29', '123456', '00', 'Approved', '123456789',
                CASE WHEN g % 3 = 0 THEN $4 ELSE $5 END, '[]', '2021-03-01 10:00:00'
         FROM generate_series(1, $6::int) AS g ORDER BY g`,
        [idPrefix, merchant, kind, DAYS[0], DAYS[1], count, Buffer.from(LETTERS)],
      );
    await insert(sb.seed.merchantUUID, ROWS, 'purchase', 't-');
    await insert(sb.seed.merchantUUID, 50, 'refund', 'refund-'); // not a settled card payment: not listed
    await insert(OTHER, 7, 'purchase', 'o-');
    await db.query('ANALYZE transactions');
  }, 120_000);

  afterAll(async () => {
    for (const res of stalled) res.destroy();
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
    await db?.end();
    await sb?.close();
    await database?.drop();
  });

  it('downloads that read nothing hold no connection: another merchant and the health check are served at once', async () => {
    // More stalled downloads than the pool has connections: each sent, its answer's head taken,
    // nothing of its body read.
    const requested = Array.from({ length: STALLED }, () => send(base, settlementRequest(sb.seed.merchantUUID)));
    // Each answer stalls part-way: the sandbox waits for its client to take what it wrote, the file
    // unfinished. (Before the change the last of them waited for a connection instead.)
    const stalling = await until(
      () => answers.length === STALLED && answers.every((a) => a.headersSent && a.writableNeedDrain),
      60_000,
      100,
    );
    expect.soft(stalling, 'every download started and stalled part-way').toBe(true);
    for (const [i, a] of answers.entries()) expect.soft(a.writableFinished, `download ${i} is unfinished`).toBe(false);

    // Nothing of the database is held for them: no statement running or transaction open on the
    // settlement's rows.
    const held = async () =>
      Number(
        (
          await db.query(
            "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND (state <> 'idle' OR xact_start IS NOT NULL) AND query ILIKE '%FROM transactions%'",
          )
        ).rows[0].n,
      );
    await until(async () => (await held()) === 0, 10_000, 100);
    expect.soft(await held(), 'backends holding a settlement read for the stalled downloads').toBe(0);

    // Another merchant's file: answered, whole, well within the pool's wait for a connection.
    const started = Date.now();
    const other = await send(base, settlementRequest(OTHER));
    const otherZip = await bodyOf(other);
    const took = Date.now() - started;
    expect.soft(other.statusCode, `another merchant's getSettlement (${otherZip.subarray(0, 80)})`).toBe(200);
    if (other.statusCode === 200) {
      const file = idsOf(otherZip);
      expect(file.ids).toEqual(expectedIds(7, 'o-'));
    }
    expect.soft(took, "another merchant's getSettlement, ms").toBeLessThan(POOL_WAIT_MS);
    // The load balancer's health check, and the control API.
    const health = await fetch(`${base}${HEALTH_PATH}`);
    expect.soft(health.status, 'health').toBe(200);
    const clock = await fetch(`${base}/_sandbox/clock`, {
      headers: { authorization: `Basic ${Buffer.from(`${OTHER}:${sandboxData.apiKey}`).toString('base64')}` },
    });
    expect.soft(clock.status, 'the control API').toBe(200);
    expect.soft((await clock.json()).responseCode, 'the control API').toBe(0);

    // Still stalled, the stalled downloads then read to their end: each the whole file, in order.
    stalled.push(...(await Promise.all(requested)));
    for (const res of stalled) expect(res.statusCode).toBe(200);
    const expected = expectedIds(ROWS);
    // A download whose bytes are those of one already read whole here holds the same rows in the same
    // order: it is not inflated and split again (1 s of CPU each); one that differs in any byte is.
    const readWhole: Buffer[] = [];
    for (const res of stalled) {
      const zip = await bodyOf(res);
      if (readWhole.some((whole) => whole.equals(zip))) continue;
      const file = idsOf(zip);
      expect(file.header.split(',')[0]).toBe('transactionID');
      expect(file.ids.length).toBe(expected.length);
      expect(
        file.ids.findIndex((id, i) => id !== expected[i]),
        'the first row out of place',
      ).toBe(-1);
      readWhole.push(zip);
    }
  }, 240_000);
});

describe.skipIf(!PG_URL)(`a pool that lends out every connection${PG_URL ? '' : ` (${SKIP_PG})`}`, () => {
  // The pool's wait shortened (PGW_DB_POOL_WAIT_MS) so that the test need not sit through 30 s.
  it('a request that waits for a connection until the pool gives up is answered 503, Retry-After, -4; the breaker stays closed', async () => {
    const database = await freshDatabase(PG_URL!);
    let sb: RunningSandbox | undefined;
    let server: http.Server | undefined;
    let holder: pg.PoolClient | undefined;
    try {
      sb = await createSandbox({
        dbPath: database.url,
        env: { PGW_DB_POOL_WAIT_MS: '3000', PGW_DB_POOL: '1' },
        control: true,
      });
      server = sb.server().listen(0, '127.0.0.1');
      await once(server, 'listening');
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      // The pool's one connection lent out (as a long request would hold it).
      const pool = (sb.store as unknown as { pool: pg.Pool }).pool;
      holder = await pool.connect();
      const answer = await send(base, settlementRequest(sb.seed.merchantUUID));
      const body = (await bodyOf(answer)).toString('utf8');
      expect(answer.statusCode, body).toBe(503);
      expect(answer.headers['retry-after']).toMatch(/^[1-9]\d*$/);
      expect(JSON.parse(body)).toEqual({
        responseCode: '-4',
        // Its own words: the database answers, the instance's connections are busy (not unreachable).
        responseMessage: `The sandbox's database connections are all busy: retry after ${answer.headers['retry-after']} s`,
      });
      // The control API too: its write waits for the connection.
      const advance = await fetch(`${base}/_sandbox/clock/advance`, {
        method: 'POST',
        headers: {
          authorization: `Basic ${Buffer.from(`${sb.seed.merchantUUID}:${sb.seed.apiKey}`).toString('base64')}`,
          'content-type': 'application/json',
        },
        body: JSON.stringify({ seconds: 1 }),
      });
      const refusal = await advance.text();
      expect(advance.status, refusal).toBe(503);
      expect(advance.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
      expect(JSON.parse(refusal)).toEqual({
        responseCode: -4,
        responseMessage: `The sandbox's database connections are all busy: retry after ${advance.headers.get('retry-after')} s`,
      });
      // The database answers: the next request, once a connection is free, is served (no breaker).
      holder.release();
      holder = undefined;
      const served = await send(base, settlementRequest(sb.seed.merchantUUID));
      await bodyOf(served);
      expect(served.statusCode).toBe(200);
    } finally {
      holder?.release();
      server?.closeAllConnections();
      await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
      await sb?.close();
      await database.drop();
    }
  }, 120_000);
});

/**
 * ROWS settled purchases of the sandbox's merchant in an SQLite store, their long fields cut from
 * LETTERS (a blob parameter) as on PostgreSQL: a zip of over 15 MB. (Ten nested replace() of a random
 * blob per field made them before: 7.0 s of CPU for the two stores of this file.)
 */
async function settledRows(sb: RunningSandbox): Promise<void> {
  const cut = (offset: number) => `CAST(substr(?1, ${start('n', offset)}, 64) AS TEXT)`;
  await sb.store.run(
    `WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < ?2)
     INSERT INTO transactions (id, merchant_id, kind, status, response_code, response_message, amount, captured, currency, reference, product, card_type, masked_pan, expiry_month, expiry_year, auth_code, auth_response_code, auth_message, receipt_no, settled_date, custom, created_at)
     SELECT 't-' || n, ?3, 'purchase', 'approved', 0, 'Transaction approved', 1234, 1234, 'AUD', ${cut(0)}, ${cut(131_071)},
            'visa', '456471XXXXXX0004', '02', '29', '123456', '00', 'Approved', '123456789',
            CASE WHEN n % 3 = 0 THEN ?4 ELSE ?5 END, '[]', '2021-03-01 10:00:00'
     FROM g`,
    LETTERS,
    ROWS,
    sb.seed.merchantUUID,
    DAYS[0],
    DAYS[1],
  );
}

describe('a download whose client takes none of it', () => {
  // One SQLite store of the settled rows, made once (settledRows took 2.5 s of CPU a store) and copied
  // for the second test, so that each test has a store of its own, as each had before.
  let dir = '';
  let file = '';
  let copy = '';
  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'pgw-stall-'));
    file = path.join(dir, 'sandbox.db');
    copy = path.join(dir, 'copy.db');
    const seeded = await createSandbox({ dbPath: file, env: {} });
    await settledRows(seeded);
    await seeded.close();
    copyFileSync(file, copy);
  }, 120_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("is told in one line of the sandbox's log once it is cut (a sandbox process, as npm start runs it)", async () => {
    // Finding: the cut ended a download without a trace; the request log had said 200 already.
    const sandbox = await startSandboxProcess({ PGW_DB: file, PGW_SANDBOX_ANSWER_STALL_MS: '1000' });
    try {
      const res = await send(sandbox.base, settlementRequest(doc.info['x-sandbox'].merchantUUID));
      expect(res.statusCode).toBe(200);
      const cut = () =>
        sandbox
          .output()
          .split('\n')
          .filter((line) => line.includes('streamed answer cut'));
      // Within a bound far above the stall limit, whatever the machine's load.
      await until(() => cut().length > 0, 30_000, 100);
      expect(cut()).toEqual([
        'payment-gateway: WARN streamed answer cut: its client took none of it verb=POST path=/post status=200 stalledMs=1000',
      ]);
      res.destroy();
    } finally {
      sandbox.child.kill('SIGKILL');
    }
  }, 120_000);

  it('is ended after PGW_SANDBOX_ANSWER_STALL_MS, its connection closed before the file is whole', async () => {
    const sb = await createSandbox({ dbPath: copy, env: { PGW_SANDBOX_ANSWER_STALL_MS: '1000' } });
    const server = sb.server();
    const answers: http.ServerResponse[] = [];
    server.prependListener('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
      if (req.method === 'POST' && req.url?.startsWith('/post')) answers.push(res);
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const res = await send(base, settlementRequest(sb.seed.merchantUUID));
      expect(res.statusCode).toBe(200);
      // Ended by the sandbox: within a bound far above the stall limit, whatever the machine's load.
      const closed = await until(() => answers[0]?.destroyed === true, 30_000, 100);
      expect(closed, 'the stalled answer was ended').toBe(true);
      expect(answers[0]!.writableFinished, 'the file was not finished').toBe(false);
      // What reached the client ends before the file does.
      const ended = await bodyOf(res).then(
        () => 'whole',
        () => 'cut',
      );
      expect(ended).toBe('cut');
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await sb.close();
    }
  }, 120_000);
});
