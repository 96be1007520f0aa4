// A payout transaction's attempts as the sandbox clock moves: each planned attempt starts when the one
// before it ends and stays pending until its rail has had its time (NPP within seconds, DE with the
// next day's direct-entry run), then takes the outcome its test account gives it. The store keeps the
// plan (start and end in sandbox milliseconds); what an answer shows is worked out from it at the
// time asked, so every instance on the store answers the same at the same sandbox time.
import type { components } from '../generated/types.ts';
import type { Clock } from './clock.ts';
import { DEFAULT_WAITS } from './waits.ts';

type Status = components['schemas']['PayoutAttemptStatus'];

export type Rail = 'NPP' | 'DE';

/**
 * How long an attempt on each rail stays pending, in sandbox time. Inferred: NPP settles in seconds
 * (its time is one of the sandbox's waits, PGW_SANDBOX_NPP_MS), DE the next day.
 */
export const RAIL_MS: Record<Rail, number> = { NPP: DEFAULT_WAITS.nppMs, DE: 86_400_000 };

/** An attempt as the store keeps it: planned (startMs, endMs, outcome) or already shown final (status, times). */
export interface StoredAttempt {
  transactionId: string;
  type: Rail;
  outcome?: Status;
  startMs?: number;
  endMs?: number;
  status?: Status;
  createdAt?: string;
  lastUpdated?: string;
}

export interface PayoutAttempt {
  transactionId: string;
  status: Status;
  type: Rail;
  createdAt: string;
  lastUpdated: string;
}

/** The plan of a transaction's attempts, the first starting now; each rail pending for its time (RAIL_MS, NPP's PGW_SANDBOX_NPP_MS). */
export function plan(
  steps: readonly { type: Rail; status: Status }[],
  ids: () => string,
  nowMs: number,
  railMs: Record<Rail, number> = RAIL_MS,
): StoredAttempt[] {
  let start = nowMs;
  return steps.map((s) => {
    const attempt = {
      transactionId: ids(),
      type: s.type,
      outcome: s.status,
      startMs: start,
      endMs: start + railMs[s.type],
    };
    start = attempt.endMs;
    return attempt;
  });
}

/** The attempts begun by the clock's now, each pending until its end, in the payout zone's time. */
export function attemptsAt(stored: StoredAttempt[], clock: Clock): PayoutAttempt[] {
  const now = clock.now().getTime();
  const at = (ms: number) => clock.payoutTimestamp(ms - now);
  const shown: PayoutAttempt[] = [];
  for (const a of stored) {
    if (a.startMs === undefined) {
      shown.push({
        transactionId: a.transactionId,
        status: a.status!,
        type: a.type,
        createdAt: a.createdAt!,
        lastUpdated: a.lastUpdated!,
      });
      continue;
    }
    if (a.startMs > now) break;
    const ended = now >= a.endMs!;
    shown.push({
      transactionId: a.transactionId,
      status: ended ? a.outcome! : 'pending',
      type: a.type,
      createdAt: at(a.startMs),
      lastUpdated: at(ended ? a.endMs! : a.startMs),
    });
  }
  return shown;
}

/** When the last planned attempt ends (sandbox milliseconds), or undefined when nothing is planned any more. */
export const endsAt = (stored: StoredAttempt[]): number | undefined => stored.at(-1)?.endMs;

/** The plan moved so that every attempt has ended by now, one after the other (the control API's "complete"). */
export function finishedBy(stored: StoredAttempt[], nowMs: number): StoredAttempt[] {
  const first = stored.findIndex((a) => a.startMs !== undefined && a.endMs! > nowMs);
  if (first < 0) return stored;
  const left = stored.length - first;
  let previousEnd = first > 0 ? (stored[first - 1]!.endMs ?? Number.NEGATIVE_INFINITY) : Number.NEGATIVE_INFINITY;
  return stored.map((a, i) => {
    if (i < first) return a;
    // The unfinished attempts get a second each, the last ending now, none before the one it follows.
    const j = i - first;
    const startMs = Math.max(previousEnd, Math.min(a.startMs!, nowMs - (left - j) * 1000));
    const endMs = Math.max(startMs, nowMs - (left - j - 1) * 1000);
    previousEnd = endMs;
    return { ...a, startMs, endMs };
  });
}
