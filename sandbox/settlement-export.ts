// A settlement file written as a stream: rows come in a batch at a time (an AsyncIterable of arrays:
// the settlement handler's pages, each read by a statement of its own), become CSV lines, and are
// deflated into a streamed zip a large chunk at a time. Memory holds a chunk or two of CSV and the
// compressed output, never the whole CSV. The stream goes as fast as its consumer takes it: while a
// client takes nothing it waits, holding what it has made (see docs/DEPLOY.md, "Settlement files").
//
// fflate's Zip writes the container (headers, data descriptor, central directory); the entry's bytes
// are deflated by node:zlib, whose native deflater runs on libuv's thread pool: the main thread makes
// the next chunk of CSV while the previous one is compressed, and is never held by the compression.
import { once } from 'node:events';
import zlib from 'node:zlib';
import { type AsyncFlateStreamHandler, Zip, type ZipInputFile } from 'fflate';

/**
 * CSV handed to the deflater at a time, in bytes (about 3,000 rows of the settlement file): big enough
 * that a chunk's fixed costs (a write, a callback, a yield) vanish per row, small enough that making
 * one takes a few milliseconds. A new buffer each time: the deflater holds the last until it is done.
 */
const CHUNK_BYTES = 256 * 1024;
/** Lines gathered as one string before they are encoded into the chunk, in characters. */
const TEXT_CHARS = 16 * 1024;
/** CSV the deflater may hold before the stream waits for it: the main thread runs this far ahead. */
const DEFLATE_AHEAD = 4 * CHUNK_BYTES;
/** Work done between two yields to the event loop, in milliseconds. */
export const SLICE_MS = 10;

const breathe = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * A zip entry deflated by node:zlib (fflate's ZipInputFile): its CRC-32 (zlib.crc32) and size are
 * counted as the bytes are written, and written by fflate's Zip after the data, in the entry's data
 * descriptor.
 */
class ZlibDeflateEntry implements ZipInputFile {
  readonly compression = 8;
  /** The general-purpose flag's deflate bits (APPNOTE 4.4.4): 0, normal compression (level 6). */
  readonly flag = 0;
  crc = 0;
  size = 0;
  ondata: AsyncFlateStreamHandler = () => {};
  // zlib's streams take a Transform's options too (node:zlib passes them on; @types/node omits them).
  private readonly deflate = zlib.createDeflateRaw({ level: 6, highWaterMark: DEFLATE_AHEAD } as zlib.ZlibOptions);
  /** Resolves once the deflater has written its last byte (or failed). */
  readonly ended: Promise<void>;
  readonly filename: string;
  readonly mtime: Date;

  constructor(filename: string, mtime: Date) {
    this.filename = filename;
    this.mtime = mtime;
    this.deflate.on('data', (chunk: Buffer<ArrayBuffer>) => this.ondata(null, chunk, false));
    this.ended = new Promise((resolve, reject) => {
      this.deflate.on('end', () => {
        this.ondata(null, new Uint8Array(0), true);
        resolve();
      });
      this.deflate.on('error', reject);
    });
    this.ended.catch(() => {}); // awaited by the stream; a failure before that is not unhandled
  }

  /** Writes bytes (kept by the deflater until it is done with them); resolves when it can take more. */
  async write(bytes: Uint8Array): Promise<void> {
    this.crc = zlib.crc32(bytes, this.crc);
    this.size += bytes.length;
    if (!this.deflate.write(bytes)) await Promise.race([once(this.deflate, 'drain'), this.ended]);
  }

  end(): Promise<void> {
    this.deflate.end();
    return this.ended;
  }

  terminate(): void {
    this.deflate.destroy();
  }
}

/**
 * The Date whose local-time fields are this wall-clock time (YYYY-MM-DD HH:MM:SS): a zip entry's
 * time is a DOS time, fields without a zone, which the zip writer reads with the local getters; so
 * the entry shows the wall-clock time given, in whatever zone the process runs.
 */
export const zipTime = (wall: string): Date => {
  const [y, mo, d, h, mi, s] = wall.split(/[- :]/).map(Number) as [number, number, number, number, number, number];
  return new Date(y, mo - 1, d, h, mi, s);
};

/**
 * The zip (one entry, `name`, timed `mtime`) of a CSV with a header row of `columns` and a line per
 * row (`line` writes it, LF-ended), in compressed chunks as they are produced. Yields to the event
 * loop whenever SLICE_MS of work has run.
 */
export async function* zipCsvStream<R>(
  name: string,
  columns: readonly string[],
  batches: AsyncIterable<readonly R[]>,
  line: (row: R) => string,
  mtime: Date,
): AsyncGenerator<Uint8Array> {
  let out: Uint8Array[] = [];
  let failure: Error | undefined;
  const zip = new Zip((error, chunk) => {
    if (error) failure = error;
    else out.push(chunk);
  });
  const entry = new ZlibDeflateEntry(name, mtime);
  zip.add(entry);
  const drain = function* () {
    if (failure) throw failure;
    const ready = out;
    out = [];
    yield* ready;
  };
  // Lines are gathered a few hundred at a time (a string short-lived enough to die young) and
  // encoded into one buffer, which goes to the deflater when full: no line outlives a scavenge.
  let chunk = Buffer.allocUnsafe(CHUNK_BYTES);
  let used = 0;
  let text = `${columns.join(',')}\n`;
  /** Encodes the gathered lines into the chunk; true when the chunk had to be sent first. */
  const encode = async (): Promise<boolean> => {
    // A character is at most 3 bytes of UTF-8 (a surrogate pair 4 for 2): never a line cut short.
    const full = used + text.length * 3 > chunk.length;
    if (full) {
      await entry.write(chunk.subarray(0, used));
      chunk = Buffer.allocUnsafe(Math.max(CHUNK_BYTES, text.length * 3));
      used = 0;
    }
    used += chunk.write(text, used);
    text = '';
    return full;
  };
  try {
    let sliceEnd = performance.now() + SLICE_MS;
    for await (const batch of batches) {
      for (const row of batch) {
        text += line(row);
        if (text.length < TEXT_CHARS) continue;
        if (await encode()) yield* drain();
        if (performance.now() > sliceEnd) {
          await breathe();
          sliceEnd = performance.now() + SLICE_MS;
        }
      }
    }
    await encode();
    await entry.write(chunk.subarray(0, used));
    await entry.end();
    zip.end();
    yield* drain();
  } finally {
    // A consumer that stops early (a client gone, or ended for taking nothing) frees the deflater;
    // the rows' source is ended by the for-await above.
    entry.terminate();
  }
}
