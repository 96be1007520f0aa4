// PGW_SANDBOX_ALLOWED_ORIGINS: which web pages may call the sandbox from a browser (cors.ts answers
// them). Apart from cors.ts, which needs the operation table, so that the sandbox's --help and its
// banner read the variable without loading the table and the stubs.
import { SettingRefused } from './setting-refused.ts';

export const ORIGINS_ENV = 'PGW_SANDBOX_ALLOWED_ORIGINS';

/** The default: pages of any local server (any port of a loopback host); not the opaque origin. */
const DEFAULT_ORIGINS = 'loopback';
const LOOPBACK = /^http:\/\/(127\.0\.0\.1|localhost|\[::1\])(:\d+)?$/;

export interface OriginPolicy {
  allows(origin: string): boolean;
  /** The list as given, for the banner. */
  readonly text: string;
}

/**
 * Reads PGW_SANDBOX_ALLOWED_ORIGINS: origins separated by commas (https://docs.example.com), `null`
 * (the opaque origin: pages opened from disk, and any sandboxed frame), `loopback` (http on 127.0.0.1,
 * localhost or [::1], any port; the default), `*` (any
 * page: only for a sandbox of test accounts that anyone may use), or `none`. Throws on anything else.
 */
export function originPolicy(value: string | undefined): OriginPolicy {
  const text = value?.trim() || DEFAULT_ORIGINS;
  const entries = text.split(',').map((e) => e.trim());
  for (const entry of entries) {
    if (['null', 'loopback', '*', 'none'].includes(entry)) continue;
    let origin: string | undefined;
    try {
      origin = new URL(entry).origin;
    } catch {}
    if (origin !== entry || !/^https?:/.test(entry))
      throw new SettingRefused(
        ORIGINS_ENV,
        `must list origins (https://docs.example.com: scheme, host and port, no path), null, loopback, * or none; '${entry}' is none of them`,
      );
  }
  const listed = new Set(entries);
  if (listed.has('none') && entries.length > 1) throw new SettingRefused(ORIGINS_ENV, 'cannot list none with others');
  return {
    text,
    allows: (origin) => listed.has('*') || listed.has(origin) || (listed.has('loopback') && LOOPBACK.test(origin)),
  };
}
