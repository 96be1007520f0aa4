// Addresses the notification policy refuses, and every way a URL can write one: shared by the
// address-policy tests and the fuzz run.
import fc from 'fast-check';

/** IPv4 special-purpose blocks the policy refuses (loopback aside: allowed by default). */
export const V4_FORBIDDEN: [string, number][] = [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
];
const toInt = (ip: string) => ip.split('.').reduce((n, o) => n * 256 + Number(o), 0);
const toDotted = (n: number) => [24, 16, 8, 0].map((s) => Math.floor(n / 2 ** s) % 256).join('.');
export const inBlock = ([net, bits]: [string, number]) =>
  fc.integer({ min: 0, max: 2 ** (32 - bits) - 1 }).map((offset) => toDotted(toInt(net) + offset));
const hex = (n: number) => n.toString(16);
const halves = (ip: string) => {
  const n = toInt(ip);
  return [hex(Math.floor(n / 65536)), hex(n % 65536)];
};

/** Every way a URL can name this IPv4 address, directly or embedded in IPv6. */
export const SPELLINGS: ((ip: string) => string)[] = [
  (ip) => ip,
  (ip) => String(toInt(ip)),
  (ip) => `0x${toInt(ip).toString(16)}`,
  (ip) => `[::ffff:${ip}]`,
  (ip) => `[::FFFF:${halves(ip).join(':')}]`,
  (ip) => `[0:0:0:0:0:ffff:${ip}]`,
  (ip) =>
    `[0000:0000:0000:0000:0000:ffff:${halves(ip)
      .map((h) => h.padStart(4, '0'))
      .join(':')}]`,
  (ip) => `[::${ip}]`,
  (ip) => `[::ffff:0:${ip}]`,
  (ip) => `[64:ff9b::${ip}]`,
  (ip) => `[64:ff9b::${halves(ip).join(':')}]`,
  (ip) => `[2002:${halves(ip).join(':')}::1]`,
  (ip) => `[2002:${halves(ip).join(':')}:ffff::]`,
];
