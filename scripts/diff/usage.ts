// Which side of the wire each component schema travels on, and for which operations. A change to a
// schema means different things on the two sides: inbound (what clients send the gateway: request
// bodies and parameters, and what merchants answer to a webhook) and outbound (what the gateway
// answers, and the webhooks it posts). Redocly's diff reports a shared component once, at its first
// use; this map gives every use.
import { contractOperations, type Doc } from '../lib/contract.ts';

export type Side = 'in' | 'out';
export type Usage = Map<string, { in: Set<string>; out: Set<string> }>;

const SCHEMA = '#/components/schemas/';
const VERBS = ['get', 'post', 'put', 'patch', 'delete'];

function walk(doc: Doc, node: unknown, side: Side, label: string, usage: Usage, seen: Set<string>): void {
  if (!node || typeof node !== 'object') return;
  if (Array.isArray(node)) {
    for (const n of node) walk(doc, n, side, label, usage, seen);
    return;
  }
  const ref = (node as any).$ref;
  if (typeof ref === 'string') {
    if (seen.has(ref)) return;
    seen.add(ref);
    if (ref.startsWith(SCHEMA)) {
      const name = ref.slice(SCHEMA.length);
      if (!usage.has(name)) usage.set(name, { in: new Set(), out: new Set() });
      usage.get(name)![side].add(label);
    }
    const target = ref.startsWith('#/')
      ? ref
          .slice(2)
          .split('/')
          .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
          .reduce((n: any, k) => n?.[k], doc)
      : undefined;
    walk(doc, target, side, label, usage, seen);
    return;
  }
  for (const [key, value] of Object.entries(node))
    if (key !== 'examples' && key !== 'example') walk(doc, value, side, label, usage, seen);
}

/** Each schema's inbound and outbound users, by operationId (methods on shared paths). */
export function schemaUsage(doc: Doc): Usage {
  const usage: Usage = new Map();
  const ops = contractOperations(doc);
  for (const op of ops) {
    const item = (op.webhook ? doc.webhooks : doc.paths)[op.path];
    const raw = item[op.verb];
    // Webhooks turn the wire around: the gateway sends the request, the merchant answers it.
    const [send, answer]: [Side, Side] = op.webhook ? ['out', 'in'] : ['in', 'out'];
    const label = op.webhook ? `webhook ${op.path}` : op.operationId;
    const roots: [unknown, Side][] = [
      [item.parameters, send],
      [raw.parameters, send],
    ];
    if (op.method) {
      // On a shared path the descriptor ties each method to its own request, result and refusal.
      roots.push([{ $ref: op.request }, send], [{ $ref: op.result }, answer], [{ $ref: op.refusal }, answer]);
      for (const [code, response] of Object.entries<any>(raw.responses ?? {}))
        if (Number(code) !== op.status) roots.push([response, answer]);
    } else {
      roots.push([raw.requestBody, send], [raw.responses, answer]);
    }
    for (const [node, side] of roots) walk(doc, node, side, label, usage, new Set());
  }
  return usage;
}

/** The operations (or webhooks) a pointer into paths/webhooks belongs to, with the side it lies on. */
export function locate(doc: Doc, pointer: string): { operations: string[]; side: Side | undefined } {
  const parts = pointer
    .replace(/^#\//, '')
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  const [area, key, verb] = parts;
  if (area !== 'paths' && area !== 'webhooks') return { operations: [], side: undefined };
  const rest = parts.slice(3).join('/');
  const webhook = area === 'webhooks';
  let side: Side | undefined;
  if (/^(requestBody|parameters)/.test(rest) || verb === 'parameters') side = webhook ? 'out' : 'in';
  else if (/^responses/.test(rest)) side = webhook ? 'in' : 'out';
  const op = VERBS.includes(verb!) ? doc[area]?.[key!]?.[verb!] : undefined;
  let operations = op ? [webhook ? `webhook ${key}` : op.operationId] : [];
  const methods = op?.['x-methods'];
  const mapped = /discriminator\/mapping\/([^/]+)/.exec(rest)?.[1];
  if (methods && mapped && methods[mapped]) operations = [methods[mapped].operationId];
  else if (methods) operations = Object.values<any>(methods).map((m) => m.operationId);
  return { operations, side };
}
