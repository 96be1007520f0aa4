// Where the sandbox will POST a notification. A notification URL comes from a request, so without a
// policy the sandbox would POST wherever a caller points it: its own cloud metadata service
// (169.254.169.254), a database on the private network. The policy (OWASP SSRF prevention):
// - http and https only;
// - no private (10/8, 172.16/12, 192.168/16, fc00::/7), link-local (169.254/16, fe80::/10),
//   carrier-grade NAT (100.64/10), unspecified, multicast or reserved addresses;
// - loopback (127/8, ::1, localhost) allowed, because a developer's own test server is there.
// PGW_SANDBOX_NOTIFY_PRIVATE=allow lifts the private and link-local rule (a sandbox on a private
// network notifying its neighbours); PGW_SANDBOX_NOTIFY_LOOPBACK=deny forbids loopback too.
// A literal address is refused with the request (-2 naming the field); a host name is resolved when
// the notification is sent, and not sent when any address it resolves to is forbidden (so a name that
// points inside cannot get round the rule).
import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

/** The request fields that name where a notification goes (the spec's notifyURL and batchNotifyURL). */
export const NOTIFY_URL_FIELDS = ['notifyURL', 'batchNotifyURL'] as const;

export interface UrlPolicy {
  allowPrivate: boolean;
  allowLoopback: boolean;
}

export const policyFromEnv = (env: NodeJS.ProcessEnv): UrlPolicy => ({
  allowPrivate: env.PGW_SANDBOX_NOTIFY_PRIVATE === 'allow',
  allowLoopback: env.PGW_SANDBOX_NOTIFY_LOOPBACK !== 'deny',
});

const loopback = new BlockList();
loopback.addSubnet('127.0.0.0', 8, 'ipv4');
loopback.addAddress('::1', 'ipv6');

const privateOrLinkLocal = new BlockList();
for (const [net, bits] of [
  ['10.0.0.0', 8],
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
  ['169.254.0.0', 16],
  ['100.64.0.0', 10],
] as const)
  privateOrLinkLocal.addSubnet(net, bits, 'ipv4');
for (const [net, bits] of [
  ['fc00::', 7],
  ['fe80::', 10],
] as const)
  privateOrLinkLocal.addSubnet(net, bits, 'ipv6');

const never = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  never.addSubnet(net, bits, 'ipv4');
for (const [net, bits] of [
  ['::', 128],
  ['ff00::', 8],
] as const)
  never.addSubnet(net, bits, 'ipv6');

/** Why this address may not be notified, or undefined when it may. */
export function addressRefusal(address: string, policy: UrlPolicy): string | undefined {
  let ip = address.replace(/^\[|\]$/g, '');
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) ip = mapped[1]!;
  const family = isIP(ip) === 6 ? 'ipv6' : 'ipv4';
  if (never.check(ip, family)) return 'must not point to an unspecified, multicast or reserved address';
  if (loopback.check(ip, family)) return policy.allowLoopback ? undefined : 'must not point to a loopback address';
  if (privateOrLinkLocal.check(ip, family) && !policy.allowPrivate)
    return 'must not point to a private or link-local address';
  return undefined;
}

/** Why this URL may not be notified, judged on what it says (a literal address); undefined when it may. */
export function urlRefusal(url: string, policy: UrlPolicy): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'must be an absolute URL';
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return 'must be an http or https URL';
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host)) return addressRefusal(host, policy);
  if (host === 'localhost' || host.endsWith('.localhost'))
    return policy.allowLoopback ? undefined : 'must not point to a loopback address';
  return undefined;
}

/** Whether a notification may be sent to this URL now: its host resolved, every address allowed. */
export async function mayNotify(
  url: string,
  policy: UrlPolicy,
  resolve: (host: string) => Promise<string[]> = resolveAll,
): Promise<boolean> {
  if (urlRefusal(url, policy)) return false;
  const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
  if (isIP(host)) return true;
  let addresses: string[];
  try {
    addresses = await resolve(host);
  } catch {
    return true; // a name that does not resolve cannot be connected to: the send fails on its own
  }
  return addresses.every((a) => addressRefusal(a, policy) === undefined);
}

const resolveAll = async (host: string) => (await lookup(host, { all: true })).map((a) => a.address);
