// Which web pages may call the sandbox from a browser (CORS): the docs' try-it console sends signed
// requests with the contract's own headers, so every call is preflighted. The docs the sandbox serves
// itself (/docs) are of its own origin and need nothing; a page served by another local server
// (`payment-gateway docs`) sends a loopback origin, allowed by default. The opaque origin ("null") is
// not: a file opened from disk sends it, but so does any sandboxed iframe or data: URL any web page
// makes, so trusting it trusts every page. PGW_SANDBOX_ALLOWED_ORIGINS=null,loopback opens it, for the
// docs opened from disk (docs/DEPLOY.md); a shared deployment lists its docs' origin.
// CORS only tells a browser what it may read: every request is still checked by the validating
// stubs as any other, credentials and hashes included.
import type http from 'node:http';
import { apiVersion, operations } from '../generated/operations.ts';
import { scenarios } from '../generated/scenarios.ts';
import { ORIGINS_ENV, type OriginPolicy } from './origins.ts';
import { sandboxRefusals, refused } from './refusals.ts';

export { ORIGINS_ENV, type OriginPolicy, originPolicy } from './origins.ts';

/** What a preflight may ask for: the contract's verbs and request headers, nothing else. */
const ALLOWED_METHODS = [...new Set(operations.map((o) => o.verb))].join(', ');
const ALLOWED_HEADERS = [
  'content-type',
  apiVersion.name,
  ...new Set(operations.flatMap((o) => Object.values(o.headers ?? {}) as string[])),
  // A request's scenario (x-sandbox-scenarios), and the control API's Basic credentials (the request log).
  scenarios.header,
  'authorization',
].join(', ');
/** How long a browser may keep a preflight's answer, in seconds. */
const PREFLIGHT_MAX_AGE = 600;

/**
 * Answers a preflight (true: answered) and marks an allowed origin's answers readable. A preflight
 * from an origin not allowed is refused 403 with the gateway's -2 naming the Origin header; any other
 * request goes on unmarked, so the browser keeps its answer from the page.
 */
export function corsFor(policy: OriginPolicy): (req: http.IncomingMessage, res: http.ServerResponse) => boolean {
  return (req, res) => {
    const origin = req.headers.origin;
    if (origin === undefined) return false;
    const preflight = req.method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined;
    const allowed = policy.allows(origin);
    if (allowed) {
      res.setHeader('access-control-allow-origin', origin);
      res.setHeader('vary', 'Origin');
    }
    if (!preflight) return false;
    if (!allowed) {
      const body = JSON.stringify(refused(sandboxRefusals.originNotAllowed(ORIGINS_ENV)));
      res.writeHead(403, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(body);
      return true;
    }
    res
      .writeHead(204, {
        'access-control-allow-methods': ALLOWED_METHODS,
        'access-control-allow-headers': ALLOWED_HEADERS,
        'access-control-max-age': String(PREFLIGHT_MAX_AGE),
      })
      .end();
    return true;
  };
}
