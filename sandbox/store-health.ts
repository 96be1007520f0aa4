// Whether the store can be reached, and what the sandbox does while it cannot. A request that finds
// the store gone trips the breaker: for a short while (1 s, doubling on each failed try up to 10 s)
// every request is answered at once, 503 with Retry-After and the gateway's -4, without a query,
// without a pool connection, without waiting: nothing piles up behind a database that is away. When
// the while is over, one request (or a health check) is let through to try the store; if it reaches
// it, the sandbox is back by itself.
//
// A request that waited for a connection of a pool that lent out every one, until the pool gave up
// (isPoolWait), is answered the same 503 with Retry-After and -4: the store cannot serve it now. But
// the breaker stays closed: the database answers, the other requests may find a connection.
import { AsyncLocalStorage } from 'node:async_hooks';

/** A store error that says the database cannot be reached (not that a statement is wrong). */
export function isUnreachable(error: unknown): boolean {
  const e = error as { code?: unknown; message?: unknown } | undefined;
  const code = typeof e?.code === 'string' ? e.code : '';
  const message = typeof e?.message === 'string' ? e.message : '';
  return (
    /^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|ENOTFOUND|EPIPE|EAI_AGAIN)$/.test(code) ||
    // PostgreSQL: connection exceptions (class 08), an administrator or crash shut-down (57P01-57P03),
    // too many connections (53300).
    /^(08[0-9A-Z]{3}|57P0[123]|53300)$/.test(code) ||
    // A connection's attempt that timed out (pg's "timeout expired"; pg-pool's "Connection terminated
    // due to connection timeout"). Not pg-pool's "timeout exceeded when trying to connect": that is a
    // request's wait for a connection of a busy pool, a database that answers (store-postgres.ts).
    /Connection terminated|^timeout expired$|Client has encountered a connection error|Connection refused/i.test(
      message,
    )
  );
}

/**
 * pg-pool's words for a request that waited for a connection while the pool lent out every one, until
 * its wait (PGW_DB_POOL_WAIT_MS) was over: the database answers, the instance's connections are busy.
 */
export const isPoolWait = (error: unknown): boolean =>
  (error as { message?: unknown } | undefined)?.message === 'timeout exceeded when trying to connect';

/** A store error after which the request cannot be served now: the database unreachable, or no connection free in time. */
export const isUnavailable = (error: unknown): boolean => isUnreachable(error) || isPoolWait(error);

const FIRST_WAIT_MS = 1000;
const LONGEST_WAIT_MS = 10_000;

/** What one request met of the store (StoreHealth.within). */
export interface RequestStore {
  /** A store call of the request failed as unavailable (isUnavailable). */
  unavailable: boolean;
  /** The one that failed waited for a busy pool's connection (isPoolWait): the database itself answers. */
  busy?: boolean;
}

export class StoreHealth {
  private failures = 0;
  /** Until when requests are answered without trying the store. */
  private waitUntil = 0;
  /** The request whose store calls these are, where one is being answered. */
  private readonly request = new AsyncLocalStorage<RequestStore>();

  /** fn run as one request's work: its store calls that fail as unavailable mark `seen`. */
  within<T>(seen: RequestStore, fn: () => T): T {
    return this.request.run(seen, fn);
  }

  /** Whether the store was last found unreachable. */
  get down(): boolean {
    return this.failures > 0;
  }

  /**
   * Seconds the caller should wait before trying again, while the breaker is open; undefined when this
   * request may go on (the store is up, or this is the one request that tries it again).
   */
  retryAfter(now = Date.now()): number | undefined {
    if (!this.down) return undefined;
    if (now < this.waitUntil) return Math.max(1, Math.ceil((this.waitUntil - now) / 1000));
    // This request tries the store; the others wait for what it finds.
    this.waitUntil = now + this.waitMs();
    return undefined;
  }

  /**
   * A store call failed: its request is marked when the store could not serve it (isUnavailable), and
   * the breaker opens when the failure says the store is unreachable.
   */
  failed(error: unknown, now = Date.now()): void {
    if (!isUnavailable(error)) return;
    const seen = this.request.getStore();
    if (seen) {
      seen.unavailable = true;
      seen.busy = isPoolWait(error);
    }
    if (!isUnreachable(error)) return;
    this.failures++;
    this.waitUntil = now + this.waitMs();
  }

  /** A store call succeeded: the store is back. */
  succeeded(): void {
    this.failures = 0;
    this.waitUntil = 0;
  }

  /** Seconds until the store is tried again (at least 1). */
  waitSeconds(now = Date.now()): number {
    return Math.max(1, Math.ceil((this.waitUntil - now) / 1000));
  }

  private waitMs(): number {
    return Math.min(LONGEST_WAIT_MS, FIRST_WAIT_MS * 2 ** Math.max(0, this.failures - 1));
  }
}

type Method = (...args: unknown[]) => unknown;
const WATCHED = new Set<PropertyKey>(['get', 'all', 'arrays', 'run', 'transaction', 'lastWrite']);

/** The store, its every call reported to health: a failure that says it is unreachable opens the breaker. */
export function watched<S extends object>(store: S, health: StoreHealth): S {
  const report = <T>(promise: Promise<T>): Promise<T> =>
    promise.then(
      (value) => {
        health.succeeded();
        return value;
      },
      (error: unknown) => {
        health.failed(error);
        throw error;
      },
    );
  // Each watched method wrapped once (by the function: one replaced later is wrapped anew), not at
  // every call: the store is called several times a request.
  const wrapped = new WeakMap<Method, Method>();
  return new Proxy(store, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver);
      if (typeof value !== 'function' || !WATCHED.has(name)) return value;
      let wrapper = wrapped.get(value as Method);
      if (!wrapper) {
        wrapper = (...args: unknown[]) => report((value as Method).apply(target, args) as Promise<unknown>);
        wrapped.set(value as Method, wrapper);
      }
      return wrapper;
    },
  });
}
