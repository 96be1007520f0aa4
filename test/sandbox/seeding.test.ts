// The rule `sandbox --help` states: the accounts are seeded into a new database only, and a database
// keeps the accounts it was made with. A later start whose PGW_SANDBOX_* variables name other accounts
// adds none (it used to add a merchant and a partner, with the public default key when none was set)
// and says so in one line on stderr; instances starting together on a new database, each with other
// variables, seed it once, as processes (SQLite and PostgreSQL) and as stores of one process whose
// transactions overlap (PostgreSQL).
// On an SQLite file always; on PostgreSQL too when PGW_TEST_DATABASE_URL is set.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { seedAccounts } from '../../sandbox/accounts.ts';
import { Clock } from '../../sandbox/clock.ts';
import { DEFAULT_SURCHARGE_BP } from '../../sandbox/data.ts';
import { openStore } from '../../sandbox/open-store.ts';
import type { Store } from '../../sandbox/store.ts';
import { doc } from '../support/contract.ts';
import {
  databaseOfVersion,
  killed,
  PG_URL,
  postgresDatabase,
  SKIP_PG,
  sqliteDatabase,
  startInstance,
  storedAccounts,
  type Database,
  type Instance,
} from '../support/instances.ts';

const defaults = doc.info['x-sandbox'];

const STORES: { name: string; make: () => Promise<Database> }[] = [
  { name: 'SQLite', make: async () => sqliteDatabase() },
  ...(PG_URL ? [{ name: 'PostgreSQL', make: () => postgresDatabase(PG_URL!, 'seeding') }] : []),
];
if (!PG_URL) it.skip(`the seeding rule on PostgreSQL: ${SKIP_PG}`, () => {});

describe.each(STORES)('the seeding rule on $name: a database keeps the accounts it was made with', ({ make }) => {
  it('a later start with other account variables adds no account, and says so in one line on stderr', async () => {
    const db = await make();
    const key = randomBytes(32).toString('base64');
    const started: Instance[] = [];
    try {
      started.push(await startInstance(0, db, key));
      const before = await storedAccounts(db);
      expect(before.map((a) => a.id).sort()).toEqual([defaults.merchantUUID, defaults.partnerUUID].sort());
      const other = await startInstance(1, db, key, {
        env: { PGW_SANDBOX_MERCHANT_UUID: 'ffff00000001a', PGW_SANDBOX_PARTNER_UUID: 'ffff00000002b' },
      });
      started.push(other);
      expect(await storedAccounts(db)).toEqual(before);
      const said = other.errors().trim().split('\n');
      expect(said).toEqual([
        expect.stringMatching(
          /^payment-gateway-sandbox: .* keeps the accounts it was made with: it holds no merchant ffff00000001a \(PGW_SANDBOX_MERCHANT_UUID\) nor partner ffff00000002b \(PGW_SANDBOX_PARTNER_UUID\), and none was added; payment-gateway-sandbox accounts add makes a merchant$/,
        ),
      ]);
      // The first instance said nothing of the kind: the accounts it named are the database's.
      expect(started[0]!.errors()).toBe('');
    } finally {
      await Promise.all(started.map((i) => killed(i)));
      await db.drop();
    }
  }, 120_000);

  it('a database made before this rule (schema v13, seeded with other accounts) keeps its accounts on a start with the defaults', async () => {
    const db = await make();
    const key = randomBytes(32).toString('base64');
    // As a sandbox of schema v13 left it: seeded with the operator's own merchant and partner.
    await databaseOfVersion(db, 13, [
      "INSERT INTO accounts (kind, id, api_key, passphrase, partner_id, created_at) VALUES ('partner', 'oldpartner001', 'k', 'p', NULL, '2026-11-01 00:00:00')",
      "INSERT INTO accounts (kind, id, api_key, passphrase, partner_id, created_at) VALUES ('merchant', 'oldmerchant01', 'k', 'p', 'oldpartner001', '2026-11-01 00:00:00')",
    ]);
    const before = await storedAccounts(db);
    let instance: Instance | undefined;
    try {
      instance = await startInstance(0, db, key);
      expect(await storedAccounts(db)).toEqual(before);
      expect(instance.errors()).toMatch(
        new RegExp(
          `it holds no merchant ${defaults.merchantUUID} \\(the spec's x-sandbox one: PGW_SANDBOX_MERCHANT_UUID is unset\\) nor partner ${defaults.partnerUUID} `,
        ),
      );
      expect(instance.output()).toContain(`merchant  none: the database holds no merchant ${defaults.merchantUUID}`);
    } finally {
      if (instance) await killed(instance);
      await db.drop();
    }
  }, 120_000);

  it('instances starting together on a new database, each with other account variables, seed it once', async () => {
    const db = await make();
    const key = randomBytes(32).toString('base64');
    const started: Instance[] = [];
    try {
      started.push(
        ...(await Promise.all(
          [0, 1, 2].map((i) =>
            startInstance(i, db, key, {
              env: { PGW_SANDBOX_MERCHANT_UUID: `seed000000${i}aa`, PGW_SANDBOX_PARTNER_UUID: `part000000${i}bb` },
            }),
          ),
        )),
      );
      const stored = await storedAccounts(db);
      expect(stored.map((l) => l.kind)).toEqual(['merchant', 'partner']);
      // The merchant and the partner of one instance's variables.
      const [merchant, partner] = stored;
      expect(merchant!.id.slice(-3, -2)).toBe(partner!.id.slice(-3, -2));
      expect(merchant!.partner_id).toBe(partner!.id);
    } finally {
      await Promise.all(started.map((i) => killed(i)));
      await db.drop();
    }
  }, 120_000);
});

// In one process, on PostgreSQL: its stores' transactions truly overlap (each store a pool of its own).
// Several SQLite stores of one file in one process wait for each other's lock inside one event loop,
// which none of them can then release: on SQLite the instances above race as processes.
describe.each(STORES.filter((s) => s.name === 'PostgreSQL'))('seedAccounts on $name', ({ make }) => {
  it('seeds a new database once when several stores seed it at the same moment, each with other accounts', async () => {
    const db = await make();
    const stores: Store[] = [];
    try {
      for (let i = 0; i < 4; i++) stores.push(await openStore(db.url, {}));
      const clock = new Clock();
      const seeded = await Promise.all(
        stores.map((store, i) =>
          seedAccounts(
            store,
            clock,
            { merchantUUID: `seed000000${i}aa`, partnerUUID: `part000000${i}bb`, apiKey: 'k', passphrase: 'p' },
            DEFAULT_SURCHARGE_BP,
          ),
        ),
      );
      expect(seeded.filter(Boolean)).toHaveLength(1);
      const i = seeded.indexOf(true);
      expect(await storedAccounts(db)).toEqual([
        { kind: 'merchant', id: `seed000000${i}aa`, partner_id: `part000000${i}bb` },
        { kind: 'partner', id: `part000000${i}bb`, partner_id: null },
      ]);
      // And never again, by any of them.
      expect(
        await seedAccounts(
          stores[0]!,
          clock,
          { merchantUUID: 'x', partnerUUID: 'y', apiKey: 'k', passphrase: 'p' },
          {},
        ),
      ).toBe(false);
    } finally {
      for (const store of stores) await store.close();
      await db.drop();
    }
  }, 60_000);
});
