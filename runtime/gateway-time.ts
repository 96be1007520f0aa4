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

/** The instant a wall-clock time (YYYY-MM-DD HH:MM:SS) in a zone stands for. */
export function instantOf(wall: string, zone: string): Date {
  const asUtc = Date.parse(`${wall.replace(' ', 'T')}Z`);
  if (zone === 'UTC') return new Date(asUtc);
  // The zone's offset at the guess, then at the corrected instant (right across a daylight-saving change).
  let at = asUtc;
  for (let i = 0; i < 2; i++) at = asUtc - (Date.parse(`${wallTime(new Date(at), zone).replace(' ', 'T')}Z`) - at);
  return new Date(at);
}
