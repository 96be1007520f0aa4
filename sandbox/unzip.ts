// Uploaded zips inflated as a stream, with a cap on what they may inflate to: a zip bomb (150 KiB
// inflating to 150 MB ran the sandbox out of memory) is refused once the cap is passed, having held
// at most the cap plus what one small compressed slice inflates to (deflate's ratio is at most about
// 1032:1, so 4 KiB in gives at most about 4 MiB out).
import { Unzip, UnzipInflate } from 'fflate';

const SLICE = 4096;

export type Unzipped = { files: Record<string, Uint8Array> } | { error: 'too large' | 'not a zip' };

export function unzipCapped(zip: Uint8Array, maxBytes: number): Unzipped {
  const run = unzipSteps(zip, maxBytes);
  let step = run.next();
  while (!step.done) step = run.next();
  return step.value;
}

/** unzipCapped, yielding to the event loop after every `sliceMs` of work. */
export async function unzipCappedInSlices(zip: Uint8Array, maxBytes: number, sliceMs: number): Promise<Unzipped> {
  const run = unzipSteps(zip, maxBytes);
  let sliceEnd = performance.now() + sliceMs;
  for (let step = run.next(); ; step = run.next()) {
    if (step.done) return step.value;
    if (performance.now() > sliceEnd) {
      await new Promise((resolve) => setImmediate(resolve));
      sliceEnd = performance.now() + sliceMs;
    }
  }
}

/** The inflation, one compressed slice per step. */
function* unzipSteps(zip: Uint8Array, maxBytes: number): Generator<void, Unzipped, void> {
  const files: Record<string, Uint8Array[]> = {};
  let total = 0;
  let failed: 'too large' | 'not a zip' | undefined;
  try {
    const unzip = new Unzip((file) => {
      const chunks: Uint8Array[] = [];
      files[file.name] = chunks;
      file.ondata = (error, chunk) => {
        if (failed) return;
        if (error) {
          failed = 'not a zip';
          return;
        }
        total += chunk.length;
        if (total > maxBytes) {
          failed = 'too large';
          file.terminate();
          return;
        }
        chunks.push(chunk);
      };
      file.start();
    });
    unzip.register(UnzipInflate);
    for (let i = 0; i < zip.length && !failed; i += SLICE) {
      unzip.push(zip.subarray(i, i + SLICE), i + SLICE >= zip.length);
      yield;
    }
  } catch {
    failed ??= 'not a zip';
  }
  if (failed) return { error: failed };
  if (!Object.keys(files).length) return { error: 'not a zip' };
  return { files: Object.fromEntries(Object.entries(files).map(([name, chunks]) => [name, concat(chunks)])) };
}

function concat(chunks: Uint8Array[]): Uint8Array {
  if (chunks.length === 1) return chunks[0]!;
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}
