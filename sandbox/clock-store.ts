// Each account's clock offset, kept in the store: instances on one database see the same time for an
// account after the control API moves it on any of them, and no other account's time moves. An
// advance is added in the store (offset + ms, in one statement, so advances made at once on two
// instances both count) and read back; every instance reads the account's again before its requests,
// and before a batch slice it runs for it (`sync`).
import { AsyncLocalStorage } from 'node:async_hooks';
import type { GatewayHandlers, GatewayResponse, HandlerContext } from '../server-stubs/index.ts';
import { CLOCK_RANGE_MS, type Clock } from './clock.ts';
import type { Store } from './store.ts';

/** The clock's name for an account (merchants and partners are separate kinds). */
export const clockOf = (account: { kind: string; id: string }) => `${account.kind}:${account.id}`;

/**
 * The clock offsets read in the same statement as the accounts they belong to (accounts.ts), by the
 * account object the gateway hands the handler: its request then needs no statement of its own for it.
 */
const offsetsReadWithAccount = new WeakMap<object, number>();
export const offsetReadWith = (account: object, offsetMs: number) => offsetsReadWithAccount.set(account, offsetMs);

/** Takes the store's offset of this account into the clock. */
export async function sync(store: Store, clock: Clock, account: string): Promise<void> {
  const row = await store.get<{ offset_ms: number }>('SELECT offset_ms FROM sandbox_clock WHERE name = ?', account);
  clock.share(account, Number(row?.offset_ms ?? 0));
}

/** A timestamp of the store (YYYY-MM-DD HH:MM:SS, UTC) moved by ms. */
export const shifted = (timestamp: string, ms: number): string =>
  new Date(Date.parse(`${timestamp.replace(' ', 'T')}Z`) + ms).toISOString().slice(0, 19).replace('T', ' ');

/** An account's notifications still to be attempted (signer kind, signer id, the most attempts): by its index (schema v16). */
export const PENDING_OF_ACCOUNT =
  'SELECT id, next_attempt_at FROM notifications WHERE signer_kind = ? AND signer_id = ? AND delivered = 0 AND attempts < ?';

/**
 * Moves the account's clock on by ms, for every instance on the store, unless that would take it past
 * the clock's range (CLOCK_RANGE_MS ahead of real time): then nothing moves, and the answer says how
 * far ahead it stands. The range is checked in the statement that adds, so two advances made at once on
 * two instances cannot together pass it. Its notifications waiting for a retry come due as its time
 * moves: the delivery queue schedules in the base time, so their next attempts move back by as much.
 * The base time of the advance is kept (advanced_to): an attempt of the account's that fell due by then
 * is dated at the time it fell due, its retry scheduled from there (notifier.ts), so that every attempt
 * falling due within the span is made, each at its own time, before the advance answers.
 */
export function advance(
  store: Store,
  clock: Clock,
  account: string,
  ms: number,
  maxAttempts: number,
): Promise<{ moved: boolean; offsetMs: number }> {
  const by = Math.round(ms);
  return store.transaction(async () => {
    const now = clock.baseTimestamp();
    await store.run('INSERT OR IGNORE INTO sandbox_clock (name, offset_ms) VALUES (?, 0)', account);
    const { changes } = await store.run(
      'UPDATE sandbox_clock SET offset_ms = offset_ms + ?, advanced_to = ? WHERE name = ? AND offset_ms + ? <= ?',
      by,
      now,
      account,
      by,
      CLOCK_RANGE_MS,
    );
    if (!changes) {
      await sync(store, clock, account);
      return { moved: false, offsetMs: clock.offsetOf(account) };
    }
    const [kind, ...id] = account.split(':');
    for (const n of await store.all(
      // Those given up (their attempts all made) stay undelivered for good: an advance has nothing to move.
      PENDING_OF_ACCOUNT,
      kind,
      id.join(':'),
      maxAttempts,
    )) {
      await store.run(
        'UPDATE notifications SET next_attempt_at = ? WHERE id = ?',
        shifted(String(n.next_attempt_at), -by),
        n.id,
      );
    }
    await sync(store, clock, account);
    return { moved: true, offsetMs: clock.offsetOf(account) };
  });
}

/**
 * An account's clock as the store holds it now (another instance may have moved it): its offset,
 * taken into the clock, and the base time of its latest advance (null: never advanced).
 */
export async function readClock(
  store: Store,
  clock: Clock,
  account: string,
): Promise<{ offsetMs: number; advancedTo: string | null }> {
  const row = await store.get<{ offset_ms: number; advanced_to: string | null }>(
    'SELECT offset_ms, advanced_to FROM sandbox_clock WHERE name = ?',
    account,
  );
  clock.share(account, Number(row?.offset_ms ?? 0));
  return { offsetMs: clock.offsetOf(account), advancedTo: row?.advanced_to ?? null };
}

/** A timestamp of the delivery queue (base time) as an account reads it (the one in scope by default), on its own time. */
export function onScopeTime(clock: Clock, baseTimestamp: string, account = clock.account): string {
  return shifted(baseTimestamp, account === undefined ? 0 : clock.offsetOf(account));
}

/** Runs work on the account's time, its offset read from the store first (another instance may have moved it). */
export async function onAccountTime<T>(
  store: Store,
  clock: Clock,
  account: { kind: string; id: string },
  work: () => T | Promise<T>,
): Promise<T> {
  const name = clockOf(account);
  await sync(store, clock, name);
  return clock.as(name, work);
}

/** Each answer's account, named by its handler as it runs (onCallersTime): the answer is dated on that account's time. */
const answering = new AsyncLocalStorage<{ account?: string }>();

/**
 * The answer with its HTTP Date header on the sandbox clock: the time of the account whose handler
 * made it, or the sandbox's own time for an answer no account's handler made (a refusal before one
 * was found). A client reading "now" from the Date header (the contract suite does) reads the time
 * its transactions were dated on, wherever the control API moved its account's clock.
 */
export function datedOnCallersTime(
  clock: Clock,
  respond: () => GatewayResponse | Promise<GatewayResponse>,
): GatewayResponse | Promise<GatewayResponse> {
  const slot: { account?: string } = {};
  const dated = (response: GatewayResponse): GatewayResponse => {
    const at = slot.account === undefined ? clock.now() : clock.as(slot.account, () => clock.now());
    return { ...response, headers: { ...response.headers, date: at.toUTCString() } };
  };
  const found = answering.run(slot, respond);
  return found instanceof Promise ? found.then(dated) : dated(found);
}

/** The handlers, each run on its caller's time. */
export function onCallersTime(
  handlers: GatewayHandlers<HandlerContext>,
  store: Store,
  clock: Clock,
): GatewayHandlers<HandlerContext> {
  const wrapped: Record<string, unknown> = {};
  for (const [name, handler] of Object.entries(
    handlers as unknown as Record<string, (input: unknown, context: HandlerContext) => unknown>,
  ))
    wrapped[name] = (input: unknown, context: HandlerContext) => {
      const offset = offsetsReadWithAccount.get(context.account);
      const work = () => handler.call(handlers, input, context);
      const slot = answering.getStore();
      if (slot) slot.account = clockOf(context.account);
      if (offset === undefined) return onAccountTime(store, clock, context.account, work);
      const name = clockOf(context.account);
      clock.share(name, offset);
      return clock.as(name, work);
    };
  return wrapped as unknown as GatewayHandlers<HandlerContext>;
}
