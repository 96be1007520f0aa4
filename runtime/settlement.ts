// Reading the settlement file getSettlement answers: a Zip archive holding one CSV file with a
// header row. Browser-safe (fflate), and apart from the client so that only its users load it.
import { unzipSync } from 'fflate';

export interface SettlementFile {
  /** Name of the CSV file inside the zip. */
  name: string;
  columns: string[];
  /** One object per row, keyed by the header row's column names. */
  rows: Record<string, string>[];
}

/** Splits CSV text (RFC 4180: quoted fields, doubled quotes, CRLF or LF) into rows of fields. */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
    } else field += c;
  }
  if (field !== '' || row.length) {
    row.push(field);
    rows.push(row);
  }
  return rows;
}

export function readSettlement(zip: Uint8Array): SettlementFile {
  const files = Object.entries(unzipSync(zip)).filter(([name]) => name.toLowerCase().endsWith('.csv'));
  if (files.length !== 1) throw new Error(`A settlement zip holds one CSV file; this one holds ${files.length}`);
  const [name, bytes] = files[0]!;
  const [columns = [], ...lines] = parseCsv(new TextDecoder().decode(bytes));
  return {
    name,
    columns,
    rows: lines.map((fields) => Object.fromEntries(columns.map((c, i) => [c, fields[i] ?? '']))),
  };
}
