// CSV as the sandbox writes it (retrieveBatch, settlement files): RFC 4180 quoting, and no cell a
// spreadsheet would run as a formula.
//
// - A field holding a comma, a double quote, CR or LF is quoted, its quotes doubled (RFC 4180 §2.6,
//   §2.7), so a value can never end its row or add one.
// - A field starting with = + - @, tab or CR is a formula to Excel, LibreOffice and Google Sheets
//   (OWASP, "CSV Injection"): it is prefixed with a single quote, which they show as text. A plain
//   number (-2, +1.50) is left as it is: the batch results' responseCode is negative, and a number is
//   not a formula.

import { parseCsv } from '../runtime/settlement.ts';

const FORMULA_START = /^[=+\-@\t\r]/;
const PLAIN_NUMBER = /^[+-]?\d+(\.\d+)?$/;
const NEEDS_QUOTES = /[",\r\n]/;
/** Either of the two above: a value that matches neither is written as it is (one test, most cells). */
const NEEDS_WORK = /^[=+\-@\t\r]|[",\r\n]/;

export function csvField(value: string): string {
  if (!NEEDS_WORK.test(value)) return value;
  const safe = FORMULA_START.test(value) && !PLAIN_NUMBER.test(value) ? `'${value}` : value;
  return NEEDS_QUOTES.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

/** CSV rows, each ended by LF, without the header: a file written in parts. */
export function csvRows(columns: readonly string[], records: Iterable<Record<string, unknown>>): string {
  let out = '';
  for (const record of records) out += `${columns.map((c) => csvField(String(record[c] ?? ''))).join(',')}\n`;
  return out;
}

/**
 * One CSV row (LF-ended) from a record's cells, each read by its column's function: for a stream of
 * many rows, where a record object and a cell array per row would be garbage. The text csvRows
 * writes for the same cells.
 */
export function csvLineWriter<R>(cells: readonly ((record: R) => string)[]): (record: R) => string {
  const last = cells.length - 1;
  return (record) => {
    let line = '';
    for (let i = 0; i < last; i++) line += `${csvField(cells[i]!(record))},`;
    return `${line}${csvField(cells[last]!(record))}\n`;
  };
}

/**
 * A CSV file: a header row of the columns, then one row per record. Lines end in LF as the spec's
 * example settlement file does (RFC 4180 §2.1 says CRLF; readers, this package's included, take both).
 */
export function csvFile(columns: readonly string[], records: Iterable<Record<string, unknown>>): string {
  const lines = [columns.map(csvField).join(',')];
  for (const record of records) lines.push(columns.map((c) => csvField(String(record[c] ?? ''))).join(','));
  return `${lines.join('\n')}\n`;
}

/** The index of the first item that matches, looked for `sliceMs` at a time, yielding between; -1 if none. */
export async function findIndexInSlices<T>(
  items: readonly T[],
  matches: (item: T) => boolean,
  sliceMs: number,
): Promise<number> {
  let sliceEnd = performance.now() + sliceMs;
  for (let i = 0; i < items.length; i++) {
    if (matches(items[i]!)) return i;
    if ((i & 255) === 255 && performance.now() > sliceEnd) {
      await new Promise((resolve) => setImmediate(resolve));
      sliceEnd = performance.now() + sliceMs;
    }
  }
  return -1;
}

/**
 * parseCsv over a large text, a part at a time, yielding to the event loop after every `sliceMs`.
 * Parts end at a line break outside quotes (an even number of quotes before it), so that each part
 * holds whole records and parses as the whole text would.
 */
export async function parseCsvInSlices(text: string, sliceMs: number, partChars = 64 * 1024): Promise<string[][]> {
  const rows: string[][] = [];
  let sliceEnd = performance.now() + sliceMs;
  let start = 0;
  let quotes = 0; // quotes seen from start to `scanned`
  let scanned = 0;
  while (start < text.length) {
    let end = text.length;
    for (
      let nl = text.indexOf('\n', Math.min(start + partChars, text.length));
      nl >= 0;
      nl = text.indexOf('\n', nl + 1)
    ) {
      for (let q = text.indexOf('"', scanned); q >= 0 && q < nl; q = text.indexOf('"', q + 1)) quotes++;
      scanned = nl;
      if (quotes % 2 === 0) {
        end = nl + 1;
        break;
      }
    }
    for (const row of parseCsv(text.slice(start, end))) rows.push(row);
    start = end;
    scanned = end;
    quotes = 0;
    if (performance.now() > sliceEnd) {
      await new Promise((resolve) => setImmediate(resolve));
      sliceEnd = performance.now() + sliceMs;
    }
  }
  return rows;
}
