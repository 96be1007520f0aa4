// A team's own merchant on a shared sandbox: `payment-gateway sandbox accounts add` makes one on the
// store the sandbox runs on (PGW_DB), with secrets of its own, while an instance serves that store;
// the control API and the gateway then keep the teams apart (a team's secrets reach its own merchant
// only). `accounts list` shows ids and kinds, never a secret; `accounts rotate` gives a merchant new
// secrets, which hold at once. Its mistakes are one line and exit 2.
// On an SQLite file always; on PostgreSQL too when PGW_TEST_DATABASE_URL is set.
import { execFile } from 'node:child_process';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { DatabaseSync } from 'node:sqlite';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGatewayClient, type GatewayClient } from '../../generated/client.ts';
import { ControlError, createControlClient } from '../../sandbox/control-client.ts';
import { MIGRATIONS } from '../../sandbox/store.ts';
import { postgresMigration } from '../../sandbox/store-postgres.ts';
import { doc, ROOT } from '../support/contract.ts';
import {
  killed,
  PG_URL,
  postgresDatabase,
  SKIP_PG,
  sqliteDatabase,
  startInstance,
  type Database,
  type Instance,
} from '../support/instances.ts';

const NODE = path.join(ROOT, 'node_modules/.bin/node');
const CLI = path.join(ROOT, 'cli/main.ts');
const defaults = doc.info['x-sandbox'];
const visa = { ...defaults.testCard, paymentCardName: defaults.customer.customerName };

interface Made {
  kind: string;
  merchantUUID: string;
  apiKey: string;
  passphrase: string;
}

const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(PORT|HOST|NODE_ENV|PGW_)/.test(k)));

/** `payment-gateway sandbox accounts ARGS` on the database, as an operator runs it (key '': no PGW_SANDBOX_DATA_KEY). */
async function accounts(db: Database, key: string, args: string[], env: Record<string, string> = {}) {
  return promisify(execFile)(NODE, [CLI, 'sandbox', 'accounts', ...args], {
    cwd: ROOT,
    env: { ...clean, PGW_DB: db.url, ...(key ? { PGW_SANDBOX_DATA_KEY: key } : {}), ...env },
    timeout: 60_000,
  }).then(
    ({ stdout, stderr }) => ({ code: 0, out: stdout, err: stderr }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, out: e.stdout, err: e.stderr }),
  );
}

/** The environment that has a command record each worker thread it starts in `file` (test/support/record-workers.mjs). */
const recordingWorkers = (file: string) => ({
  NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import=${pathToFileURL(path.join(ROOT, 'test/support/record-workers.mjs')).href}`,
  PGW_RECORD_WORKERS: file,
});
/** The threads recorded in `file`: one line each. */
const workersRecorded = (file: string): string[] =>
  existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];

it('the worker recorder records the threads a program starts (so that a command it records none of started none)', async () => {
  const records = path.join(os.tmpdir(), `pgw-workers-${randomUUID()}.jsonl`);
  try {
    await promisify(execFile)(
      NODE,
      ['--input-type=module', '-e', "import { Worker } from 'node:worker_threads'; new Worker('0', { eval: true });"],
      { env: { ...clean, ...recordingWorkers(records) } },
    );
    expect(workersRecorded(records)).toHaveLength(1);
  } finally {
    rmSync(records, { force: true });
  }
});

const refusal = (p: Promise<unknown>) =>
  p.then(
    () => 'accepted',
    (e: unknown) => (e instanceof ControlError ? `${e.responseCode} ${e.message}` : String(e)),
  );

/** Rows of a query on a PostgreSQL database, read straight from it. */
async function pgRows<T>(url: string, sql: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql)).rows;
  } finally {
    await client.end();
  }
}

const STORES: { name: string; make: () => Promise<Database> }[] = [
  { name: 'SQLite', make: async () => sqliteDatabase() },
  ...(PG_URL ? [{ name: 'PostgreSQL', make: () => postgresDatabase(PG_URL!, 'accounts') }] : []),
];
if (!PG_URL) it.skip(`sandbox accounts on PostgreSQL: ${SKIP_PG}`, () => {});

describe.each(STORES)('sandbox accounts on $name', ({ make }) => {
  let db: Database;
  const key = randomBytes(32).toString('base64');
  let instance: Instance;
  let a: Made;
  let b: Made;
  const gateway = (base: string, merchantUUID: string, secrets: Pick<Made, 'apiKey' | 'passphrase'>): GatewayClient =>
    createGatewayClient({ baseUrl: base, merchantUUID, apiKey: secrets.apiKey, passphrase: secrets.passphrase });
  const control = (accountId: string, apiKey: string) =>
    createControlClient({ baseUrl: instance.base, accountId, apiKey });

  beforeAll(async () => {
    db = await make();
    instance = await startInstance(0, db, key);
  }, 120_000);
  afterAll(async () => {
    if (instance) await killed(instance);
    await db?.drop();
  });

  it('makes two merchants, each with secrets of its own, while an instance serves the store', async () => {
    const first = await accounts(db, key, ['add', '--json']);
    expect(first.err).toBe('');
    expect(first.code).toBe(0);
    a = JSON.parse(first.out);
    // The human form: the same fields, said once.
    const second = await accounts(db, key, ['add']);
    expect(second.code, second.err).toBe(0);
    expect(second.err).toBe('');
    const field = (name: string) => new RegExp(`^\\s+${name}\\s+(\\S+)$`, 'm').exec(second.out)?.[1];
    b = {
      kind: 'merchant',
      merchantUUID: field('merchantUUID')!,
      apiKey: field('apiKey')!,
      passphrase: field('passphrase')!,
    };
    for (const made of [a, b]) {
      expect(made.kind).toBe('merchant');
      // The shape of the seeded merchant ('5265f8eed6a19'), within the spec's MerchantUUID.
      expect(made.merchantUUID).toMatch(/^[0-9a-f]{13}$/);
      expect(made.apiKey).toMatch(/^[a-z]{24}$/);
      expect(made.passphrase).toMatch(/^[a-z0-9]{32}$/);
    }
    expect(new Set([a.merchantUUID, b.merchantUUID, defaults.merchantUUID]).size).toBe(3);
    expect(new Set([a.apiKey, b.apiKey, defaults.apiKey]).size).toBe(3);
    expect(new Set([a.passphrase, b.passphrase, defaults.passphrase]).size).toBe(3);
  });

  it("keeps the teams apart through the running instance: A's secrets reach neither B's transactions nor B's control API", async () => {
    const base = instance.base;
    const asA = gateway(base, a.merchantUUID, a);
    const asB = gateway(base, b.merchantUUID, b);
    // Each works with its own secrets at once: the instance looks accounts up per request.
    const bought = (await asB.processCard({
      transactionAmount: '10.00',
      transactionCurrency: 'AUD',
      transactionProduct: 'Team B',
      transactionReferenceID: 'TEAM-B-1',
      customerName: defaults.customer.customerName,
      ...visa,
    } as never)) as { responseCode: string; transactionID: string };
    expect(bought.responseCode).toBe('0');
    expect((await asB.queryCard({ transactionID: bought.transactionID })).responseCode).toBe('0');
    // A, as itself, does not find B's transaction; A's secrets under B's id are no one's.
    expect((await asA.queryCard({ transactionID: bought.transactionID })).responseCode).not.toBe('0');
    expect(await gateway(base, b.merchantUUID, a).queryCard({ transactionID: bought.transactionID })).toMatchObject({
      responseCode: '-1',
      responseMessage: 'Invalid authentication credentials',
    });
    // Nor do the seeded (operator's) secrets open a team's merchant.
    expect(
      (await gateway(base, b.merchantUUID, defaults).queryCard({ transactionID: bought.transactionID })).responseCode,
    ).toBe('-1');

    // The control API: A's api key under B's id is refused; A, as itself, resets and moves only its own.
    expect(await refusal(control(b.merchantUUID, a.apiKey).clock())).toMatch(/^-1 /);
    expect(await refusal(control(b.merchantUUID, defaults.apiKey).resetMerchant(b.merchantUUID))).toMatch(/^-1 /);
    expect(await refusal(control(a.merchantUUID, a.apiKey).resetMerchant(b.merchantUUID))).toBe(
      "-2 Field 'merchantUUID' is invalid: a merchant resets its own data only",
    );
    await control(a.merchantUUID, a.apiKey).advanceClock({ days: 3 });
    expect(
      ((await control(a.merchantUUID, a.apiKey).clock()) as { offsetSeconds: number }).offsetSeconds,
    ).toBeGreaterThan(3 * 86_400 - 60);
    expect(
      Math.abs(((await control(b.merchantUUID, b.apiKey).clock()) as { offsetSeconds: number }).offsetSeconds),
    ).toBeLessThan(60);
    // B's data is still there for B, which resets it itself.
    expect((await asB.queryCard({ transactionID: bought.transactionID })).responseCode).toBe('0');
    expect(await refusal(control(b.merchantUUID, b.apiKey).resetMerchant(b.merchantUUID))).toBe('accepted');
  });

  it('lists ids and kinds, never a secret', async () => {
    const listed = await accounts(db, key, ['list']);
    expect(listed.code, listed.err).toBe(0);
    for (const id of [a.merchantUUID, b.merchantUUID, defaults.merchantUUID, defaults.partnerUUID])
      expect(listed.out).toContain(id);
    const json = await accounts(db, key, ['list', '--json']);
    expect(JSON.parse(json.out)).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ kind: 'merchant', id: a.merchantUUID }),
        expect.objectContaining({ kind: 'partner', id: defaults.partnerUUID }),
      ]),
    );
    for (const secret of [a.apiKey, a.passphrase, b.apiKey, b.passphrase, defaults.apiKey, defaults.passphrase]) {
      expect(listed.out).not.toContain(secret);
      expect(json.out).not.toContain(secret);
    }
  });

  it("rotates a merchant's secrets: the old ones stop working at once, the new ones work", async () => {
    const rotated = await accounts(db, key, ['rotate', a.merchantUUID, '--json']);
    expect(rotated.code, rotated.err).toBe(0);
    const next: Made = JSON.parse(rotated.out);
    expect(next.merchantUUID).toBe(a.merchantUUID);
    expect(next.apiKey).not.toBe(a.apiKey);
    expect(next.passphrase).not.toBe(a.passphrase);
    expect(await refusal(control(a.merchantUUID, a.apiKey).clock())).toMatch(/^-1 /);
    expect(await refusal(control(a.merchantUUID, next.apiKey).clock())).toBe('accepted');
    expect(
      (await gateway(instance.base, a.merchantUUID, a).queryCard({ transactionReferenceID: 'none' })).responseCode,
    ).toBe('-1');
    a = next;
  });

  it('refuses its mistakes in one line, exit 2, printing nothing else', async () => {
    const oneLine = (r: { code: number; out: string; err: string }, text: string | RegExp) => {
      expect(r.code).toBe(2);
      expect(r.out).toBe('');
      expect(r.err.trim().split('\n')).toHaveLength(1);
      expect(r.err).not.toMatch(/\n\s+at /);
      expect(r.err).toMatch(text);
    };
    oneLine(
      await accounts(db, key, ['add', '--bogus']),
      "payment-gateway sandbox accounts add: Unknown option '--bogus' (see payment-gateway sandbox accounts add --help)",
    );
    oneLine(
      await accounts(db, key, ['add', '--merchant-uuid', a.merchantUUID]),
      `payment-gateway sandbox accounts add: merchant ${a.merchantUUID} exists already`,
    );
    oneLine(
      await accounts(db, key, ['add', '--merchant-uuid', defaults.partnerUUID]),
      `payment-gateway sandbox accounts add: ${defaults.partnerUUID} is a partner's id already`,
    );
    // The length the spec's MerchantUUID allows, as the spec states it.
    const { minLength, maxLength } = doc.components.schemas.MerchantUUID;
    const shape = `--merchant-uuid must be ${minLength} to ${maxLength} letters, digits, '.', '_' or '-'`;
    oneLine(await accounts(db, key, ['add', '--merchant-uuid', 'has:colon']), shape);
    oneLine(await accounts(db, key, ['add', '--merchant-uuid', 'm'.repeat(maxLength + 1)]), shape);
    oneLine(
      await accounts(db, key, ['add', '--partner', 'nobody000000']),
      'payment-gateway sandbox accounts add: there is no partner nobody000000 in the database (payment-gateway sandbox accounts list shows its accounts)',
    );
    oneLine(
      await accounts(db, key, ['rotate', 'nobody000000']),
      'payment-gateway sandbox accounts rotate: there is no merchant nobody000000 in the database (payment-gateway sandbox accounts list shows its accounts)',
    );
    oneLine(await accounts(db, key, ['rotate']), /rotate needs the merchantUUID/);
    oneLine(await accounts(db, key, ['remove']), /unknown accounts command 'remove'/);
    oneLine(await accounts(db, key, []), /payment-gateway sandbox accounts: add, list or rotate/);
  });

  it("takes a merchantUUID of the spec's MerchantUUID maxLength", async () => {
    const id = 'm'.repeat(doc.components.schemas.MerchantUUID.maxLength);
    const made = await accounts(db, key, ['add', '--merchant-uuid', id, '--json']);
    expect(made.code, made.err).toBe(0);
    expect(JSON.parse(made.out)).toMatchObject({ merchantUUID: id });
  });

  it('starts no thread: its few statements wait in the log for a checkpoint, and the instance serves what it wrote at once', async () => {
    const records = path.join(os.tmpdir(), `pgw-workers-${randomUUID()}.jsonl`);
    try {
      const made = await accounts(db, key, ['add', '--json'], recordingWorkers(records));
      expect(made.code, made.err).toBe(0);
      expect(workersRecorded(records)).toEqual([]);
      const m: Made = JSON.parse(made.out);
      expect(
        (await gateway(instance.base, m.merchantUUID, m).queryCard({ transactionReferenceID: 'none' })).responseCode,
      ).not.toBe('-1');
    } finally {
      rmSync(records, { force: true });
    }
  });

  it('needs no data key and makes none: accounts hold no card data', async () => {
    // The instances run with PGW_SANDBOX_DATA_KEY; the operator's shell has none.
    const listed = await accounts(db, '', ['list']);
    expect(listed.code, listed.err).toBe(0);
    expect(listed.out).toContain(defaults.merchantUUID);
    if (db.kind === 'sqlite') expect(readdirSync(path.dirname(db.url))).not.toContain('shared.db.key');
    else expect(await pgRows(db.url, 'SELECT name FROM sandbox_keys')).toEqual([]);
  });

  it('makes a merchant of a partner when asked, with secrets of its own still', async () => {
    const made = await accounts(db, key, ['add', '--partner', defaults.partnerUUID, '--json']);
    expect(made.code, made.err).toBe(0);
    const m: Made & { partnerUUID: string } = JSON.parse(made.out);
    expect(m.partnerUUID).toBe(defaults.partnerUUID);
    expect(m.apiKey).not.toBe(defaults.apiKey);
    const listed = JSON.parse((await accounts(db, key, ['list', '--json'])).out) as { id: string; partner?: string }[];
    expect(listed.find((l) => l.id === m.merchantUUID)).toMatchObject({ partner: defaults.partnerUUID });
  });
});

it('the command refuses a database the sandbox has not made, and creates nothing', async () => {
  const db = sqliteDatabase();
  try {
    const r = await accounts(db, randomBytes(32).toString('base64'), ['add']);
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(r.err.trim()).toBe(
      `payment-gateway sandbox accounts add: there is no sandbox database at ${db.url}: start the sandbox on it once (it makes and seeds it), or name the sandbox's with --db or PGW_DB`,
    );
    const { existsSync } = await import('node:fs');
    expect(existsSync(db.url)).toBe(false);
  } finally {
    await db.drop();
  }
});

/** Each file of the folder, its mode and its bytes' hash: what a refusal must leave as it was. */
function folderState(dir: string): Record<string, string> {
  return Object.fromEntries(
    readdirSync(dir).map((name) => {
      const file = path.join(dir, name);
      return [
        name,
        `${(statSync(file).mode & 0o777).toString(8)} ${createHash('sha256').update(readFileSync(file)).digest('hex')}`,
      ];
    }),
  );
}

/** A sandbox's database as an older sandbox left it: the first `version` migrations, in WAL mode. */
function olderSqlite(file: string, version: number): void {
  const d = new DatabaseSync(file);
  d.exec('PRAGMA journal_mode = WAL');
  for (const sql of MIGRATIONS.slice(0, version)) d.exec(sql);
  d.exec(`PRAGMA user_version = ${version}`);
  d.close();
}

const latest = MIGRATIONS.length;

describe('a database the command refuses is left as it was, on SQLite', () => {
  const cases: { name: string; make: (file: string) => void; said: RegExp }[] = [
    {
      name: "another program's SQLite file",
      make: (file) => {
        const d = new DatabaseSync(file);
        d.exec('CREATE TABLE notes(x)');
        d.close();
      },
      said: /there is no sandbox database at \S+other\.db: start the sandbox on it once/,
    },
    {
      name: 'a file that is no SQLite database',
      make: (file) => writeFileSync(file, 'notes\n', { mode: 0o644 }),
      said: /\S+other\.db is no SQLite database \(file is not a database\)/,
    },
    {
      name: "an older sandbox's database, its instances running",
      make: (file) => olderSqlite(file, latest - 1),
      said: new RegExp(`the database \\S+other\\.db is at schema v${latest - 1}, older than this sandbox's v${latest}`),
    },
    {
      name: "a newer sandbox's database",
      make: (file) => {
        olderSqlite(file, latest);
        const d = new DatabaseSync(file);
        d.exec(`PRAGMA user_version = ${latest + 1}`);
        d.close();
      },
      said: new RegExp(`the database \\S+other\\.db is at schema v${latest + 1}, newer than this sandbox's v${latest}`),
    },
    {
      name: 'a database migrated but never seeded',
      make: (file) => olderSqlite(file, latest),
      said: /there is no sandbox database at \S+other\.db/,
    },
  ];
  it.each(cases)(
    '$name: refused in one line, exit 2, every file byte for byte as it was, no key file',
    async ({ make, said }) => {
      const db = sqliteDatabase();
      const dir = path.dirname(db.url);
      const file = path.join(dir, 'other.db');
      make(file);
      const before = folderState(dir);
      try {
        for (const args of [['list'], ['add'], ['rotate', defaults.merchantUUID]]) {
          const r = await accounts({ ...db, url: file }, '', args);
          expect(r.code, r.err).toBe(2);
          expect(r.out).toBe('');
          expect(r.err.trim().split('\n')).toHaveLength(1);
          expect(r.err).toMatch(said);
          expect(folderState(dir)).toEqual(before);
        }
      } finally {
        await db.drop();
      }
    },
  );
});

describe('a database the command refuses is left as it was, on PostgreSQL', () => {
  if (!PG_URL) {
    it.skip(SKIP_PG, () => {});
    return;
  }
  /** Its tables, and the schema version and vault keys when it has them. */
  const state = async (url: string) => {
    const tables = await pgRows<{ name: string }>(
      url,
      "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1",
    );
    const has = (name: string) => tables.some((t) => t.name === name);
    return {
      tables: tables.map((t) => t.name),
      version: has('pgw_schema') ? await pgRows(url, 'SELECT version FROM pgw_schema') : null,
      keys: has('sandbox_keys') ? await pgRows(url, 'SELECT name FROM sandbox_keys') : null,
    };
  };
  const cases: { name: string; make: (url: string) => Promise<void>; said: RegExp }[] = [
    { name: 'an empty database', make: async () => {}, said: /there is no sandbox database at postgres/ },
    {
      name: "an older sandbox's database, its instances running",
      make: async (url) => {
        await pgRows(url, 'CREATE TABLE pgw_schema (version INTEGER NOT NULL)');
        await pgRows(url, `INSERT INTO pgw_schema VALUES (${latest - 1})`);
        for (const sql of MIGRATIONS.slice(0, latest - 1)) await pgRows(url, postgresMigration(sql));
      },
      said: new RegExp(`is at schema v${latest - 1}, older than this sandbox's v${latest}`),
    },
  ];
  it.each(cases)('$name: refused in one line, exit 2, no table, row or key made', async ({ make, said }) => {
    const db = await postgresDatabase(PG_URL!, 'refused');
    try {
      await make(db.url);
      const before = await state(db.url);
      for (const args of [['list'], ['add'], ['rotate', defaults.merchantUUID]]) {
        const r = await accounts(db, '', args);
        expect(r.code, r.err).toBe(2);
        expect(r.out).toBe('');
        expect(r.err.trim().split('\n')).toHaveLength(1);
        expect(r.err).toMatch(said);
        expect(await state(db.url)).toEqual(before);
      }
    } finally {
      await db.drop();
    }
  });
});
