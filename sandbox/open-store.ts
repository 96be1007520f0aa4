// The store's backend, chosen by the URL: here, where neither store imports it (store.ts holds what
// both share, and each store imports store.ts). Each backend is loaded only when chosen, so a sandbox
// on SQLite never loads pg.
import { isPostgresUrl, type Store } from './store.ts';

/**
 * PostgreSQL for a postgres:// or postgresql:// URL (PGW_DB), else the SQLite file (or :memory:) it
 * names; env gives each its durability setting (PGW_PG_SYNCHRONOUS_COMMIT, PGW_SQLITE_SYNCHRONOUS).
 */
export async function openStore(url: string, env: NodeJS.ProcessEnv = process.env): Promise<Store> {
  if (isPostgresUrl(url)) return (await import('./store-postgres.ts')).PostgresStore.open(url, env);
  return new (await import('./store-sqlite.ts')).SqliteStore(url, env);
}
