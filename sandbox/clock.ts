// The sandbox clock: real time shifted by an offset, so that tests and client teams can move it on
// (direct debits settle, access tokens expire, transactions settle) without waiting. It writes times
// in the zone the spec gives each one (x-time, x-settlement-date): UTC, or the gateway's own
// Australia/Sydney, whose offset follows daylight saving (+11:00 in summer, +10:00 in winter).
import { businessDayOnOrAfter, wallTime } from '../runtime/gateway-time.ts';
import { payoutTimeZone, settlementDates } from '../generated/spec-constants.ts';

export class Clock {
  private offsetMs = 0;
  /** The offset every instance on the store shares (the control API's advances; clock-store.ts keeps it). */
  private sharedMs = 0;

  now(): Date {
    return new Date(Date.now() + this.sharedMs + this.offsetMs);
  }

  /** Takes the shared offset as the store holds it; this instance's own advances stay on top of it. */
  share(offsetMs: number): void {
    this.sharedMs = offsetMs;
  }

  advance(ms: number): void {
    this.offsetMs += ms;
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

  /** Today's date in a zone (YYYY-MM-DD). */
  dateIn(zone: string): string {
    return wallTime(this.now(), zone).slice(0, 10);
  }

  /** A payout time (createdAt, lastUpdated): in Australian Eastern time, as the spec's x-time says. */
  payoutTimestamp(offsetMs = 0): string {
    return this.timestamp(offsetMs, payoutTimeZone);
  }

  /** The day a card transaction made now settles (x-settlement-date): today in Sydney, or the next business day. */
  settlementDay(): string {
    return businessDayOnOrAfter(this.dateIn(settlementDates.zone), settlementDates.businessDays);
  }

  /** The last day whose settlement has happened: today, in the settlement zone. */
  settlementToday(): string {
    return this.dateIn(settlementDates.zone);
  }
}
