// The sandbox clock: real time shifted by an offset, so that tests and client teams can move it on
// (direct debits settle, access tokens expire, transactions settle) without waiting.
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

  /** YYYY-MM-DD HH:MM:SS, the contract's timestamp form. */
  timestamp(offsetMs = 0): string {
    return new Date(this.now().getTime() + offsetMs).toISOString().slice(0, 19).replace('T', ' ');
  }
}
