// Finds the operation a request is for: by verb and path, then on a shared path by `method`.
import type { Protocol } from '../../runtime/protocols/protocol.ts';
import { methodInPath, operations, protocols } from './contract.ts';
import { refusals, type Refusal } from './refusals.ts';
import type { ContractOperation } from './types.ts';

interface Route {
  pattern: RegExp;
  names: string[];
  template: string;
  byVerb: Map<string, ContractOperation[]>;
  /** The largest body any operation of the path takes. */
  readLimit: number;
  /** The smallest: what is read before the body has named its method. */
  baseLimit: number;
  /** The methods of the path that take more than baseLimit, with their limits. */
  raised: Map<string, number>;
  /** The methods the body may name at the path (its operations' `method`). */
  methods: Set<string>;
  /** The protocols that serve the path (x-wire-formats), the spec's own first. */
  served: readonly Protocol[];
}

export interface Match {
  route: Route;
  params: Record<string, string>;
  candidates: ContractOperation[];
  /** The method a path such as /token/processCard names (x-method-in-path). */
  pathMethod?: string;
}

/** A path template's pattern, its parameters captured in order. */
export function compile(template: string): { pattern: RegExp; names: string[] } {
  const names: string[] = [];
  const source = template
    .split('/')
    .map((segment) => {
      const param = /^\{(.+)\}$/.exec(segment);
      if (!param) return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      names.push(param[1]!);
      return '([^/]+)';
    })
    .join('/');
  return { pattern: new RegExp(`^${source}/?$`), names };
}

/** Literal paths first, so that /payout/{id}/status never shadows a literal sibling. */
const routes: Route[] = [...new Set(operations.map((o) => o.path))]
  .sort((a, b) => (a.match(/\{/g)?.length ?? 0) - (b.match(/\{/g)?.length ?? 0))
  .map((template) => {
    const byVerb = new Map<string, ContractOperation[]>();
    const ops = operations.filter((o) => o.path === template);
    for (const op of ops) byVerb.set(op.verb, [...(byVerb.get(op.verb) ?? []), op]);
    const baseLimit = Math.min(...ops.map((o) => o.maxBodyBytes));
    const raised = new Map(
      ops.filter((o) => o.method && o.maxBodyBytes > baseLimit).map((o) => [String(o.method), o.maxBodyBytes]),
    );
    return {
      ...compile(template),
      template,
      byVerb,
      readLimit: Math.max(...ops.map((o) => o.maxBodyBytes)),
      baseLimit,
      raised,
      methods: new Set(ops.filter((o) => o.method).map((o) => String(o.method))),
      served: protocols.servedAt(template),
    };
  });
// A literal path is found by one lookup, with or without a trailing slash. Templates are matched
// only against those with as many segments as the path: at most four patterns, not fifteen.
const literal = new Map(
  routes
    .filter((r) => !r.names.length)
    .flatMap((r) => [
      [r.template, r],
      [`${r.template}/`, r],
    ]),
);
const segments = (path: string) => {
  let n = 0;
  for (let i = 0; i < path.length - 1; i++) if (path.charCodeAt(i) === 47 /* / */) n++;
  return n;
};
const templated = new Map<number, Route[]>();
for (const r of routes.filter((r) => r.names.length))
  templated.set(segments(r.template), [...(templated.get(segments(r.template)) ?? []), r]);

type Found = { route: Route; m: RegExpExecArray | null; pathMethod?: string } | undefined;
// POST /token/processCard is /token with the method in the path (x-method-in-path). ActiveMerchant
// joins '/token/' and the method with '/', so /token//processCard is the same path.
const byMethodPath = methodInPath.map((path) => ({
  pattern: new RegExp(`^${path}/+([A-Za-z]+)/?$`),
  route: literal.get(path)!,
}));
// The adapter asks for a path's read limit, then the core routes the same path: remember the last.
let last: { pathname: string; found: Found } = { pathname: '', found: undefined };

function find(pathname: string): Found {
  if (pathname === last.pathname) return last.found;
  let found: Found;
  const known = literal.get(pathname);
  if (known) found = { route: known, m: null };
  else {
    for (const route of templated.get(segments(pathname)) ?? []) {
      const m = route.pattern.exec(pathname);
      if (m) {
        found = { route, m };
        break;
      }
    }
    for (let i = 0; !found && i < byMethodPath.length; i++) {
      const named = byMethodPath[i]!.pattern.exec(pathname)?.[1];
      if (named) found = { route: byMethodPath[i]!.route, m: null, pathMethod: named };
    }
  }
  // A base URL that ends in `/` joined with a path that starts with one (`http://host/` + `/post/`, a
  // scenario's `/_scenario/NAME/` + `/post/`): the leading slashes are read as one. Only those: inside
  // a path, `//` is an empty parameter, which must not make another operation's path.
  if (!found && pathname.startsWith('//')) found = find(pathname.replace(/^\/+/, '/'));
  last = { pathname, found };
  return found;
}

export type RouteResult = { match: Match } | { refusal: Refusal; allow?: string };

export function route(verb: string, pathname: string): RouteResult {
  const found = find(pathname);
  if (!found) return { refusal: refusals.noOperation(verb, pathname) };
  const { route: r, m } = found;
  const candidates = r.byVerb.get(verb) ?? r.byVerb.get(verb.toUpperCase());
  if (!candidates)
    return { refusal: refusals.verbNotAllowed(verb, r.template), allow: [...r.byVerb.keys()].join(', ') };
  const params: Record<string, string> = {};
  try {
    for (let i = 0; i < r.names.length; i++) {
      const sent = m![i + 1]!;
      // Without a `%` there is nothing to decode (decodeURIComponent would answer the same text).
      params[r.names[i]!] = sent.includes('%') ? decodeURIComponent(sent) : sent;
    }
  } catch {
    return { refusal: refusals.badPathEncoding(pathname) };
  }
  return {
    match: found.pathMethod
      ? { route: r, params, candidates, pathMethod: found.pathMethod }
      : { route: r, params, candidates },
  };
}

// On a shared path: its operations by `method`, and the allowed values as a refusal names them.
const methods = new Map<readonly ContractOperation[], { byMethod: Map<unknown, ContractOperation>; allowed: string }>();
for (const r of routes) {
  for (const candidates of r.byVerb.values()) {
    methods.set(candidates, {
      byMethod: new Map(candidates.map((c) => [c.method, c])),
      allowed: candidates.map((c) => c.method).join(', '),
    });
  }
}

/** On a shared path, the operation the body's `method` names, or the path's (x-method-in-path). */
export function chooseMethod(
  candidates: ContractOperation[],
  body: unknown,
  pathMethod?: string,
): { op: ContractOperation } | { refusal: Refusal } {
  if (candidates.length === 1 && candidates[0]!.method === null) return { op: candidates[0]! };
  const { byMethod, allowed } = methods.get(candidates)!;
  const sent =
    body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>).method : undefined;
  if (pathMethod !== undefined && !byMethod.has(pathMethod)) return { refusal: refusals.methodInvalid(allowed) };
  if (pathMethod !== undefined && sent !== undefined && sent !== pathMethod)
    return { refusal: refusals.methodNotThePath(pathMethod) };
  const method = sent ?? pathMethod;
  if (method === undefined) return { refusal: refusals.methodRequired(allowed) };
  const op = method === null ? undefined : byMethod.get(method);
  return op ? { op } : { refusal: refusals.methodInvalid(allowed) };
}

/** For a path such as /token/processCard (x-method-in-path): the shared path and the method it names. */
export function methodPath(pathname: string): { path: string; method: string } | undefined {
  for (const { pattern, route } of byMethodPath) {
    const method = pattern.exec(pathname)?.[1];
    if (method) return { path: route.template, method };
  }
  return undefined;
}

/** The protocols that serve this path (x-wire-formats); undefined when no operation is at it. */
export const servedAt = (pathname: string): readonly Protocol[] | undefined => find(pathname)?.route.served;

/** Whether any operation of the contract is at this path. */
export const knows = (pathname: string): boolean => find(pathname) !== undefined;

/**
 * How much of a body to read: the path's smallest limit until the body has named its method, then
 * that method's (processBatch on /post: 16 MiB, every other method 1 MiB). A body larger than the
 * smallest limit must name its method within it; every client writes `method` first. The core
 * checks the limit of the method it routes to again once the body is parsed.
 */
export function bodyLimit(pathname: string, fallback: number, head?: string): number {
  const found = find(pathname);
  if (!found) return fallback;
  if (head === undefined && found.pathMethod === undefined) return found.route.baseLimit;
  return namedLimit(pathname, head ?? '') ?? found.route.baseLimit;
}

/**
 * The limit of the method a body's first bytes (`head`, as latin1 text) name, or of the method the
 * path names (/token/processCard); undefined while they name no method of the path, so that an
 * adapter can tell "named a method of the smallest limit" from "named nothing yet". A name that
 * ends the head may be cut short (`method=processBat…` in a form) and is not taken until more is
 * read. A hint for the read only: the core checks the routed method's limit again once the body is read.
 */
export function namedLimit(pathname: string, head: string): number | undefined {
  const found = find(pathname);
  if (!found) return undefined;
  const r = found.route;
  if (found.pathMethod !== undefined) return r.raised.get(found.pathMethod) ?? r.baseLimit;
  if (!r.raised.size) return r.baseLimit;
  let method: string | undefined;
  for (let i = 0; method === undefined && i < r.served.length; i++) method = r.served[i]!.peek(head, 'method');
  if (method === undefined || !r.methods.has(method) || head.endsWith(method)) return undefined;
  return r.raised.get(method) ?? r.baseLimit;
}

/** The largest body any operation of this path takes: what an adapter may read before parsing. */
export function readLimit(pathname: string, fallback: number): number {
  return find(pathname)?.route.readLimit ?? fallback;
}
