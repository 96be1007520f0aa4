// A file answer streamed a chunk at a time (a settlement export too large to hold): sent chunked as it
// is made, read from its source only as fast as the client reads, scanned for card numbers before any
// of its bytes leave, and cut off (never completed) when a card number turns up late.
import { randomFillSync } from 'node:crypto';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import zlib from 'node:zlib';
import { type AsyncFlateStreamHandler, Zip, type ZipInputFile, unzipSync } from 'fflate';
import { afterEach, describe, expect, it } from 'vitest';
import { buildRequest, operation, requestExamples } from '../../contract/index.ts';
import { accounts, echoHandlers } from '../fixtures/example-handlers.ts';
import { createGateway, createNodeHandler, createNodeServer } from '../../server-stubs/index.ts';

/** The last block of a deflate stream: an empty one, marked final. */
const FINAL_BLOCK = zlib.deflateRawSync(new Uint8Array(0));

/** What the deflater gathers before it deflates: 64 KiB, as fflate's ZipDeflate did (its first output held the first lines). */
const GATHER = 65_536;

/**
 * A zip entry deflated by node:zlib at level 1, where fflate's ZipDeflate (JavaScript) took 1.7 s of
 * the file's CPU: what is pushed is gathered up to GATHER bytes, each batch deflated on its own and
 * flushed to a byte's end (Z_SYNC_FLUSH, no block marked final), then an empty final block; one after
 * another they are one deflate stream. Its CRC-32 and sizes follow the data (a data descriptor), as
 * ZipDeflate's did and the sandbox's settlement export's do.
 */
class GatheredDeflate implements ZipInputFile {
  readonly compression = 8;
  crc = 0;
  size = 0;
  ondata: AsyncFlateStreamHandler = () => {};
  private gathered: Uint8Array[] = [];
  private bytes = 0;
  readonly filename: string;
  constructor(filename: string) {
    this.filename = filename;
  }

  push(bytes: Uint8Array, final = false): void {
    this.crc = zlib.crc32(bytes, this.crc);
    this.size += bytes.length;
    this.gathered.push(bytes);
    this.bytes += bytes.length;
    if ((this.bytes >= GATHER || final) && this.bytes > 0) {
      const batch = Buffer.concat(this.gathered);
      this.gathered = [];
      this.bytes = 0;
      this.ondata(null, zlib.deflateRawSync(batch, { level: 1, finishFlush: zlib.constants.Z_SYNC_FLUSH }), false);
    }
    if (final) this.ondata(null, FINAL_BLOCK, true);
  }
}

/** A zip of one CSV entry, produced a chunk at a time from `lines`; `stats` counts what was made and whether it was closed. */
async function* zipOf(
  lines: Iterable<string | Uint8Array>,
  stats: { chunks: number; closed: boolean },
): AsyncGenerator<Uint8Array> {
  let out: Uint8Array[] = [];
  const zip = new Zip((error, chunk) => {
    if (error) throw error;
    out.push(chunk);
  });
  const entry = new GatheredDeflate('settlement.csv');
  zip.add(entry);
  try {
    for (const line of lines) {
      entry.push(bytesOf(line));
      for (const chunk of out) {
        stats.chunks++;
        yield chunk;
        await new Promise((resolve) => setImmediate(resolve));
      }
      out = [];
    }
    entry.push(new Uint8Array(0), true);
    zip.end();
    yield* out;
  } finally {
    stats.closed = true;
  }
}

const bytesOf = (line: string | Uint8Array): Uint8Array =>
  typeof line === 'string' ? new TextEncoder().encode(line) : line;

/**
 * Lines of letters that deflate hardly at all, so that each makes about 64 KiB of zip: 65,536 random
 * lowercase letters, a comma, `extra`, a line end. Made as bytes from crypto's random bytes (a string
 * built a letter at a time and then encoded took some 1.5 s of the file's CPU).
 */
function* noise(count: number, extra: (i: number) => string = () => ''): Generator<Uint8Array> {
  for (let i = 0; i < count; i++) {
    const tail = new TextEncoder().encode(`,${extra(i)}\n`);
    const line = new Uint8Array(65_536 + tail.length);
    randomFillSync(line.subarray(0, 65_536));
    for (let j = 0; j < 65_536; j++) line[j] = 97 + (line[j]! % 26);
    line.set(tail, 65_536);
    yield line;
  }
}

/** What lines make, as bytes. */
const joined = (lines: (string | Uint8Array)[]): Buffer => Buffer.concat(lines.map(bytesOf));

const servers: http.Server[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.close();
});

async function serve(
  source: () => AsyncIterable<Uint8Array>,
  logged: string[] = [],
  options: Parameters<typeof createNodeServer>[1] = {},
) {
  const gateway = createGateway({
    handlers: { ...echoHandlers([]), getSettlement: async () => source() },
    accounts,
    logger: {
      warn: () => {},
      error: (message: string, fields?: Record<string, unknown>) =>
        void logged.push(`${message} ${JSON.stringify(fields)}`),
    },
  });
  const server = createNodeServer(gateway, options);
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const request = buildRequest(operation('getSettlement'), {
    body: structuredClone(requestExamples(operation('getSettlement'))[0]!.value),
  });
  return { port: (server.address() as AddressInfo).port, request, server };
}

function post(port: number, request: ReturnType<typeof buildRequest>): Promise<http.IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path: request.url,
        method: request.verb,
        headers: request.headers as Record<string, string>,
      },
      resolve,
    );
    req.on('error', reject);
    req.end(request.body as string);
  });
}

const settle = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('a streamed file answer', () => {
  it('is sent chunked as it is made and arrives whole', async () => {
    const stats = { chunks: 0, closed: false };
    const lines = ['transactionID,transactionAmount\n', ...Array.from({ length: 2000 }, (_, i) => `T${i},1.00\n`)];
    const { port, request } = await serve(() => zipOf(lines, stats));
    const response = await post(port, request);
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('application/zip');
    expect(response.headers['transfer-encoding']).toBe('chunked');
    expect(response.headers['content-length']).toBeUndefined();
    const parts: Buffer[] = [];
    for await (const part of response) parts.push(part as Buffer);
    const csv = new TextDecoder().decode(unzipSync(Buffer.concat(parts))['settlement.csv']);
    expect(csv).toBe(lines.join(''));
    expect(stats.closed).toBe(true);
  });

  it('is read from its source only as fast as the client reads, and a client that goes away ends the source', async () => {
    const stats = { chunks: 0, closed: false };
    // About 200 MB of zip if it were all made: far more than the socket's buffers hold.
    const { port, request } = await serve(() => zipOf(noise(3000), stats));
    const response = await post(port, request);
    response.pause();
    // Back-pressure: once the socket's buffers are full nothing more is made while nobody reads.
    let made = -1;
    for (let i = 0; i < 40 && stats.chunks !== made; i++) {
      made = stats.chunks;
      await settle(250);
    }
    expect(stats.chunks).toBe(made);
    expect(made).toBeLessThan(600); // the kernel's loopback buffers: a few MB of the ~120 MB it would make
    response.destroy();
    for (let i = 0; i < 50 && !stats.closed; i++) await settle(20);
    expect(stats.closed).toBe(true);
  });

  it('whose client takes none of it for answerStallTimeout is ended: its connection closed, its source ended', async () => {
    // Finding: a client that read nothing held its answer (the source's buffers, the socket) for as
    // long as it stayed connected; no time-out of the server's applies once the request is read.
    const stats = { chunks: 0, closed: false };
    const { port, request, server } = await serve(() => zipOf(noise(3000), stats), [], { answerStallTimeout: 500 });
    const answers: http.ServerResponse[] = [];
    server.prependListener('request', (_req: http.IncomingMessage, res: http.ServerResponse) => answers.push(res));
    const response = await post(port, request);
    response.pause();
    // Far above the limit, whatever the machine's load: only an answer never ended takes this long.
    for (let i = 0; i < 400 && !answers[0]?.destroyed; i++) await settle(50);
    expect(answers[0]?.destroyed, 'the server closed the stalled connection').toBe(true);
    expect(answers[0]!.writableFinished).toBe(false);
    for (let i = 0; i < 50 && !stats.closed; i++) await settle(20);
    expect(stats.closed, 'the source was ended').toBe(true);
    expect(stats.chunks).toBeLessThan(600); // cut part-way: a few MB of the ~200 MB it would make
    response.destroy();
  });

  it('whose client reads slowly, pausing well under answerStallTimeout, arrives whole', async () => {
    const stats = { chunks: 0, closed: false };
    const lines = ['transactionID,note\n', ...noise(80)]; // about 5 MB of zip: more than the socket's buffers
    const { port, request } = await serve(() => zipOf(lines, stats), [], { answerStallTimeout: 2_000 });
    const response = await post(port, request);
    const parts: Buffer[] = [];
    response.on('data', (part: Buffer) => {
      parts.push(part);
      // A pause after each piece read: the client takes the answer slowly, never stopping for long.
      response.pause();
      setTimeout(() => response.resume(), 20);
    });
    await once(response, 'end');
    const csv = Buffer.from(unzipSync(Buffer.concat(parts))['settlement.csv']!);
    expect(csv.equals(joined(lines)), 'the CSV unzipped is the lines sent').toBe(true);
  });

  it('with a card number in its first chunks is answered as a contract violation, nothing of it sent', async () => {
    const stats = { chunks: 0, closed: false };
    const logged: string[] = [];
    const lines = ['transactionID,paymentCardNumber\n', 'T1,4564710000000004\n', ...noise(3)];
    const { port, request } = await serve(() => zipOf(lines, stats), logged);
    const response = await post(port, request);
    const parts: Buffer[] = [];
    for await (const part of response) parts.push(part as Buffer);
    expect(response.statusCode).toBe(500);
    expect(JSON.parse(Buffer.concat(parts).toString()).responseCode).toBe('-4');
    expect(Buffer.concat(parts).toString()).not.toContain('4564710000000004');
    expect(logged.join('\n')).toContain('A card number appears unmasked in the answer');
  });

  it('with a card number deep inside is cut off: the client never gets a whole file, and the server logs why', async () => {
    const stats = { chunks: 0, closed: false };
    const logged: string[] = [];
    const { port, request } = await serve(
      () =>
        zipOf(
          noise(40, (i) => (i === 30 ? '4564710000000004' : 'x')),
          stats,
        ),
      logged,
    );
    const response = await post(port, request);
    expect(response.statusCode).toBe(200);
    const read = (async () => {
      const parts: Buffer[] = [];
      for await (const part of response) parts.push(part as Buffer);
      return Buffer.concat(parts);
    })();
    await expect(read).rejects.toThrow(/aborted|closed|terminated/i);
    expect(logged.join('\n')).toContain('A card number appears unmasked in the answer');
    expect(stats.closed).toBe(true);
  });
});

it('refuses an answerStallTimeout a timer cannot keep (above 2147483647 ms Node waits 1 ms)', () => {
  const gateway = createGateway({ handlers: echoHandlers(), accounts });
  for (const bad of [3_000_000_000, 0, 1.5])
    expect(() => createNodeHandler(gateway, { answerStallTimeout: bad })).toThrow(
      `answerStallTimeout must be whole milliseconds from 1 to 2147483647, not ${bad}`,
    );
  expect(() => createNodeServer(gateway, { answerStallTimeout: 3_000_000_000 })).toThrow(RangeError);
});
