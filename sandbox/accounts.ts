// Merchant and partner accounts, and access tokens, from the store: what the server stubs check
// credentials and hashes against.
import { randomBytes } from 'node:crypto';
import { holdsNul } from '../runtime/nul-text.ts';
import type { Account, Accounts } from '../server-stubs/index.ts';
import type { Clock } from './clock.ts';
import { clockOf, offsetReadWith, onAccountTime } from './clock-store.ts';
import { plannedOnce, type Row, type Store } from './store.ts';

const toAccount = (row: Row): Account => ({
  kind: row.kind,
  id: row.id,
  apiKey: row.api_key,
  passphrase: row.passphrase,
});

/**
 * Whether the control API had forced outcomes waiting for the account when its request was
 * authenticated, read in the account's statement (find): undefined when that statement did not read it
 * (an account found by access token), for the control API's wrap (control.ts) to look for itself.
 */
const forcedOutcomesReadWithAccount = new WeakMap<object, boolean>();
export const forcedOutcomesPending = (account: object): boolean | undefined =>
  forcedOutcomesReadWithAccount.get(account);

// Each table by its primary key (forced_outcomes by its key's first column): planned once (store.ts).
// One row whether or not the account exists: the account, or a decoy of the same shape (marked), so
// that refusing an unknown merchant costs what refusing a known one costs (docs/DEPLOY.md,
// bench/refusal-timing.ts): the same index probes, a row of the same columns made into the same
// objects. Without it an unknown merchant was refused a few microseconds sooner, which tells a
// caller which merchant IDs exist.
const ACCOUNT_WITH_CLOCK = plannedOnce(
  `SELECT a.kind, a.id, a.api_key, a.passphrase, c.offset_ms AS clock_offset_ms,
     EXISTS (SELECT 1 FROM forced_outcomes f WHERE f.merchant_id = a.id) AS forced_pending, 0 AS decoy
   FROM accounts a LEFT JOIN sandbox_clock c ON c.name = ? WHERE a.kind = ? AND a.id = ?
   UNION ALL
   SELECT ?, ?, ?, ?, NULL,
     EXISTS (SELECT 1 FROM forced_outcomes f WHERE f.merchant_id = ?) AS forced_pending, 1 AS decoy
   WHERE NOT EXISTS (SELECT 1 FROM accounts a WHERE a.kind = ? AND a.id = ?)`,
);

/** The decoy's secrets: random, the lengths of the sandbox's own (what a found row carries). */
const DECOY_KEY = randomBytes(6).toString('base64url');
const DECOY_PASSPHRASE = randomBytes(12).toString('base64url');

export function storeAccounts(store: Store, clock: Clock): Accounts {
  return {
    // The account's clock offset comes in the same statement (the request's handler runs on it), and
    // whether the control API forced outcomes for it (a payment then looks them up in its transaction).
    // An id or token that holds a NUL character is no account's (none holds one): the gateway refuses
    // such a request before it looks, and the request log's owner look-up finds nothing, on every store.
    find: async (kind, id) => {
      if (holdsNul(id)) return undefined;
      const row = (await store.get(
        ACCOUNT_WITH_CLOCK,
        clockOf({ kind, id }),
        kind,
        id,
        kind,
        id,
        DECOY_KEY,
        DECOY_PASSPHRASE,
        id,
        kind,
        id,
      ))!;
      // The same work for the decoy as for an account: the account made, and its marks kept.
      const account = toAccount(row);
      offsetReadWith(account, Number(row.clock_offset_ms ?? 0));
      forcedOutcomesReadWithAccount.set(account, Boolean(row.forced_pending));
      return Number(row.decoy) === 0 ? account : undefined;
    },
    findByAccessToken: async (token) => {
      if (holdsNul(token)) return undefined;
      const row = await store.get(
        'SELECT a.*, t.expires_at FROM access_tokens t JOIN accounts a ON a.kind = ? AND a.id = t.merchant_id WHERE t.token = ?',
        'merchant',
        token,
      );
      if (!row) return undefined;
      // Expired on its merchant's time: that merchant's clock, not another account's, ends it.
      const now = await onAccountTime(store, clock, { kind: 'merchant', id: row.id }, () => clock.timestamp());
      return row.expires_at > now ? toAccount(row) : undefined;
    },
  };
}

export interface AccountSeed {
  merchantUUID: string;
  partnerUUID: string;
  apiKey: string;
  passphrase: string;
  partnerNotifyURL?: string;
}

/**
 * The default sandbox merchant and partner, and the merchant's surcharge rates, into a new database
 * only: a database keeps the accounts it was made with, whatever the PGW_SANDBOX_* variables of a
 * later start say (the operator adds accounts with `sandbox accounts add`). Instances starting
 * together on one new database seed it once: each inserts the sandbox_seeded row first, in the
 * transaction that seeds, and only the one whose insert made the row seeds; an insert of a row another
 * transaction is inserting waits for it on PostgreSQL and does nothing once it commits, and SQLite
 * runs the transactions one at a time. (A database made before that table holds accounts: its
 * migration marked it seeded.) Answers whether this call seeded.
 */
export function seedAccounts(
  store: Store,
  clock: Clock,
  seed: AccountSeed,
  rates: Record<string, number>,
): Promise<boolean> {
  return store.transaction(async () => {
    const now = clock.timestamp();
    const claimed = await store.run("INSERT OR IGNORE INTO sandbox_seeded (name, at) VALUES ('accounts', ?)", now);
    if (claimed.changes === 0 || (await store.get('SELECT 1 AS held FROM accounts LIMIT 1'))) return false;
    await store.run(
      'INSERT INTO accounts (kind, id, api_key, passphrase, partner_id, notify_url, created_at) VALUES (?, ?, ?, ?, NULL, ?, ?)',
      'partner',
      seed.partnerUUID,
      seed.apiKey,
      seed.passphrase,
      seed.partnerNotifyURL ?? null,
      now,
    );
    await store.run(
      'INSERT INTO accounts (kind, id, api_key, passphrase, partner_id, created_at) VALUES (?, ?, ?, ?, ?, ?)',
      'merchant',
      seed.merchantUUID,
      seed.apiKey,
      seed.passphrase,
      seed.partnerUUID,
      now,
    );
    await addSurchargeRates(store, seed.merchantUUID, rates);
    return true;
  });
}

/**
 * Whether a sandbox made and seeded this database (it holds accounts, or says it was seeded): one row,
 * `made` true (PostgreSQL) or 1 (SQLite), on a database at this code's schema version.
 */
export const DATABASE_MADE =
  "SELECT (EXISTS (SELECT 1 FROM sandbox_seeded WHERE name = 'accounts') OR EXISTS (SELECT 1 FROM accounts)) AS made";

/** A new merchant's surcharge rates, per card scheme in basis points (data.ts's DEFAULT_SURCHARGE_BP). */
export async function addSurchargeRates(store: Store, merchantUUID: string, rates: Record<string, number>) {
  for (const [cardType, bp] of Object.entries(rates))
    await store.run(
      'INSERT INTO surcharge_rates (merchant_id, card_type, basis_points) VALUES (?, ?, ?)',
      merchantUUID,
      cardType,
      bp,
    );
}
