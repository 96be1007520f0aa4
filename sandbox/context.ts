// What every sandbox handler works with, and the small helpers they share (its refusals are in refusals.ts).
import type { Clock } from './clock.ts';
import type { Notifier } from './notifier.ts';
import { plannedOnce, type Row, type Store } from './store.ts';
import type { UrlPolicy } from './url-policy.ts';
import type { VaultCrypto } from './vault-crypto.ts';
import type { Waits } from './waits.ts';

export interface Sandbox {
  store: Store;
  clock: Clock;
  vault: VaultCrypto;
  notifier: Notifier;
  /** The bundled contract, for what it says that the sandbox needs (CSV columns by version). */
  spec: Record<string, any>;
  /** Where notifications may go (url-policy.ts): held wherever an address enters. */
  policy: UrlPolicy;
  /** The lease, time-outs, grace and NPP time the environment set (waits.ts). */
  waits: Waits;
}

/** custom1..3 as stored: the string sent, or null; echoed as the string or [] (seed §2). */
export const customOf = (body: Record<string, unknown>) =>
  JSON.stringify([body.custom1 ?? null, body.custom2 ?? null, body.custom3 ?? null]);
export function customEcho(stored: string): { custom1: string | []; custom2: string | []; custom3: string | [] } {
  const [a, b, c] = JSON.parse(stored) as (string | null)[];
  return { custom1: a ?? [], custom2: b ?? [], custom3: c ?? [] };
}

export const ok = 'Operation successful';

/**
 * The row with this id or reference, for this merchant (by reference: the latest written; `rowid` is
 * SQLite's own and the PostgreSQL store's BIGSERIAL column of that name, see store-postgres.ts).
 */
export function findByIdOrReference(
  store: Store,
  table: string,
  merchantId: string,
  id: string | undefined,
  ref: string | undefined,
): Promise<Row | undefined> {
  // By its primary key alone (planned once, store.ts: with the merchant in the WHERE clause an index
  // of the merchant's rows would serve it too, and a plan made while the table was small could
  // choose that one); another merchant's row is none of this one's.
  if (id)
    return store
      .get(plannedOnce(`SELECT * FROM ${table} WHERE id = ?`), id)
      .then((row) => (row?.merchant_id === merchantId ? row : undefined));
  return store.get(
    `SELECT * FROM ${table} WHERE merchant_id = ? AND reference = ? ORDER BY created_at DESC, rowid DESC LIMIT 1`,
    merchantId,
    ref,
  );
}

/** The store's tables that hold a column of this name (a merchant's data, for the control API's reset and the tests' counts). */
export async function tablesWithColumn(store: Store, column?: string): Promise<string[]> {
  const rows =
    store.kind === 'postgres'
      ? await store.all(
          "SELECT DISTINCT table_name AS name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name <> 'pgw_schema' AND (CAST(? AS TEXT) IS NULL OR column_name = ?) ORDER BY 1",
          column ?? null,
          column ?? null,
        )
      : await store.all(
          "SELECT DISTINCT m.name AS name FROM sqlite_master m JOIN pragma_table_info(m.name) p WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%' AND (? IS NULL OR p.name = ?) ORDER BY 1",
          column ?? null,
          column ?? null,
        );
  return rows.map((r) => r.name as string);
}
