// Times as the gateway writes them: YYYY-MM-DD HH:MM:SS with no offset, in the zone the spec gives
// each one (x-time, x-settlement-date), and settlement dates on business days. Shared by the sandbox
// (which writes them) and the contract-test suite (which reads them back to instants to check them).
const formats = new Map<string, Intl.DateTimeFormat>();
/** Each zone's last answer: the text changes once a second, and formatting it costs microseconds a call. */
const lastSecond = new Map<string, { second: number; text: string }>();

const DAY_MS = 86_400_000;

/**
 * The instants the gateway's form can write, in every zone: four-digit years, 0001 to 9999, with a
 * day's margin at each end for the zones' offsets (a zone's year 0 would be written by Intl as the
 * year 1 before the era, and 10000 needs a fifth digit). Past them Date arithmetic goes on quietly
 * (+010000-01-01, then Invalid Date from ±8.64e15 ms), and a loop over days that reads such a date
 * back never meets a business day: every computation here refuses them with a RangeError instead.
 */
export const WRITABLE_TIMES = {
  from: Date.parse('0001-01-02T00:00:00Z'),
  to: Date.parse('9999-12-31T00:00:00Z') - 1,
} as const;

/** The instant's milliseconds, or a RangeError when the gateway's form cannot write it. */
function writable(at: Date | number, what: string): number {
  const ms = typeof at === 'number' ? at : at.getTime();
  if (!(ms >= WRITABLE_TIMES.from && ms <= WRITABLE_TIMES.to))
    throw new RangeError(`${what} is outside the years 0001 to 9999 the gateway's times are written in`);
  return ms;
}

/** YYYY-MM-DD HH:MM:SS: the wall-clock time of an instant in an IANA zone (full ICU: Node's own). */
export function wallTime(at: Date, zone: string): string {
  writable(at, 'The time');
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
  // Intl writes a year before 1000 with fewer digits (999): the form has four.
  return `${p.year!.padStart(4, '0')}-${p.month}-${p.day} ${p.hour}:${p.minute}:${p.second}`;
}

/** ISO weekday of a YYYY-MM-DD date: 1 Monday to 7 Sunday. */
export const isoWeekday = (day: string): number => new Date(`${day}T00:00:00Z`).getUTCDay() || 7;

/** The first of the business days (ISO weekdays) on or after a YYYY-MM-DD date: within its week, or a RangeError. */
export function businessDayOnOrAfter(day: string, businessDays: readonly number[]): string {
  const start = /^\d{4}-\d{2}-\d{2}$/.test(day) ? Date.parse(`${day}T00:00:00Z`) : Number.NaN;
  writable(start, `The day '${day}'`);
  // Seven days hold every weekday: a list naming none (empty, or numbers that are no weekday) ends here.
  for (let i = 0; i < 7; i++) {
    const at = start + i * DAY_MS;
    if (businessDays.includes(new Date(at).getUTCDay() || 7))
      return new Date(writable(at, `The business day after ${day}`)).toISOString().slice(0, 10);
  }
  throw new RangeError(`No business day in the week from ${day}: the business days must name ISO weekdays 1 to 7`);
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

/** The instant a wall-clock time (YYYY-MM-DD HH:MM:SS) in a zone stands for; Invalid Date for any other text. */
export function instantOf(wall: string, zone: string): Date {
  const asUtc = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/.test(wall)
    ? Date.parse(`${wall.replace(' ', 'T')}Z`)
    : Number.NaN;
  if (zone === 'UTC' || !(asUtc >= WRITABLE_TIMES.from && asUtc <= WRITABLE_TIMES.to)) return new Date(asUtc);
  // The zone's offset at the guess, then at the corrected instant (right across a daylight-saving change).
  let at = asUtc;
  for (let i = 0; i < 2; i++) at = asUtc - (Date.parse(`${zoneTime(new Date(at), zone).replace(' ', 'T')}Z`) - at);
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
