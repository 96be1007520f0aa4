// Which host names the sandbox answers to (the Host header). A web page whose name an attacker makes
// resolve to 127.0.0.1 (DNS rebinding) reaches a developer's local sandbox as its own origin: the
// browser asks no CORS question, and the page reads every answer. What such a request cannot change is
// the name it was sent to: the Host header names the attacker's domain. So the sandbox answers only
// requests that name it by a loopback name (localhost and *.localhost, RFC 6761; 127.0.0.0/8; [::1]),
// by the address it was told to listen on, or by a name PGW_SANDBOX_ALLOWED_HOSTS lists (a shared
// deployment's public name); any other is refused 403, -2 naming the Host header. The health check
// (/_sandbox/health) answers any name: load balancers ask by address, and it holds no data.
import { isIPv4 } from 'node:net';
import { SettingRefused } from './setting-refused.ts';

export const HOSTS_ENV = 'PGW_SANDBOX_ALLOWED_HOSTS';

export interface HostPolicy {
  allows(host: string | undefined): boolean;
  /** The list in force, for the banner. */
  readonly text: string;
}

/** A Host header's name: lower case, its port and one trailing dot dropped ([::1]:4010 → [::1]). */
export function hostName(header: string): string {
  const text = header.trim().toLowerCase();
  const name = text.startsWith('[') ? text.slice(0, text.indexOf(']') + 1) : text.replace(/:\d*$/, '');
  return name.endsWith('.') ? name.slice(0, -1) : name;
}

const isLoopback = (name: string) =>
  name === 'localhost' || name.endsWith('.localhost') || name === '[::1]' || (isIPv4(name) && name.startsWith('127.'));

/** A name PGW_SANDBOX_ALLOWED_HOSTS may list: a host name or an IP address, no scheme, port or path. */
const NAME = /^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$|^\[[0-9a-f:.]+\]$/;

/**
 * Reads PGW_SANDBOX_ALLOWED_HOSTS: names separated by commas (sandbox.example.com, 10.0.0.5,
 * [2001:db8::5]), `*.example.com` (any name under it), `*` (any host: only where nothing on the
 * machine's network can be tricked into sending to it). Loopback names are always allowed, and so is
 * each name of `listening` (the address given to --host). Throws on anything else.
 */
export function hostPolicy(value: string | undefined, listening: readonly string[] = []): HostPolicy {
  const entries = (value ?? '')
    .split(',')
    .map((e) => e.trim().toLowerCase())
    .filter(Boolean);
  for (const entry of entries) {
    if (entry === '*' || NAME.test(entry.replace(/^\*\./, ''))) continue;
    throw new SettingRefused(
      HOSTS_ENV,
      `must list host names (sandbox.example.com, *.example.com: no scheme, port or path), addresses or *; '${entry}' is none of them`,
    );
  }
  const exact = new Set([...entries, ...listening.map(hostName)].filter((e) => !e.startsWith('*')));
  const suffixes = entries.filter((e) => e.startsWith('*.')).map((e) => e.slice(1));
  const any = entries.includes('*');
  return {
    text: any ? 'any host name' : ['loopback names', ...exact, ...suffixes.map((s) => `*${s}`)].join(', '),
    allows: (header) => {
      if (any) return true;
      if (header === undefined) return false;
      const name = hostName(header);
      return isLoopback(name) || exact.has(name) || suffixes.some((s) => name.endsWith(s) && name.length > s.length);
    },
  };
}
