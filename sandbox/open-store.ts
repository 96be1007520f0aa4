// Opening the sandbox's store, as every program on it does (the sandbox, `sandbox accounts`): the
// backend chosen by the URL, here, where neither store imports it (store.ts holds what both share,
// and each store imports store.ts; each backend is loaded only when chosen, so a sandbox on SQLite
// never loads pg); the vault key; and the checks a program makes before it uses a store, each
// failure one line that says what to do (a damaged file, a key that does not open the cards). A
// program that works on the database its instances serve (`sandbox accounts`) opens it as it is
// instead (openMadeStore): checked first without a write, then neither migrated nor given a key.
import { chmodSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { pathToFileURL } from 'node:url';
import { UsageError } from '../cli-kit/index.ts';
import { DATABASE_MADE } from './accounts.ts';
import {
  isPostgresUrl,
  MIGRATIONS,
  type OpenOptions,
  refuseNewerSchema,
  refuseOlderSchema,
  type Store,
} from './store.ts';
import { VaultCrypto } from './vault-crypto.ts';

/**
 * PostgreSQL for a postgres:// or postgresql:// URL (PGW_DB), else the SQLite file (or :memory:) it
 * names; env gives each its durability setting (PGW_PG_SYNCHRONOUS_COMMIT, PGW_SQLITE_SYNCHRONOUS).
 * Migrated to this code's schema unless options say otherwise (OpenOptions).
 */
export async function openStore(
  url: string,
  env: NodeJS.ProcessEnv = process.env,
  options: OpenOptions = {},
): Promise<Store> {
  if (isPostgresUrl(url)) return (await import('./store-postgres.ts')).PostgresStore.open(url, env, options);
  return new (await import('./store-sqlite.ts')).SqliteStore(url, env, options);
}

/** What a database says of itself, read without a write: its schema version, whether a sandbox seeded it, its damage. */
interface Found {
  version: number;
  made: boolean;
  /** SQLite's quick_check when it is not 'ok'. */
  damage?: string;
}

/**
 * The SQLite file read-only, as it is: immutable (no lock, no -shm or -wal file made beside it) when
 * no write-ahead log is there, for then the file holds every commit; else read-only through the log
 * its instances keep (the -shm file beside it is theirs).
 */
function foundInSqlite(file: string): Found {
  if (!existsSync(file)) return { version: 0, made: false };
  const url = pathToFileURL(path.resolve(file));
  if (!existsSync(`${file}-wal`)) url.searchParams.set('immutable', '1');
  const db = new DatabaseSync(url, { readOnly: true });
  try {
    const first = (sql: string) => Object.values(db.prepare(sql).get() ?? {})[0];
    const version = Number(first('PRAGMA user_version'));
    const check = String(first('PRAGMA quick_check(1)'));
    return {
      version,
      made: version === MIGRATIONS.length && Boolean(first(DATABASE_MADE)),
      ...(check !== 'ok' && { damage: check.replace(/^\*\*\* in database \w+ \*\*\*\s*/, '').split('\n')[0] }),
    };
  } finally {
    db.close();
  }
}

/** The PostgreSQL database's schema table looked up before it is read: nothing is made. */
async function foundInPostgres(url: string): Promise<Found> {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  client.on('error', () => {});
  await client.connect();
  try {
    const first = async (sql: string) => Object.values((await client.query(sql)).rows[0] ?? {})[0];
    if (!(await first("SELECT to_regclass('pgw_schema') IS NOT NULL"))) return { version: 0, made: false };
    const version = Number((await first('SELECT version FROM pgw_schema')) ?? 0);
    return { version, made: version === MIGRATIONS.length && Boolean(await first(DATABASE_MADE)) };
  } finally {
    await client.end();
  }
}

/**
 * The store of a database a sandbox made and seeded, at this code's schema version, opened as it is
 * (`sandbox accounts`, which works on the database while instances serve it): nothing migrated (an
 * older sandbox's instances may run on it), no vault key read or made (accounts hold no card), no
 * file made and no permission changed. It is read first without a write, and anything else refused
 * in one line (`noDatabase` says there is none) before the store opens. A newer sandbox that
 * migrates it between that read and the opening is refused by the opening (OpenOptions). It starts
 * no checkpointing thread: its few statements stay in the log (every connection reads it) until SQLite's
 * own checkpoint or the instances' thread moves them into the file.
 */
export async function openMadeStore(
  dbPath: string,
  env: NodeJS.ProcessEnv,
  noDatabase: (shown: string) => UsageError,
): Promise<Store> {
  const place = storePlace(dbPath);
  let found: Found;
  try {
    found = place.postgres ? await foundInPostgres(dbPath) : foundInSqlite(dbPath);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    if (!place.postgres && /not a database/.test(message))
      throw new UsageError(
        `${place.dbPath} is no SQLite database (${message}): name the sandbox's with --db or PGW_DB`,
      );
    throw new UsageError(
      `cannot read the database ${place.shown}: ${message}.${place.postgres ? ' Check that the PostgreSQL server runs and' : ' Check'} that it is the sandbox's (--db, PGW_DB)`,
    );
  }
  if (found.version === 0 || (found.version === MIGRATIONS.length && !found.made)) throw noDatabase(place.shown);
  try {
    refuseNewerSchema(found.version);
    refuseOlderSchema(found.version);
  } catch (error) {
    throw openFailure(place, error);
  }
  if (found.damage)
    throw new UsageError(
      `the database ${place.dbPath} is damaged (${found.damage}): restore it from a copy, or name the sandbox's with --db or PGW_DB`,
    );
  try {
    return await openStore(dbPath, env, { migrate: false, checkpointThread: false });
  } catch (error) {
    throw openFailure(place, error);
  }
}

/**
 * A database that holds cards and no key this start has: refused by every program that opens it
 * with its vault (npm start, and createSandbox for benches and tests), in one line that says what
 * to give. Passed on as it is by openFailure.
 */
export class MissingKeyError extends UsageError {}

/** The key files this process wrote (vaultKey): the ones a start refused as damaged takes back (undoDamagedStart). */
const keyFilesMade = new Set<string>();

/**
 * The vault key: PGW_SANDBOX_DATA_KEY (base64); else, for PostgreSQL, one key kept in the database
 * (made by the first instance, read back by every other: ON CONFLICT DO NOTHING); else a key file
 * beside the SQLite database, made once. A database that holds cards and no key (a copy without its
 * key file; cards stored under PGW_SANDBOX_DATA_KEY, opened without it) is refused (MissingKeyError):
 * a new key cannot open its cards, cards added under it could not be read by the next start or
 * another instance, and writing it (a file, a row) would hide the missing one next time.
 */
async function vaultKey(dbPath: string, env: NodeJS.ProcessEnv, store: Store): Promise<Buffer | undefined> {
  if (env.PGW_SANDBOX_DATA_KEY) return Buffer.from(env.PGW_SANDBOX_DATA_KEY, 'base64');
  const holdsCards = async () => (await store.get('SELECT 1 AS one FROM cards LIMIT 1')) !== undefined;
  if (store.kind === 'postgres') {
    const kept = async () =>
      (await store.get<{ value: string }>("SELECT value FROM sandbox_keys WHERE name = 'vault'"))?.value;
    let value = await kept();
    if (value === undefined) {
      if (await holdsCards())
        throw new MissingKeyError(
          `the cards stored in ${withoutPassword(dbPath)} were stored under a key this start does not have: the database keeps no key of its own (none is kept when PGW_SANDBOX_DATA_KEY is set); set PGW_SANDBOX_DATA_KEY to the key they were stored with, or start on a new database`,
        );
      await store.run(
        "INSERT OR IGNORE INTO sandbox_keys (name, value) VALUES ('vault', ?)",
        randomBytes(32).toString('base64'),
      );
      value = (await kept())!;
    }
    return Buffer.from(value, 'base64');
  }
  if (dbPath === ':memory:') return undefined;
  const file = `${dbPath}.key`;
  if (!existsSync(file)) {
    if (await holdsCards())
      throw new MissingKeyError(
        `the cards stored in ${dbPath} were stored under a key this start does not have (there is no ${file}, and no PGW_SANDBOX_DATA_KEY): put the database's own key file beside it (${file}) or set PGW_SANDBOX_DATA_KEY to its key; or start on a new database with --db`,
      );
    try {
      // wx: another instance starting on the same new file may have written it meanwhile; then its key is read.
      writeFileSync(file, randomBytes(32).toString('base64'), { mode: 0o600, flag: 'wx' });
      keyFilesMade.add(path.resolve(file));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
  chmodSync(file, 0o600); // owner-only even when an older sandbox or a copy left it readable
  return Buffer.from(readFileSync(file, 'utf8').trim(), 'base64');
}

/** The store (migrated to this schema version) and its vault, or the store closed again and the error thrown. */
export async function openVaultedStore(
  dbPath: string,
  env: NodeJS.ProcessEnv,
): Promise<{ store: Store; vault: VaultCrypto }> {
  const store = await openStore(dbPath, env);
  try {
    return { store, vault: new VaultCrypto(await vaultKey(dbPath, env, store)) };
  } catch (error) {
    await store.close();
    throw error;
  }
}

/** The data key from the environment: 32 bytes in base64, or a one-line refusal. */
export function checkDataKey(value: string | undefined): void {
  if (value === undefined) return;
  const bytes = /^[A-Za-z0-9+/]+={0,2}$/.test(value.trim()) ? Buffer.from(value, 'base64').length : -1;
  if (bytes !== 32) {
    throw new UsageError(
      `PGW_SANDBOX_DATA_KEY must be 32 bytes in base64 (make one with: openssl rand -base64 32); this one is ${bytes < 0 ? 'not base64' : `${bytes} bytes`}`,
    );
  }
}

/** A PostgreSQL URL as it may be shown: without its password. */
function withoutPassword(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'the PostgreSQL database of PGW_DB';
  }
}

/** Where a program's store is, as its messages name it; taken before the store opens (a key file it may make). */
export interface StorePlace {
  dbPath: string;
  postgres: boolean;
  /** The path, or the URL without its password. */
  shown: string;
  keyFile: string;
}

export function storePlace(dbPath: string): StorePlace {
  const postgres = isPostgresUrl(dbPath);
  const keyFile = `${dbPath}.key`;
  return {
    dbPath,
    postgres,
    shown: postgres ? withoutPassword(dbPath) : dbPath,
    keyFile,
  };
}

/**
 * What a start refused because its database is damaged inside undoes: the key file it wrote itself
 * (its database held no card, so a new key was written for it), never one another instance wrote.
 * Only then: every start on that database is refused as damaged too, so no instance can be using
 * the key. A start refused for anything else once its store opened (its port taken meanwhile, a
 * failure after the opening) removes nothing: another instance starting on the same new database
 * at the same moment may have read the key file and stored cards under it. The database file is
 * always kept, for the same reason.
 */
function undoDamagedStart(place: StorePlace): void {
  const file = path.resolve(place.keyFile);
  if (place.postgres || !keyFilesMade.delete(file)) return;
  rmSync(file, { force: true });
}

/** Why the store did not open, as one line that says what to do. */
export function openFailure(place: StorePlace, error: unknown): UsageError {
  if (error instanceof MissingKeyError) return error;
  const message = error instanceof Error ? error.message : String(error);
  if (/vault key/.test(message))
    return new UsageError(
      `the key file ${place.keyFile} does not hold a 32-byte base64 key: restore the file that came with ${place.dbPath}, or set PGW_SANDBOX_DATA_KEY`,
    );
  if (/(newer|older) than this sandbox's/.test(message))
    return new UsageError(message.replace('the database', `the database ${place.shown}`));
  if (place.postgres)
    return new UsageError(
      `cannot open the database ${place.shown}: ${message}. Check that the PostgreSQL server runs and the URL's user may create tables there`,
    );
  return new UsageError(
    `cannot open the database ${place.dbPath}: ${message}. If it is not a sandbox database or is damaged, move it away (a new one is made) or choose another with --db`,
  );
}

/**
 * The checks an opened store must pass before it is used, each failure a UsageError after `close`:
 * an SQLite file damaged inside (it can open and migrate and still fail on the first request that
 * reads the bad page), and cards that the vault's key does not open (a database copied with another's
 * key; one without any key was refused by vaultKey, which made none for it).
 */
export async function checkOpenedStore(
  place: StorePlace,
  env: NodeJS.ProcessEnv,
  store: Store,
  vault: VaultCrypto,
  close: () => Promise<void>,
): Promise<void> {
  let check = 'ok';
  try {
    if (!place.postgres) check = String(Object.values((await store.get('PRAGMA quick_check(1)')) ?? {})[0]);
  } catch (error) {
    check = error instanceof Error ? error.message : String(error);
  }
  if (check !== 'ok') {
    await close();
    undoDamagedStart(place);
    throw new UsageError(
      `the database ${place.dbPath} is damaged (${check.replace(/^\*\*\* in database \w+ \*\*\*\s*/, '').split('\n')[0]}): move it away (a new one is made) or choose another with --db`,
    );
  }

  const card = await store.get<{ pan_encrypted: string }>('SELECT pan_encrypted FROM cards LIMIT 1');
  if (!card) return;
  try {
    vault.decrypt(card.pan_encrypted);
  } catch {
    await close();
    if (place.postgres)
      throw new UsageError(
        `the cards stored in ${place.shown} were encrypted with another key than ${env.PGW_SANDBOX_DATA_KEY ? 'PGW_SANDBOX_DATA_KEY' : 'the key kept in the database'}: set PGW_SANDBOX_DATA_KEY to the key they were stored with, or start on a new database`,
      );
    // A key this start has (a database without one was refused by vaultKey): the words name it.
    const source = env.PGW_SANDBOX_DATA_KEY ? 'PGW_SANDBOX_DATA_KEY' : `the key file ${place.keyFile}`;
    throw new UsageError(
      `the cards stored in ${place.dbPath} were encrypted with another key than ${source}: put the database's own key file beside it (${place.keyFile}) or set PGW_SANDBOX_DATA_KEY to it; or start on a new database with --db`,
    );
  }
}
