// Checking a schema against what a protocol can carry (each protocol's `limits`), property by
// property, through $refs and the branches of unions: used by the bundler (scripts/generators/
// wire-formats.ts, which stops with the problems) and by the lint (lint/protocol-limits.js, which
// reports each at its place in the method's own file). Where a schema is, and how a $ref is followed,
// is the caller's: the walk takes them as functions.
import type { Limit, LimitProblem, PropertyView } from './protocol.ts';

/** How the caller follows its document: a node resolved (its $ref followed) with where it is, and a child's place. */
export interface SchemaWalker<At> {
  resolve(node: unknown, at: At): { node: any; at: At };
  child(at: At, key: string | number): At;
  /** The same place, told apart from others (a file and a pointer). */
  key(at: At): string;
}

export interface FoundProblem<At> extends LimitProblem {
  at: At;
}

const UNIONS = ['oneOf', 'anyOf', 'allOf'] as const;

/** Every problem a protocol's limits (its module's `limits`) find in one request or answer schema. */
export function limitProblems<At>(
  limits: readonly Limit[],
  side: PropertyView['side'],
  schema: unknown,
  at: At,
  walker: SchemaWalker<At>,
): FoundProblem<At>[] {
  const problems: FoundProblem<At>[] = [];
  const reported = new Set<string>();
  const root = walker.resolve(schema, at);
  const topLevel = new Set<string>();
  const collect = (node: any, where: At, seen: Set<string>) => {
    const here = walker.resolve(node, where);
    if (!here.node || typeof here.node !== 'object' || seen.has(walker.key(here.at))) return;
    seen.add(walker.key(here.at));
    for (const name of Object.keys(here.node.properties ?? {})) topLevel.add(name);
    for (const union of UNIONS)
      for (const [i, b] of (here.node[union] ?? []).entries())
        collect(b, walker.child(walker.child(here.at, union), i), seen);
  };
  collect(schema, at, new Set());

  const visitProperty = (
    name: string,
    node: unknown,
    where: At,
    within: string[],
    inList: boolean,
    seen: Set<string>,
  ) => {
    for (const branch of alternatives(node, where, walker)) {
      for (const limit of limits) {
        const found = limit.check({ side, name, within, inList, schema: branch.node, topLevel });
        // Reported where the property is declared (the method's file), not where a $ref leads.
        const id = `${limit.id} ${walker.key(where)}`;
        if (found && !reported.has(id)) {
          reported.add(id);
          problems.push({ limit: limit.id, ...found, at: where });
        }
      }
      visitObject(branch.node, branch.at, [...within, name], inList, seen);
      if (branch.node.items && typeof branch.node.items === 'object')
        visitObject(branch.node.items, walker.child(branch.at, 'items'), [...within, name], true, seen);
    }
  };
  const visitObject = (node: unknown, where: At, within: string[], inList: boolean, seen: Set<string>) => {
    for (const branch of alternatives(node, where, walker)) {
      const id = walker.key(branch.at);
      if (seen.has(id)) continue;
      const inner = new Set(seen).add(id);
      for (const [name, property] of Object.entries(branch.node.properties ?? {}))
        if (property && typeof property === 'object')
          visitProperty(
            name,
            property,
            walker.child(walker.child(branch.at, 'properties'), name),
            within,
            inList,
            inner,
          );
    }
  };
  visitObject(root.node, root.at, [], false, new Set());
  return problems;
}

/** A schema and the branches of its unions, each resolved, with where each is. */
function alternatives<At>(node: unknown, at: At, walker: SchemaWalker<At>): { node: any; at: At }[] {
  const here = walker.resolve(node, at);
  if (!here.node || typeof here.node !== 'object') return [];
  const out = [here];
  for (const union of UNIONS)
    for (const [i, b] of (here.node[union] ?? []).entries())
      out.push(...alternatives(b, walker.child(walker.child(here.at, union), i), walker));
  return out;
}
