// What every sandbox handler works with, and the small helpers they share.
import { numberedRefusals, type NumberedRefusal } from '../generated/spec-constants.ts';
import type { Clock } from './clock.ts';
import type { Notifier } from './notifier.ts';
import type { Row, SqliteDatabase as Store } from './store.ts';
import type { VaultCrypto } from './vault-crypto.ts';

export interface Sandbox {
  store: Store;
  clock: Clock;
  vault: VaultCrypto;
  notifier: Notifier;
  /** The bundled contract, for what it says that the sandbox needs (CSV columns by version). */
  spec: Record<string, any>;
}

/** A refusal of the body APIs: responseCode as a string, as the gateway sends it in JSON. */
export const refusal = (code: -1 | -2 | -3 | -4, message: string) => ({ responseCode: String(code), responseMessage: message });
/** A refusal of the NPP and payout paths: responseCode as an integer. */
export const nppRefusal = (code: -1 | -2 | -3 | -4, message: string) => ({ responseCode: code, responseMessage: message });
export const invalid = (field: string, why: string) => refusal(-2, `Field '${field}' is invalid: ${why}`);
/** A refusal the gateway words with its error number (x-numbered-refusals on Refusal), responseCode -2. */
export function numbered(name: NumberedRefusal) {
  return refusal(-2, numberedRefusals[name]);
}
export const nppInvalid = (field: string, why: string) => nppRefusal(-2, `Field '${field}' is invalid: ${why}`);

/** custom1..3 as stored: the string sent, or null; echoed as the string or [] (seed §2). */
export const customOf = (body: Record<string, unknown>) => JSON.stringify([body.custom1 ?? null, body.custom2 ?? null, body.custom3 ?? null]);
export function customEcho(stored: string): { custom1: string | []; custom2: string | []; custom3: string | [] } {
  const [a, b, c] = JSON.parse(stored) as (string | null)[];
  return { custom1: a ?? [], custom2: b ?? [], custom3: c ?? [] };
}

export const ok = 'Operation successful';

/** The row with this id or reference, for this merchant. */
export function findByIdOrReference(store: Store, table: string, merchantId: string, id: string | undefined, ref: string | undefined): Row | undefined {
  if (id) return store.get(`SELECT * FROM ${table} WHERE merchant_id = ? AND id = ?`, merchantId, id);
  return store.get(`SELECT * FROM ${table} WHERE merchant_id = ? AND reference = ? ORDER BY created_at DESC, rowid DESC LIMIT 1`, merchantId, ref);
}
