// The PostgreSQL store's pool settings (PGW_DB_POOL, PGW_DB_POOL_WAIT_MS) and their defaults, written
// once: the store (store-postgres.ts) reads them, and `sandbox --help` (main.ts) prints the defaults
// from here without loading pg.
import { SettingRefused } from './setting-refused.ts';
import { wholeMs } from './waits.ts';

/** How long a request may wait for a connection while the pool lends out every one, by default. */
export const POOL_WAIT_MS = 30_000;

/**
 * PGW_DB_POOL_WAIT_MS: how long a request waits for a connection while the pool lends out every one
 * (whole milliseconds above 0), else POOL_WAIT_MS. A request that waited that long is answered 503
 * with Retry-After (store-health.ts).
 */
export function poolWaitFromEnv(env: NodeJS.ProcessEnv): number {
  return wholeMs('PGW_DB_POOL_WAIT_MS', env.PGW_DB_POOL_WAIT_MS, 0, 'a request waits some time') ?? POOL_WAIT_MS;
}

/** The connections of each pool, by default. */
export const POOL_SIZE = 10;

/** PGW_DB_POOL: the connections of each pool, a whole number from 1 (pg-pool read 0 or `ten` as 10, a negative as full), else POOL_SIZE. */
export function poolSizeFromEnv(env: NodeJS.ProcessEnv): number {
  const raw = env.PGW_DB_POOL;
  if (raw === undefined || raw === '') return POOL_SIZE;
  const n = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || !Number.isSafeInteger(n) || n < 1 || n > 1000)
    throw new SettingRefused('PGW_DB_POOL', `must be a whole number of connections from 1 to 1000: got '${raw}'`);
  return n;
}
