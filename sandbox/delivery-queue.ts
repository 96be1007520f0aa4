// The notifications as a job queue shared by every instance on one store (the pattern of pg-boss and
// graphile-worker): a due notification is claimed in a short transaction with FOR UPDATE SKIP LOCKED
// (instances claiming at once take different rows, none waits) and leased to the claimer until
// `claimed_until`. The claimer posts it outside any transaction and then records the attempt, only
// while it still holds the claim. An instance that dies mid-delivery leaves its lease to run out;
// another instance then claims the notification again. Delivery is therefore at-least-once: a
// notification posted just before its instance died is posted again by the next claimer. A live
// claimer renews its lease right before it posts, and does not post one it no longer holds: on a busy
// machine the time from the claim to the post (its preparation, a slow store) can outlast the lease,
// and another instance may have claimed and posted it meanwhile.
import type { Row, Store } from './store.ts';

export interface Claim {
  /** Which instance claims (any string unique to it). */
  by: string;
  /** Now, as the store's timestamps are written (ISO-8601, compared as text). */
  now: string;
  /** The lease's end: after it, another instance may claim the notification. */
  until: string;
  maxAttempts: number;
  limit: number;
}

// The turn is ranked once, in a materialised CTE (PostgreSQL refuses FOR UPDATE beside a window
// function), and joined to the rows it names by their key: CROSS JOIN keeps SQLite to that order
// (left to itself, SQLite 3.53 read every due row and scanned the ranking for each, a claim of a
// 10,000-row backlog taking seconds). The rows are locked in the outer query, whose LIMIT counts
// only the rows it could lock, and tested again there: a row another instance claimed and
// committed since the CTE's snapshot is read again as it now stands when it is locked
// (PostgreSQL), and must then fail.
// Its parameters: maxAttempts, now, now (the ranking), the same again (the outer test), limit.
export const CLAIM_DUE_SQL = `WITH ranked AS MATERIALIZED (
     SELECT id, ROW_NUMBER() OVER (PARTITION BY signer_kind, signer_id ORDER BY next_attempt_at, id) AS turn
     FROM notifications
     WHERE delivered = 0 AND attempts < ? AND next_attempt_at <= ? AND (claimed_until IS NULL OR claimed_until <= ?)
   )
   SELECT n.* FROM ranked CROSS JOIN notifications n
   WHERE n.id = ranked.id AND n.delivered = 0 AND n.attempts < ? AND n.next_attempt_at <= ? AND (n.claimed_until IS NULL OR n.claimed_until <= ?)
   ORDER BY ranked.turn, n.next_attempt_at, n.id LIMIT ? FOR UPDATE OF n SKIP LOCKED`;

/**
 * Up to `limit` due notifications nobody holds, now leased to `claim.by`: taken in turns across the
 * accounts that sign them (each account's earliest due first, then each one's second, and so on), so
 * that one account's backlog (a thousand retries to a receiver that hangs, brought due at once by a
 * clock advance) cannot hold another account's notification back for more than the claim under way.
 */
export function claimDue(store: Store, claim: Claim): Promise<Row[]> {
  return store.transaction(async () => {
    const rows = await store.all(
      CLAIM_DUE_SQL,
      ...[claim.maxAttempts, claim.now, claim.now],
      ...[claim.maxAttempts, claim.now, claim.now],
      claim.limit,
    );
    for (const row of rows)
      await store.run(
        'UPDATE notifications SET claimed_by = ?, claimed_until = ? WHERE id = ?',
        claim.by,
        claim.until,
        row.id,
      );
    return rows;
  });
}

/**
 * Records one delivery attempt of a claimed notification and releases it: delivered, or due again
 * at `retryAt`. False when the claim was lost (its lease ran out and another instance took it).
 */
export async function settle(
  store: Store,
  id: number,
  by: string,
  attempt: { ok: boolean; status: number | null; at: string; retryAt: string },
): Promise<boolean> {
  const { changes } = await store.run(
    `UPDATE notifications SET attempts = attempts + 1, delivered = ?, last_attempt_at = ?, last_status = ?, next_attempt_at = ?, claimed_by = NULL, claimed_until = NULL
     WHERE id = ? AND claimed_by = ? AND delivered = 0`,
    attempt.ok ? 1 : 0,
    attempt.at,
    attempt.status,
    attempt.retryAt,
    id,
    by,
  );
  return changes === 1;
}

/**
 * Renews a claim for another lease (to `until`) right before its post. False when the claim was lost
 * (another instance took it once its lease ran out, or it was delivered): then it must not be posted.
 */
export async function renew(store: Store, id: number, by: string, until: string): Promise<boolean> {
  const { changes } = await store.run(
    'UPDATE notifications SET claimed_until = ? WHERE id = ? AND claimed_by = ? AND delivered = 0',
    until,
    id,
    by,
  );
  return changes === 1;
}
