// The settlement export as a stream: the zip comes out in chunks while rows are still being read
// (memory holds a chunk, not the file), and the CSV inside, read back by fflate's own unzip, is the
// one csvFile writes for the same records.
import { unzipSync } from 'fflate';
import { expect, it } from 'vitest';
import { csvFile, csvLineWriter } from '../../sandbox/csv.ts';
import { zipCsvStream, zipTime } from '../../sandbox/settlement-export.ts';
import { bodyBytes } from '../../server-stubs/index.ts';
import { entryTime } from './support.ts';

const columns = ['id', 'note'];
const record = (i: number) => ({ id: `t-${i}`, note: i % 3 ? `plain ${i}` : `=SUM(A${i}), "quoted"` });
const line = csvLineWriter(columns.map((c) => (i: number) => record(i)[c as 'id' | 'note']));
const made = zipTime('2026-11-28 13:00:00');

/** The numbers below n in batches of 100, as a store's cursor hands rows out; `seen` counts those handed out. */
async function* numbers(n: number, seen: { count: number }) {
  for (let i = 0; i < n; i += 100) {
    const batch = Array.from({ length: Math.min(100, n - i) }, (_, j) => i + j);
    seen.count = i + batch.length;
    yield batch;
  }
}

it('holds the same CSV as csvFile, in a zip fflate reads back', async () => {
  const bytes = await bodyBytes(zipCsvStream('settlement.csv', columns, numbers(1000, { count: 0 }), line, made));
  const csv = new TextDecoder().decode(unzipSync(bytes)['settlement.csv']);
  expect(csv).toBe(
    csvFile(
      columns,
      Array.from({ length: 1000 }, (_, i) => record(i)),
    ),
  );
});

it('hands out zip bytes before the rows are all read', async () => {
  const seen = { count: 0 };
  const stream = zipCsvStream('settlement.csv', columns, numbers(50_000, seen), line, made);
  const first = await stream.next();
  expect(first.done).toBe(false);
  expect(seen.count).toBeLessThan(50_000);
  await stream.return(undefined);
});

it('keeps text of several bytes a character whole across its chunks (UTF-8 of up to 4 bytes)', async () => {
  const wide = (i: number) => ({ id: `t-${i}`, note: `Café ☕ ${'😀'.repeat(i % 7)} ${i}` });
  const wideLine = csvLineWriter(columns.map((c) => (i: number) => wide(i)[c as 'id' | 'note']));
  const bytes = await bodyBytes(zipCsvStream('settlement.csv', columns, numbers(40_000, { count: 0 }), wideLine, made));
  const csv = new TextDecoder().decode(unzipSync(bytes)['settlement.csv']);
  expect(csv).toBe(
    csvFile(
      columns,
      Array.from({ length: 40_000 }, (_, i) => wide(i)),
    ),
  );
});

it('times its entry with the wall-clock time given, whatever zone the process runs in', async () => {
  const bytes = await bodyBytes(zipCsvStream('settlement.csv', columns, numbers(10, { count: 0 }), line, made));
  expect(entryTime(bytes)).toBe('2026-11-28 13:00:00');
});
