// Reads the contract's own extensions (x-methods, x-operation, x-hash-recipes) out of a bundled
// document into one table of operations. Every generator and test works from this table, so what
// an operation is (its request, result, hashes, examples, provenance) is read in one place.
import { deref, exampleValue, resolvePointer, type Doc, type DocNode } from '../../runtime/document.ts';
import type { HashRecipes } from '../../runtime/signing.ts';

export { exampleValue, resolvePointer, type Doc, type DocNode };

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export interface HashUse {
  in?: 'body' | 'header';
  name: string;
  recipe: string;
  secret?: 'merchant' | 'partner';
}

/** What a receiver checks beyond a notification's signature (x-operation.receive on a webhook). */
export interface Receive {
  occurredAt?: { at: string; zone: string };
  key: string[];
  kinds?: { by: string; names: Record<string, string> };
  subject?: string[];
}

export interface Descriptor {
  operationId?: string;
  summary?: string;
  request?: string;
  result?: string;
  /** A file result's media type; absent: the spec's own (a structured answer). */
  resultType?: string;
  refusal?: string;
  status?: number;
  credentials?: ('merchant' | 'partner' | 'accessToken')[];
  hashes?: HashUse[];
  resultHashes?: HashUse[];
  webhooks?: string[];
  maxBodyBytes?: number;
  aliasOf?: string;
  examples: { request: string[]; result?: string[]; refusal?: string[] };
  seed?: string;
  inferred?: string;
  resultInferred?: string;
  payloadInferred?: string;
  receive?: Receive;
  /** The fields a triggered notification may be given (webhooks: x-operation.trigger.set). */
  trigger?: { set: string[] };
  retry?: { safe: true } | { lookup: string; by: string };
  /** The operation's set of documented outcomes (x-sandbox-scenarios.outcomes), by name. */
  outcomes?: string;
}

export interface Operation extends Descriptor {
  operationId: string;
  summary: string;
  verb: 'get' | 'post' | 'put' | 'patch' | 'delete';
  path: string;
  /** The body's `method` value on a shared path. */
  method?: string;
  status: number;
  tags: string[];
  deprecated: boolean;
  /** Header credentials, from the operation's security requirement. */
  security: string[];
  /** Path and query parameter names. */
  parameters: { name: string; in: 'path' | 'query'; required: boolean; example?: string }[];
  webhook: boolean;
}

const VERBS = ['get', 'post', 'put', 'patch', 'delete'] as const;

export function schemaName(pointer: string): string {
  const prefix = '#/components/schemas/';
  if (!pointer.startsWith(prefix)) throw new Error(`Not a schema pointer: ${pointer}`);
  return pointer.slice(prefix.length);
}

function successStatus(op: DocNode): number {
  const codes = Object.keys(op.responses ?? {}).filter((c) => /^2\d\d$/.test(c));
  if (codes.length !== 1) throw new Error(`Operation ${op.operationId} must have exactly one 2xx response`);
  return Number(codes[0]);
}

function operationsOf(doc: Doc, items: DocNode, webhook: boolean): Operation[] {
  const out: Operation[] = [];
  for (const [path, rawItem] of Object.entries(items ?? {})) {
    const item = deref(doc, rawItem);
    for (const verb of VERBS) {
      const op = item[verb];
      if (!op) continue;
      const parameters = [...(item.parameters ?? []), ...(op.parameters ?? [])]
        .map((p: any) => deref(doc, p))
        .filter((p: any) => p.in === 'path' || p.in === 'query')
        .map((p: any) => ({
          name: p.name,
          in: p.in,
          required: Boolean(p.required),
          ...(p.example === undefined ? {} : { example: String(p.example) }),
        }));
      const security = [...new Set<string>((op.security ?? []).flatMap((req: Doc) => Object.keys(req)))];
      const base = {
        verb,
        path,
        status: webhook ? 200 : successStatus(op),
        tags: op.tags ?? [],
        deprecated: Boolean(op.deprecated),
        security,
        parameters,
        webhook,
      };
      if (op['x-methods']) {
        for (const [method, d] of Object.entries<Descriptor>(op['x-methods'])) {
          if (!d.operationId || !d.summary)
            throw new Error(`x-methods.${method} on ${path} lacks operationId or summary`);
          out.push({
            ...d,
            ...base,
            operationId: d.operationId,
            summary: d.summary,
            method,
            status: d.status ?? base.status,
          });
        }
      } else if (op['x-operation']) {
        const d: Descriptor = op['x-operation'];
        out.push({ ...d, ...base, operationId: op.operationId, summary: op.summary, status: d.status ?? base.status });
      } else {
        throw new Error(`${verb.toUpperCase()} ${path} has neither x-methods nor x-operation`);
      }
    }
  }
  return out;
}

/** Every operation of the contract, in document order: paths first, then webhooks. */
export function contractOperations(doc: Doc): Operation[] {
  return [...operationsOf(doc, doc.paths, false), ...operationsOf(doc, doc.webhooks, true)];
}

export function hashRecipes(doc: Doc): HashRecipes {
  return doc['x-hash-recipes'];
}
