// Times as the gateway writes them: YYYY-MM-DD HH:MM:SS with no offset, in the zone the spec gives
// each one (x-time, x-settlement-date), and settlement dates on business days. Shared by the sandbox
// (which writes them) and the contract-test suite (which reads them back to instants to check them).
const formats = new Map<string, Intl.DateTimeFormat>();
/** Each zone's last answer: the text changes once a second, and formatting it costs microseconds a call. */
const lastSecond = new Map<string, { second: number; text: string }>();

/** YYYY-MM-DD HH:MM:SS: the wall-clock time of an instant in an IANA zone (full ICU: Node's own). */
export function wallTime(at: Date, zone: string): string {
  if (zone === 'UTC') return at.toISOString().slice(0, 19).replace('T', ' ');
  const second = Math.floor(at.getTime() / 1000);
  const last = lastSecond.get(zone);
  if (last?.second === second) return last.text;
  const text = zoneTime(at, zone);
  lastSecond.set(zone, { second, text });
  return text;
}

function zoneTime(at: Date, zone: string): string {
  let format = formats.get(zone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-CA', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    formats.set(zone, format);
  }
  const p = Object.fromEntries(format.formatToParts(at).map((x) => [x.type, x.value]));
  return `${p.year}-${p.month}-${p.day} ${p.hour}:${p.minute}:${p.second}`;
}

/** ISO weekday of a YYYY-MM-DD date: 1 Monday to 7 Sunday. */
export const isoWeekday = (day: string): number => new Date(`${day}T00:00:00Z`).getUTCDay() || 7;

/** The first of the business days on or after a YYYY-MM-DD date. */
export function businessDayOnOrAfter(day: string, businessDays: readonly number[]): string {
  let at = new Date(`${day}T00:00:00Z`);
  while (!businessDays.includes(at.getUTCDay() || 7)) at = new Date(at.getTime() + 86_400_000);
  return at.toISOString().slice(0, 10);
}

/**
 * Every instant a wall-clock time (YYYY-MM-DD HH:MM:SS) in a zone stands for, earliest first: one,
 * two in the hour the clocks go back (Sydney's 02:00 to 02:59 on the first Sunday of April is first
 * AEDT, then AEST), none in the hour they skip.
 */
export function instantsOf(wall: string, zone: string): Date[] {
  const asUtc = Date.parse(`${wall.replace(' ', 'T')}Z`);
  if (zone === 'UTC') return [new Date(asUtc)];
  const offsetAt = (t: number) => Date.parse(`${wallTime(new Date(t), zone).replace(' ', 'T')}Z`) - t;
  // The zone's offsets a day either side: any change of offset near the time lies between them.
  const offsets = new Set([offsetAt(asUtc - 86_400_000), offsetAt(asUtc), offsetAt(asUtc + 86_400_000)]);
  return [...offsets]
    .map((offset) => asUtc - offset)
    .filter((t) => wallTime(new Date(t), zone) === wall)
    .sort((a, b) => a - b)
    .filter((t, i, all) => i === 0 || t !== all[i - 1])
    .map((t) => new Date(t));
}

/** The instant a wall-clock time (YYYY-MM-DD HH:MM:SS) in a zone stands for. */
export function instantOf(wall: string, zone: string): Date {
  const asUtc = Date.parse(`${wall.replace(' ', 'T')}Z`);
  if (zone === 'UTC') return new Date(asUtc);
  // The zone's offset at the guess, then at the corrected instant (right across a daylight-saving change).
  let at = asUtc;
  for (let i = 0; i < 2; i++) at = asUtc - (Date.parse(`${wallTime(new Date(at), zone).replace(' ', 'T')}Z`) - at);
  return new Date(at);
}

/** The day after a YYYY-MM-DD date. */
export const dayAfter = (day: string): string =>
  new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);

/** How a settlement date is chosen (a SettledDate's x-settlement-date, spec/extensions/rules.schema.yaml). */
export interface SettlementRule {
  zone: string;
  businessDays: readonly number[];
  /** HH:MM:SS in the zone: made at sameDayUntil or before, its own day; at nextDayFrom or after, the next. */
  cutOff?: { sameDayUntil: string; nextDayFrom: string; sandbox: string };
}

/**
 * The days a card transaction made at this instant may settle on, as the recorded answers allow:
 * its own day (the first business day on or after it) before the cut-off window, the first business
 * day after it from the window's end, either inside the window (one day when both are the same).
 */
export function settlementDaysAt(at: Date, rule: SettlementRule): string[] {
  const wall = wallTime(at, rule.zone);
  const day = wall.slice(0, 10);
  const time = wall.slice(11);
  const own = businessDayOnOrAfter(day, rule.businessDays);
  if (!rule.cutOff || time <= rule.cutOff.sameDayUntil) return [own];
  const next = businessDayOnOrAfter(dayAfter(day), rule.businessDays);
  if (time >= rule.cutOff.nextDayFrom || next === own) return [next];
  return [own, next];
}

/** The day the sandbox settles a card transaction made at this instant: its own day before its cut-off, else the next. */
export function settlementDayAt(at: Date, rule: SettlementRule): string {
  const wall = wallTime(at, rule.zone);
  const day = wall.slice(0, 10);
  const cut = rule.cutOff && wall.slice(11) >= rule.cutOff.sandbox;
  return businessDayOnOrAfter(cut ? dayAfter(day) : day, rule.businessDays);
}

/** 100 ns intervals from the Gregorian reform (1582-10-15, a version-1 UUID's epoch) to 1970-01-01. */
const UUID_EPOCH_OFFSET = 122_192_928_000_000_000n;

/**
 * The instant a gateway transactionID was made, where it is a version-1 UUID after its prefix
 * (1336-20be3569-b600-11e6-b9c3-005056b209e0: time low, time mid, version 1 and time high, clock
 * sequence, node; the gateway writes a group without its leading zeros); undefined for any other form.
 */
export function transactionIdTime(transactionID: string): Date | undefined {
  const m = /^\d+-([0-9a-f]{1,8})-([0-9a-f]{1,4})-1([0-9a-f]{3})-[0-9a-f]{1,4}-[0-9a-f]{1,12}$/i.exec(transactionID);
  if (!m) return undefined;
  const ticks = (BigInt(`0x${m[3]}`) << 48n) | (BigInt(`0x${m[2]}`) << 32n) | BigInt(`0x${m[1]}`);
  return new Date(Number((ticks - UUID_EPOCH_OFFSET) / 10_000n));
}
