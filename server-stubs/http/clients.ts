// Who a connection's client is, for sharing the server's connections fairly: not its address (one
// machine has an IPv4 and an IPv6 address, and an IPv6 host is given a whole /64 to pick from) but
// its prefix, and room kept for clients that are new.
import { isIPv4, isIPv6 } from 'node:net';
import { ipv6Groups } from '../../runtime/ipv6-groups.ts';

/** How much of an address names one client: IPv4 /32 and IPv6 /64 by default (one host, one IPv6 subnet). */
export interface ClientPrefixes {
  ipv4: number;
  ipv6: number;
}
export const DEFAULT_PREFIXES: ClientPrefixes = { ipv4: 32, ipv6: 64 };

/** An IPv6 address's eight 16-bit groups, its zone dropped; undefined if it is not one. */
function groupsOf(address: string): number[] | undefined {
  return isIPv6(address.replace(/%.*$/, '')) ? ipv6Groups(address) : undefined;
}

/** The first `bits` of a 32-bit IPv4 address, as a dotted quad with its length. */
function v4Prefix(octets: number[], bits: number): string {
  const value = ((octets[0]! << 24) | (octets[1]! << 16) | (octets[2]! << 8) | octets[3]!) >>> 0;
  const kept = bits >= 32 ? value : bits <= 0 ? 0 : (value & ~((2 ** (32 - bits) - 1) >>> 0)) >>> 0;
  return `${[24, 16, 8, 0].map((s) => (kept >>> s) & 255).join('.')}/${bits}`;
}

/**
 * The client a remote address belongs to: its IPv4 /32 (or the prefix given), its IPv6 /64 (or the
 * prefix given). An IPv4-mapped address (::ffff:a.b.c.d, in any spelling) is the IPv4 host it maps:
 * a dual-stack socket shows IPv4 clients that way. An IPv4-compatible one (::a.b.c.d, deprecated since
 * RFC 4291) is not: no socket shows an IPv4 client that way, so it is an IPv6 address like any other,
 * in ::/64, and judging it as the IPv4 host it spells would let one IPv6 client pass for many IPv4 ones.
 * Anything else (no address: a socket already gone) is one client, ''.
 */
export function clientOf(address: string | undefined, prefixes: ClientPrefixes = DEFAULT_PREFIXES): string {
  if (!address) return '';
  if (isIPv4(address)) return v4Prefix(address.split('.').map(Number), prefixes.ipv4);
  const groups = groupsOf(address);
  if (!groups) return address;
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff)
    return v4Prefix([groups[6]! >> 8, groups[6]! & 255, groups[7]! >> 8, groups[7]! & 255], prefixes.ipv4);
  const bits = Math.max(0, Math.min(128, prefixes.ipv6));
  const kept = groups.map((g, i) => {
    const from = i * 16;
    if (bits >= from + 16) return g;
    if (bits <= from) return 0;
    return g & (0xffff << (16 - (bits - from))) & 0xffff;
  });
  return `${kept.map((g) => g.toString(16)).join(':')}/${bits}`;
}

/**
 * The connections each client holds, and whether one more is let in: never past maxConnections (counted
 * here too, however sockets reach the server), never past `perClient` for one client; and past its
 * first `newClientShare`, only while fewer than `maxConnections - keepForNew` are open. So however many
 * clients one machine counts as, the last `keepForNew` connections stay for clients that hold few;
 * an attacker with more prefixes than that can still fill them (a proxy in front limits such a one).
 */
export class ConnectionShares {
  private readonly held = new Map<string, number>();
  private open = 0;
  private readonly limits: { maxConnections: number; perClient: number; keepForNew: number; newClientShare: number };
  private readonly prefixes: ClientPrefixes;

  constructor(limits: ConnectionShares['limits'], prefixes: ClientPrefixes = DEFAULT_PREFIXES) {
    this.limits = limits;
    this.prefixes = prefixes;
  }

  /** The client's key if a connection from this address is let in (then counted), else undefined. */
  admit(address: string | undefined): string | undefined {
    const client = clientOf(address, this.prefixes);
    const holds = this.held.get(client) ?? 0;
    const { maxConnections, perClient, keepForNew, newClientShare } = this.limits;
    if (this.open >= maxConnections || holds >= perClient) return undefined;
    if (holds >= newClientShare && this.open >= maxConnections - keepForNew) return undefined;
    this.held.set(client, holds + 1);
    this.open++;
    return client;
  }

  /** A connection of this client closed. */
  release(client: string): void {
    const left = (this.held.get(client) ?? 1) - 1;
    if (left > 0) this.held.set(client, left);
    else this.held.delete(client);
    this.open = Math.max(0, this.open - 1);
  }

  /** Connections open, and how many the client of this address holds. */
  holding(address?: string): { open: number; client: number } {
    return {
      open: this.open,
      client: address === undefined ? 0 : (this.held.get(clientOf(address, this.prefixes)) ?? 0),
    };
  }
}
