// Where the sandbox will POST a notification. A notification URL comes from a request, so without a
// policy the sandbox would POST wherever a caller points it: its own cloud metadata service
// (169.254.169.254), a database on the private network. The policy (OWASP SSRF prevention):
// - http and https only;
// - no address of the IANA special-purpose registries (IPv4: RFC 6890 and updates; IPv6: the same
//   for IPv6): private (10/8, 172.16/12, 192.168/16, fc00::/7), link-local (169.254/16, fe80::/10),
//   carrier-grade NAT (100.64/10), unspecified, multicast, documentation, benchmarking, reserved;
// - an IPv6 address that embeds an IPv4 one (v4-mapped ::ffff:a.b.c.d, v4-compatible ::a.b.c.d,
//   SIIT ::ffff:0:a.b.c.d, NAT64 64:ff9b::/96, 6to4 2002::/16) is judged by the IPv4 address it
//   embeds; Teredo (2001::/32) and the rest of 2001::/23 are refused (tunnels and protocol assignments);
// - loopback (127/8, ::1, localhost) allowed, because a developer's own test server is there.
// PGW_SANDBOX_NOTIFY_PRIVATE=allow lifts the private and link-local rule (a sandbox on a private
// network notifying its neighbours); PGW_SANDBOX_NOTIFY_LOOPBACK=deny forbids loopback too.
//
// A literal address is refused with the request (-2 naming the field), wherever a URL enters (the
// gateway's fields, the control API's). When a notification is sent, its host is resolved, every
// address is held to the policy, and the connection goes to an address so checked (no second lookup
// a rebinding name could answer differently); redirects are not followed (notifier.ts).
import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { ipv6Groups } from '../runtime/ipv6-groups.ts';

/** The request fields that name where a notification goes (the spec's notifyURL and batchNotifyURL). */
export const NOTIFY_URL_FIELDS = ['notifyURL', 'batchNotifyURL'] as const;

export interface UrlPolicy {
  allowPrivate: boolean;
  allowLoopback: boolean;
}

/** A host name's addresses. The sandbox asks the system's resolver; tests give a stub. */
export type Resolve = (host: string) => Promise<string[]>;

export const policyFromEnv = (env: NodeJS.ProcessEnv): UrlPolicy => ({
  allowPrivate: env.PGW_SANDBOX_NOTIFY_PRIVATE === 'allow',
  allowLoopback: env.PGW_SANDBOX_NOTIFY_LOOPBACK !== 'deny',
});

type Kind = 'loopback' | 'private' | 'reserved';

const REFUSALS: Record<Kind, string> = {
  loopback: 'must not point to a loopback address',
  private: 'must not point to a private or link-local address',
  reserved: 'must not point to an unspecified, multicast or reserved address',
};

/** The IANA IPv4 special-purpose address registry, and the multicast and reserved blocks. */
const V4: [string, number, Kind][] = [
  ['0.0.0.0', 8, 'reserved'], // "this network"
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'private'], // shared address space (carrier-grade NAT)
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'private'], // link-local: cloud metadata services live here
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'reserved'], // IETF protocol assignments
  ['192.0.2.0', 24, 'reserved'], // TEST-NET-1
  ['192.31.196.0', 24, 'reserved'], // AS112-v4
  ['192.52.193.0', 24, 'reserved'], // AMT
  ['192.88.99.0', 24, 'reserved'], // deprecated 6to4 relay anycast
  ['192.168.0.0', 16, 'private'],
  ['192.175.48.0', 24, 'reserved'], // direct delegation AS112
  ['198.18.0.0', 15, 'reserved'], // benchmarking
  ['198.51.100.0', 24, 'reserved'], // TEST-NET-2
  ['203.0.113.0', 24, 'reserved'], // TEST-NET-3
  ['224.0.0.0', 4, 'reserved'], // multicast
  ['240.0.0.0', 4, 'reserved'], // reserved, and the limited broadcast 255.255.255.255
];

/** The IANA IPv6 special-purpose address registry (the forms that embed IPv4 are judged by it, below). */
const V6: [string, number, Kind][] = [
  ['::', 128, 'reserved'], // unspecified
  ['::1', 128, 'loopback'],
  ['64:ff9b:1::', 48, 'reserved'], // local-use IPv4/IPv6 translation
  ['100::', 64, 'reserved'], // discard-only
  ['2001::', 23, 'reserved'], // IETF protocol assignments: Teredo 2001::/32, ORCHID, benchmarking...
  ['2001:db8::', 32, 'reserved'], // documentation
  ['3fff::', 20, 'reserved'], // documentation
  ['5f00::', 16, 'reserved'], // segment routing SIDs
  ['fc00::', 7, 'private'], // unique local
  ['fe80::', 10, 'private'], // link-local
  ['fec0::', 10, 'private'], // deprecated site-local
  ['ff00::', 8, 'reserved'], // multicast
];

const blocks = (entries: [string, number, Kind][], family: 'ipv4' | 'ipv6') => {
  const lists = { loopback: new BlockList(), private: new BlockList(), reserved: new BlockList() };
  for (const [net, bits, kind] of entries) lists[kind].addSubnet(net, bits, family);
  return lists;
};
const V4_BLOCKS = blocks(V4, 'ipv4');
const V6_BLOCKS = blocks(V6, 'ipv6');

function kindOf(ip: string, family: 'ipv4' | 'ipv6'): Kind | undefined {
  const lists = family === 'ipv4' ? V4_BLOCKS : V6_BLOCKS;
  for (const kind of ['reserved', 'loopback', 'private'] as const) if (lists[kind].check(ip, family)) return kind;
  return undefined;
}

const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;

/**
 * The IPv4 address an IPv6 one stands for, and whether it reaches that host itself (mapped and
 * compatible forms: the socket connects to the IPv4 host) or a translator in front of it.
 */
function embeddedV4(groups: number[]): { ip: string; direct: boolean } | undefined {
  const [g0, g1, g2, g3, g4, g5, g6, g7] = groups as [number, number, number, number, number, number, number, number];
  const zeroTo = (n: number) => groups.slice(0, n).every((g) => g === 0);
  if (zeroTo(5) && g5 === 0xffff) return { ip: v4(g6, g7), direct: true }; // ::ffff:a.b.c.d
  if (zeroTo(6) && (g6 !== 0 || g7 > 1)) return { ip: v4(g6, g7), direct: true }; // ::a.b.c.d (deprecated)
  if (zeroTo(4) && g4 === 0xffff && g5 === 0) return { ip: v4(g6, g7), direct: false }; // SIIT ::ffff:0:a.b.c.d
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0)
    return { ip: v4(g6, g7), direct: false }; // NAT64 64:ff9b::/96
  if (g0 === 0x2002) return { ip: v4(g1, g2), direct: false }; // 6to4 2002:AABB:CCDD::/48
  return undefined;
}

/** Why this address may not be notified, or undefined when it may. */
export function addressRefusal(address: string, policy: UrlPolicy): string | undefined {
  const ip = address.replace(/^\[|\]$/g, '');
  const version = isIP(ip.replace(/%.*$/, ''));
  if (version === 0) return REFUSALS.reserved;
  let kind: Kind | undefined;
  if (version === 4) kind = kindOf(ip, 'ipv4');
  else {
    const groups = ipv6Groups(ip);
    const embedded = embeddedV4(groups);
    if (embedded) {
      const inner = kindOf(embedded.ip, 'ipv4');
      // Through a translator, even the IPv4 loopback is some other host's: refused outright.
      kind = inner && !embedded.direct ? 'reserved' : inner;
    } else kind = kindOf(groups.map((g) => g.toString(16)).join(':'), 'ipv6');
  }
  if (kind === undefined) return undefined;
  if (kind === 'loopback' && policy.allowLoopback) return undefined;
  if (kind === 'private' && policy.allowPrivate) return undefined;
  return REFUSALS[kind];
}

/** The URL's host as an address or a name (brackets and a final dot dropped), or a refusal of its form. */
function hostOf(url: string): { host: string } | { refusal: string } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { refusal: 'must be an absolute URL' };
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return { refusal: 'must be an http or https URL' };
  // The WHATWG parser has already read 0x7f.1, 2130706433 and 127.1 as 127.0.0.1.
  return { host: parsed.hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '') };
}

/** Why this URL may not be notified, judged on what it says (a literal address); undefined when it may. */
export function urlRefusal(url: string, policy: UrlPolicy): string | undefined {
  const host = hostOf(url);
  if ('refusal' in host) return host.refusal;
  if (isIP(host.host)) return addressRefusal(host.host, policy);
  const name = host.host.toLowerCase();
  if (name === 'localhost' || name.endsWith('.localhost')) return policy.allowLoopback ? undefined : REFUSALS.loopback;
  return undefined;
}

/** Why a body's notification URL fields may not be notified: the first field refused, with the reason. */
export function notifyFieldRefusal(body: unknown, policy: UrlPolicy): { field: string; why: string } | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  for (const field of NOTIFY_URL_FIELDS) {
    const value = (body as Record<string, unknown>)[field];
    const why = typeof value === 'string' ? urlRefusal(value, policy) : undefined;
    if (why) return { field, why };
  }
  return undefined;
}

/**
 * The addresses a notification to this URL may connect to now: its host resolved, every address
 * allowed (one forbidden address refuses the name: a name that points inside cannot get round the
 * rule). Without a resolver (a test's own send decides where it connects) the name stands as it is.
 */
export async function addressesToNotify(
  url: string,
  policy: UrlPolicy,
  resolve: Resolve | undefined,
): Promise<{ addresses: string[] } | { refusal: string }> {
  const literal = urlRefusal(url, policy);
  if (literal) return { refusal: literal };
  const { host } = hostOf(url) as { host: string };
  if (isIP(host)) return { addresses: [host] };
  if (!resolve) return { addresses: [host] };
  let addresses: string[];
  try {
    addresses = await resolve(host);
  } catch {
    return { refusal: 'its host does not resolve' };
  }
  if (!addresses.length) return { refusal: 'its host does not resolve' };
  for (const a of addresses) {
    const why = addressRefusal(a, policy);
    if (why) return { refusal: `${why} (its host resolves to ${a})` };
  }
  return { addresses };
}

/**
 * A resolver that asks `resolve` once for each name and gives its answer again: one delivery run's
 * (notifier.ts). An advance of the clock makes every retry that falls due within its span in one run,
 * milliseconds apart: each asked the system's resolver again, and a name that does not exist, asked
 * of the network, takes about a second each time (five retries, five seconds, an advance's whole
 * wait). Kept: the addresses, and the answer that the name does not exist (ENOTFOUND). Not kept: a
 * failure that passes (EAI_AGAIN, a time-out), which the run's next attempt asks again, as attempts
 * minutes apart would. The addresses are still held to the policy, and the connection made to one of
 * them; the next run resolves the name again.
 */
export function resolvingOnce(resolve: Resolve): Resolve {
  const answers = new Map<string, Promise<string[]>>();
  return (host) => {
    let answer = answers.get(host);
    if (!answer) {
      answer = resolve(host);
      answers.set(host, answer);
      answer.catch((error: { code?: unknown }) => {
        if (error?.code !== 'ENOTFOUND') answers.delete(host);
      });
    }
    return answer;
  };
}

/** The system resolver: every address of the name, IPv4 and IPv6. */
export const resolveAll: Resolve = async (host) => (await lookup(host, { all: true })).map((a) => a.address);
