// Finds the operation a request is for: by verb and path, then on a shared path by `method`.
import { operations } from './contract.ts';
import { refuse, type Refusal } from './refusals.ts';
import type { ContractOperation } from './types.ts';

interface Route {
  pattern: RegExp;
  names: string[];
  template: string;
  byVerb: Map<string, ContractOperation[]>;
}

export interface Match {
  route: Route;
  params: Record<string, string>;
  candidates: ContractOperation[];
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
    for (const op of operations.filter((o) => o.path === template)) byVerb.set(op.verb, [...(byVerb.get(op.verb) ?? []), op]);
    return { ...compile(template), template, byVerb };
  });

export type RouteResult = { match: Match } | { refusal: Refusal; allow?: string };

export function route(verb: string, pathname: string): RouteResult {
  for (const r of routes) {
    const m = r.pattern.exec(pathname);
    if (!m) continue;
    const candidates = r.byVerb.get(verb.toUpperCase());
    if (!candidates) return { refusal: refuse(-2, `${verb.toUpperCase()} is not an operation of ${r.template}`, 405), allow: [...r.byVerb.keys()].join(', ') };
    let params: Record<string, string>;
    try {
      params = Object.fromEntries(r.names.map((n, i) => [n, decodeURIComponent(m[i + 1]!)]));
    } catch {
      return { refusal: refuse(-2, `The path ${pathname} is not correctly encoded`, 400) };
    }
    return { match: { route: r, params, candidates } };
  }
  return { refusal: refuse(-2, `No operation at ${verb.toUpperCase()} ${pathname}`, 404) };
}

/** On a shared path, the operation the body's `method` names. */
export function chooseMethod(candidates: ContractOperation[], body: unknown): { op: ContractOperation } | { refusal: Refusal } {
  if (candidates.length === 1 && candidates[0]!.method === null) return { op: candidates[0]! };
  const allowed = candidates.map((c) => c.method).join(', ');
  const method = body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>).method : undefined;
  if (method === undefined) return { refusal: refuse(-3, `Field 'method' is required: one of ${allowed}`) };
  const op = candidates.find((c) => c.method === method);
  return op ? { op } : { refusal: refuse(-2, `Field 'method' is invalid: must be one of ${allowed}`) };
}

/** The largest body any operation of this path takes: what an adapter may read before parsing. */
export function readLimit(pathname: string, fallback: number): number {
  const r = routes.find((x) => x.pattern.test(pathname));
  if (!r) return fallback;
  return Math.max(...[...r.byVerb.values()].flat().map((o) => o.maxBodyBytes));
}
