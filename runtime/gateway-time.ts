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
