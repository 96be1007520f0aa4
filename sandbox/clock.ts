// The sandbox clock: real time shifted by an offset, so that tests and client teams can move it on
// (direct debits settle, access tokens expire, transactions settle) without waiting. It writes times
// in the zone the spec gives each one (x-time, x-settlement-date): UTC, or the gateway's own
// Australia/Sydney, whose offset follows daylight saving (+11:00 in summer, +10:00 in winter).
//
// Each account has its own time (the control API's documentation: each account changes only its own
// data): a team moving its clock moves no one else's. Work done for an account runs in its scope
// (`as`), where now() is that account's time; outside any scope (the delivery queue's schedule, start
// up) it is the base time. The offsets are kept in the store (clock-store.ts), shared by every
// instance on it.
import { AsyncLocalStorage } from 'node:async_hooks';
import { payoutTimeZone, settlementDates } from '../generated/spec-constants.ts';
import { settlementDayAt, wallTime } from '../runtime/gateway-time.ts';

/**
 * How far from real time an account's clock may be moved: 36,525 days (100 years) ahead. The control
 * API refuses an advance past it (clock-store.ts), so every date the sandbox works out from its time
 * (a settlement day, a debit's date, a token's expiry, a payout's next run) stays in the years the
 * gateway writes (runtime/gateway-time.ts) for as long as real time is before the year 9899.
 * docs/DEPLOY.md (the control API's clock).
 */
export const CLOCK_RANGE_DAYS = 36_525;
export const CLOCK_RANGE_MS = CLOCK_RANGE_DAYS * 86_400_000;

/** An offset held to the clock's range (±CLOCK_RANGE_MS); a value beyond it reads as the range's end. */
const withinRange = (offsetMs: number) =>
  Number.isFinite(offsetMs) ? Math.max(-CLOCK_RANGE_MS, Math.min(CLOCK_RANGE_MS, offsetMs)) : 0;

export class Clock {
  /** This instance's own shift, under every account's (tests move one sandbox's time with it). */
  private offsetMs = 0;
  /** Each account's offset as the store last gave it. */
  private readonly offsets = new Map<string, number>();
  private readonly scope = new AsyncLocalStorage<string>();

  now(): Date {
    const account = this.scope.getStore();
    return new Date(this.baseMs() + (account === undefined ? 0 : (this.offsets.get(account) ?? 0)));
  }

  /** The time no account has moved: what the delivery queue schedules in. */
  private baseMs(): number {
    return Date.now() + this.offsetMs;
  }

  /** Runs work on this account's time. */
  as<T>(account: string, work: () => T): T {
    return this.scope.run(account, work);
  }

  /** The account whose time this is, if any. */
  get account(): string | undefined {
    return this.scope.getStore();
  }

  /**
   * The account's offset as the store holds it. The control API keeps it within the clock's range; one
   * beyond (a row an older sandbox wrote, a hand-edited database) is read as the range's end, so that
   * no account's time can leave the years the gateway writes.
   */
  share(account: string, offsetMs: number): void {
    this.offsets.set(account, withinRange(offsetMs));
  }

  /** The offset the account's time is ahead of the base time. */
  offsetOf(account: string): number {
    return this.offsets.get(account) ?? 0;
  }

  /** Moves this instance's own time (tests, in process); a RangeError past the clock's range, either way. */
  advance(ms: number): void {
    const to = this.offsetMs + ms;
    if (!(Math.abs(to) <= CLOCK_RANGE_MS))
      throw new RangeError(`The sandbox clock stays within ${CLOCK_RANGE_DAYS} days (100 years) of real time`);
    this.offsetMs = to;
  }

  advanceDays(days: number): void {
    this.advance(days * 86_400_000);
  }

  /** YYYY-MM-DD, days from today (UTC). */
  date(days = 0): string {
    return new Date(this.now().getTime() + days * 86_400_000).toISOString().slice(0, 10);
  }

  /** YYYY-MM-DD HH:MM:SS, the contract's timestamp form, in UTC or in the zone given. */
  timestamp(offsetMs = 0, zone = 'UTC'): string {
    return wallTime(new Date(this.now().getTime() + offsetMs), zone);
  }

  /** The base time's timestamp (UTC), whatever account's scope this runs in (the delivery queue's schedule). */
  baseTimestamp(offsetMs = 0): string {
    return wallTime(new Date(this.baseMs() + offsetMs), 'UTC');
  }

  /** Today's date in a zone (YYYY-MM-DD). */
  dateIn(zone: string): string {
    return wallTime(this.now(), zone).slice(0, 10);
  }

  /** A payout time (createdAt, lastUpdated): in Australian Eastern time, as the spec's x-time says. */
  payoutTimestamp(offsetMs = 0): string {
    return this.timestamp(offsetMs, payoutTimeZone);
  }

  /**
   * The day a card transaction made now settles (x-settlement-date): today in Sydney, or the next
   * business day when today is not one or it is past the sandbox's cut-off (inside the window the
   * recorded answers leave).
   */
  settlementDay(): string {
    return settlementDayAt(this.now(), settlementDates);
  }

  /** The last day whose settlement has happened: today, in the settlement zone. */
  settlementToday(): string {
    return this.dateIn(settlementDates.zone);
  }
}
