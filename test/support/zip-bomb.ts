// Zip bombs for the tests that refuse them: one CSV entry of a header and one line repeated, deflated
// by node:zlib (native) where fflate's zipSync (JavaScript) took 3.9 s of CPU for 150 MB at level 9.
// The zip is laid out as zipSync lays it out (a local header holding the CRC-32 and both sizes, the
// deflated bytes, one central directory entry, the end record), so a reader meets the same zip.
import zlib from 'node:zlib';

/**
 * `size` bytes: `header` and a newline, then `line` repeated as many whole times as fit, the rest
 * zeros (as the tests filled it before, a line at a time). Filled natively.
 */
export function repeatedLines(size: number, header: string, line: string): Uint8Array {
  const bytes = Buffer.alloc(size);
  const head = Buffer.from(`${header}\n`);
  const one = Buffer.from(line);
  head.copy(bytes);
  const whole = Math.floor((size - head.length) / one.length);
  bytes.fill(one, head.length, head.length + whole * one.length);
  return bytes;
}

/** A zip of one entry, `data` deflated at `level` (zipSync's layout: sizes in the local header, no data descriptor). */
export function zipOne(name: string, data: Uint8Array, level: number): Uint8Array {
  const deflated = zlib.deflateRawSync(data, { level });
  const file = Buffer.from(name);
  const crc = zlib.crc32(data);
  // 1980-01-01 00:00: a fixed time, as no test reads it.
  const time = 0;
  const date = (0 << 9) | (1 << 5) | 1;
  // What the local header and the central directory's entry both say, from `at` in each: the version
  // needed (2.0, deflate), no flags, deflate, the time, the CRC-32, both sizes, the name's length.
  const describe = (header: Buffer, at: number) => {
    header.writeUInt16LE(20, at);
    header.writeUInt16LE(0, at + 2);
    header.writeUInt16LE(8, at + 4);
    header.writeUInt16LE(time, at + 6);
    header.writeUInt16LE(date, at + 8);
    header.writeUInt32LE(crc, at + 10);
    header.writeUInt32LE(deflated.length, at + 14);
    header.writeUInt32LE(data.length, at + 18);
    header.writeUInt16LE(file.length, at + 22);
  };
  const local = Buffer.alloc(30);
  local.writeUInt32LE(0x04034b50, 0);
  describe(local, 4);
  // no extra field
  const central = Buffer.alloc(46);
  central.writeUInt32LE(0x02014b50, 0);
  central.writeUInt16LE(20, 4); // made by
  describe(central, 6);
  // extra, comment, disk, internal and external attributes: 0; the local header at offset 0.
  central.writeUInt32LE(0, 42);
  const directoryAt = local.length + file.length + deflated.length;
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(1, 8);
  end.writeUInt16LE(1, 10);
  end.writeUInt32LE(central.length + file.length, 12);
  end.writeUInt32LE(directoryAt, 16);
  return Buffer.concat([local, file, deflated, central, file, end]);
}
