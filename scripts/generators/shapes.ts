// The shapes of the operation table (runtime/protocols/protocol.ts, Shape): what each request,
// result and refusal schema makes of a value that a protocol carries as text, read once here from the
// bundled document so that no protocol reads a schema at run time.
import { deref } from '../../runtime/document.ts';
import type { JsonType, Shape } from '../../runtime/protocols/protocol.ts';
import type { Doc, DocNode } from '../lib/contract.ts';

const BRANCHES = ['oneOf', 'anyOf', 'allOf'] as const;

/** A schema and the branches of its unions, each resolved. */
function branches(doc: Doc, node: DocNode, seen: Set<DocNode>): DocNode[] {
  const s = deref(doc, node);
  if (!s || typeof s !== 'object' || seen.has(s)) return [];
  seen.add(s);
  const out = [s];
  for (const key of BRANCHES) for (const b of s[key] ?? []) out.push(...branches(doc, b, seen));
  return out;
}

/** The shape of a schema (a union's branches merged: every type any allows, every field any declares). */
export function shapeOf(doc: Doc, node: DocNode, depth = 0): Shape {
  const all = branches(doc, node, new Set());
  const types = new Set<JsonType>();
  const properties = new Map<string, DocNode[]>();
  const items: DocNode[] = [];
  let itemName: string | undefined;
  for (const s of all) {
    for (const t of Array.isArray(s.type) ? s.type : s.type === undefined ? [] : [s.type]) types.add(t);
    if (s.properties) {
      types.add('object');
      for (const [name, p] of Object.entries<DocNode>(s.properties))
        if (typeof p === 'object') properties.set(name, [...(properties.get(name) ?? []), p]);
    }
    if (s.items && typeof s.items === 'object') {
      types.add('array');
      items.push(s.items);
      itemName ??= deref(doc, s.items)?.xml?.name;
    }
  }
  const shape: { types?: JsonType[]; fields?: Record<string, Shape>; items?: Shape; itemName?: string } = {};
  if (types.size && !(types.size === 1 && types.has('string'))) shape.types = [...types].sort();
  // Deep enough for any schema of the contract; a recursive one stops here.
  if (depth < 8 && properties.size) {
    const fields: Record<string, Shape> = {};
    for (const name of [...properties.keys()].sort()) {
      const merged = shapeOf(doc, { anyOf: properties.get(name)! }, depth + 1);
      if (Object.keys(merged).length) fields[name] = merged;
    }
    if (Object.keys(fields).length) shape.fields = fields;
  }
  if (depth < 8 && items.length) {
    const item = shapeOf(doc, { anyOf: items }, depth + 1);
    if (Object.keys(item).length) shape.items = item;
  }
  if (itemName) shape.itemName = itemName;
  return shape;
}

/** The shape of a component schema by name (`CardResult`). */
export const namedShape = (doc: Doc, name: string): Shape => shapeOf(doc, { $ref: `#/components/schemas/${name}` });
