// A settlement file written as a stream: rows come in one at a time (an AsyncIterable, so any store's
// cursor plugs in: the async Store's iterate, SQLite's statement iterator or a PostgreSQL cursor),
// become CSV lines, and are deflated into a streamed zip (fflate's Zip + ZipDeflate) a chunk at a
// time. Memory holds one chunk of CSV and the compressed output, never the whole CSV.
import { Zip, ZipDeflate } from 'fflate';
import { csvRows } from './csv.ts';

/**
 * Rows handed to the deflater at a time (about 20 KiB of CSV: well under a millisecond to deflate).
 * The deflated bytes depend on where pushes end, so the header and these chunks are kept as the
 * earlier page-by-page writer had them: the zip stays byte-identical, not just its CSV.
 */
const CHUNK_ROWS = 200;
/** Work done between two yields to the event loop, in milliseconds. */
export const SLICE_MS = 10;

const breathe = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * The zip (one entry, `name`) of a CSV with a header row of `columns` and one line per row, in
 * compressed chunks as they are produced. Yields to the event loop whenever SLICE_MS of work has run.
 */
export async function* zipCsvStream<R>(
  name: string,
  columns: readonly string[],
  rows: AsyncIterable<R>,
  record: (row: R) => Record<string, string>,
  /** A chunk also ends where this changes (the settlement file's day), as the page-by-page writer's did. */
  group: (row: R) => unknown = () => undefined,
  mtime = new Date('2026-01-01T00:00:00Z'),
): AsyncGenerator<Uint8Array> {
  let out: Uint8Array[] = [];
  const zip = new Zip((error, chunk) => {
    if (error) throw error;
    out.push(chunk);
  });
  const entry = new ZipDeflate(name, { level: 6 });
  entry.mtime = mtime;
  zip.add(entry);
  // One buffer for every chunk's UTF-8 (fflate's deflater copies what it is given into its window):
  // a new array per chunk was garbage the collector let pile up, +130 MB over 1,000,000 rows.
  const encoder = new TextEncoder();
  let buffer = new Uint8Array(64 * 1024);
  const push = (text: string) => {
    if (text.length * 3 > buffer.length) buffer = new Uint8Array(text.length * 3);
    const { written } = encoder.encodeInto(text, buffer);
    entry.push(buffer.subarray(0, written));
  };
  const drain = function* () {
    const ready = out;
    out = [];
    yield* ready;
  };
  push(`${columns.join(',')}\n`);
  let batch: Record<string, string>[] = [];
  let current: unknown;
  let sliceEnd = performance.now() + SLICE_MS;
  for await (const row of rows) {
    const key = group(row);
    if (batch.length && key !== current) {
      push(csvRows(columns, batch));
      batch = [];
    }
    current = key;
    batch.push(record(row));
    if (batch.length < CHUNK_ROWS) continue;
    push(csvRows(columns, batch));
    batch = [];
    yield* drain();
    if (performance.now() > sliceEnd) {
      await breathe();
      sliceEnd = performance.now() + SLICE_MS;
    }
  }
  if (batch.length) push(csvRows(columns, batch));
  entry.push(new Uint8Array(0), true);
  zip.end();
  yield* drain();
}
