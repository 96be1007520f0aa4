// The spec's rule marks about values (spec/extensions/rules.schema.yaml), checked on every answer:
// the zone a timestamp is written in (x-time), settlement dates on business days (x-settlement-date),
// attempts in their order (x-attempts), a status summing up a list (x-rollup), and which rows a
// settlement file lists (x-settlement-file). "Now" is the answer's own HTTP Date header.
import { deref } from '../runtime/document.ts';
import { instantsOf, isoWeekday, settlementDaysAt, wallTime } from '../runtime/gateway-time.ts';
import { readSettlement } from '../runtime/settlement.ts';
import { doc } from './requests.ts';

/** Clock skew and the Date header's whole seconds: a server's clock may be this far from the answer's Date. */
const SKEW_MS = 60_000;

/** A node's rule marks: its own first, then its $ref's, then its allOf members'. */
function marksOf(node: any): Record<string, any> {
  if (!node || typeof node !== 'object') return {};
  const own = Object.fromEntries(Object.entries(node).filter(([k]) => k.startsWith('x-')));
  const target = typeof node.$ref === 'string' ? marksOf(deref(doc, node)) : {};
  const members = (node.allOf ?? []).map(marksOf);
  return Object.assign({}, ...members.reverse(), target, own);
}

const progressionOf = (itemSchema: any, field: string) =>
  marksOf(deref(doc, deref(doc, itemSchema)?.properties?.[field]))['x-status-progression'] as
    | { final: string[]; retriedBy?: string[] }
    | undefined;

function check(node: any, value: unknown, path: string, now: Date | undefined, out: string[]): void {
  const marks = marksOf(node);
  const time = marks['x-time'];
  // A wall-clock time the zone never shows (the hour skipped when daylight saving starts) was not
  // written in it; one it shows twice (the hour repeated when daylight saving ends) may be either.
  const instants = time && typeof value === 'string' ? instantsOf(value, time.zone) : [];
  if (time && typeof value === 'string' && !instants.length)
    out.push(`${path} ${value} is a time ${time.zone} never shows: not written in ${time.zone}`);
  if (time && instants.length && now && time.recorded) {
    const ahead = instants[0]!.getTime() - now.getTime();
    if (ahead > SKEW_MS)
      out.push(
        `${path} ${value} read in ${time.zone} is ${Math.round(ahead / 60_000)} min after the answer (${wallTime(now, time.zone)} there): not written in ${time.zone}`,
      );
  }
  const settles = marks['x-settlement-date'];
  if (settles && typeof value === 'string') {
    if (!settles.businessDays.includes(isoWeekday(value)))
      out.push(`${path} ${value} is not a business day (ISO weekdays ${settles.businessDays.join(',')})`);
    else if (settles.firstOnOrAfter === 'answer' && now) {
      // The days a transaction made at the answer's time settles on, give or take the skew: the
      // evidence's cut-off window allows two (x-settlement-date's cutOff, docs/RULES.md).
      const allowed = [
        ...new Set([-SKEW_MS, SKEW_MS].flatMap((d) => settlementDaysAt(new Date(now.getTime() + d), settles))),
      ];
      if (!allowed.includes(value)) {
        const cut = settles.cutOff;
        out.push(
          `${path} ${value} is not the day a transaction made at ${wallTime(now, settles.zone)} in ${settles.zone} settles on: ${allowed.join(' or ')} (its own business day${cut ? ` when made by ${cut.sameDayUntil}, the next from ${cut.nextDayFrom}` : ''})`,
        );
      }
    }
  }
  const s = deref(doc, node);
  if (!s || typeof value !== 'object' || value === null) return;
  if (Array.isArray(value)) {
    const attempts = marks['x-attempts'] ?? s['x-attempts'];
    if (attempts) checkAttempts(attempts, s.items, value as Record<string, string>[], path, out);
    for (const [i, item] of value.entries()) check(s.items, item, `${path}[${i}]`, now, out);
    return;
  }
  for (const [name, property] of Object.entries<any>(s.properties ?? {})) {
    const v = (value as Record<string, unknown>)[name];
    if (v === undefined) continue;
    const rollup = marksOf(property)['x-rollup'];
    if (rollup) checkRollup(rollup, s, value as Record<string, any>, `${path}.${name}`, out);
    check(property, v, `${path}.${name}`, now, out);
  }
}

/**
 * Whether wall time `a` is surely after wall time `b` in the zone they are written in: each a time of
 * the repeated hour stands for two instants, so only when a's earliest is after b's latest.
 */
function surelyAfter(a: string, b: string, zone: string | undefined): boolean {
  if (!zone) return a > b;
  const [as, bs] = [instantsOf(a, zone), instantsOf(b, zone)];
  if (!as.length || !bs.length) return a > b;
  return as[0]!.getTime() > bs.at(-1)!.getTime();
}

function checkAttempts(mark: any, itemSchema: any, list: Record<string, string>[], path: string, out: string[]) {
  const retriedBy = progressionOf(itemSchema, mark.status)?.retriedBy ?? [];
  const zoneOf = (field: string) =>
    marksOf(deref(doc, deref(doc, itemSchema)?.properties?.[field]))['x-time']?.zone as string | undefined;
  const zone = zoneOf(mark.createdAt) ?? zoneOf(mark.lastUpdated);
  list.forEach((a, i) => {
    if (a[mark.rail] !== mark.rails[Math.min(i, mark.rails.length - 1)])
      out.push(
        `${path}[${i}].${mark.rail} is ${a[mark.rail]}: attempt ${i + 1} is made on ${mark.rails[i] ?? mark.rails.at(-1)}`,
      );
    if (surelyAfter(String(a[mark.createdAt]), String(a[mark.lastUpdated]), zone))
      out.push(`${path}[${i}] was last updated (${a[mark.lastUpdated]}) before it was made (${a[mark.createdAt]})`);
    if (i < list.length - 1 && !retriedBy.includes(a[mark.status]!))
      out.push(
        `${path}[${i}].${mark.status} is ${a[mark.status]}, yet another attempt follows (only after ${retriedBy.join(', ')})`,
      );
    const before = list[i - 1];
    if (before && surelyAfter(String(before[mark.lastUpdated]), String(a[mark.createdAt]), zone))
      out.push(`${path}[${i}] was made (${a[mark.createdAt]}) before attempt ${i} ended (${before[mark.lastUpdated]})`);
  });
}

function checkRollup(mark: any, schema: any, value: Record<string, any>, path: string, out: string[]) {
  const items = value[mark.items];
  if (!Array.isArray(items)) return;
  const final = progressionOf(deref(doc, schema.properties[mark.items]).items, mark.itemStatus)?.final ?? [];
  const expected = items.every((item) => final.includes(item[mark.itemStatus])) ? mark.whenAllFinal : mark.otherwise;
  const got = path.split('.').at(-1)!;
  if (value[got] !== expected) out.push(`${path} is ${value[got]}, expected ${expected} (x-rollup over ${mark.items})`);
}

/** Each value rule of a result schema that this JSON answer breaks. */
export function valueViolations(resultSchema: string, answer: unknown, now: Date | undefined): string[] {
  const out: string[] = [];
  check({ $ref: `#/components/schemas/${resultSchema}` }, answer, 'answer', now, out);
  return out;
}

/** Each rule of a settlement file (x-settlement-file) this zip breaks, for the request it answers. */
export function fileViolations(
  resultSchema: string,
  request: Record<string, unknown>,
  zip: Uint8Array,
  now: Date | undefined,
): string[] {
  const mark = marksOf(doc.components.schemas[resultSchema])['x-settlement-file'];
  if (!mark) return [];
  let rows: Record<string, string>[];
  try {
    rows = readSettlement(zip).rows as Record<string, string>[];
  } catch (error) {
    return [`the settlement zip cannot be read: ${(error as Error).message}`];
  }
  const from = String(request[mark.from]);
  const to = String(request[mark.to]);
  const today = now && wallTime(new Date(now.getTime() + SKEW_MS), mark.zone).slice(0, 10);
  const out: string[] = [];
  for (const row of rows) {
    const day = row[mark.dateColumn] ?? '';
    const id = row.transactionID ?? '?';
    if (day < from || day > to) out.push(`row ${id} is dated ${day}, outside ${from} to ${to}`);
    if (today && day > today)
      out.push(
        `row ${id} is dated ${day}, after the day the file was asked (${today} in ${mark.zone}): not settled yet`,
      );
    if (!mark.businessDays.includes(isoWeekday(day))) out.push(`row ${id} is dated ${day}, not a business day`);
    const status = row[mark.statusColumn];
    if (status !== undefined && !mark.statuses.includes(status))
      out.push(`row ${id} has ${mark.statusColumn} ${status}, not one of ${mark.statuses.join(', ')}`);
  }
  return out;
}
