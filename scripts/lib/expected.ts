// x-expected: what a pattern, a format or a long enumeration wants, in words with an example. The
// refusal catalogue (server-stubs/core/refusals.ts) words a broken rule with it; this walk finds
// every such rule in the bundled document, with the words that describe it, and what is missing.
import type { Doc } from './contract.ts';

/** An enumeration longer than this names its values through x-expected (a standard, a link). */
export const LISTED_ENUM_MAX = 12;

export interface RuleUse {
  /** The key a refusal looks its words up by: `pattern:<regex>`, `format:<name>`, `enum:<a,b,...>`. */
  key: string;
  pointer: string;
  expected?: string | undefined;
}

const escapePart = (part: string) => part.replace(/~/g, '~0').replace(/\//g, '~1');
/** Steps that stay inside one schema's alternatives: its x-expected speaks for them. */
const ALTERNATIVES = new Set(['anyOf', 'oneOf', 'allOf']);

export const ruleKey = {
  pattern: (regex: string) => `pattern:${regex}`,
  format: (name: string) => `format:${name}`,
  enum: (values: readonly unknown[]) => `enum:${values.map(String).join(',')}`,
};

/** Every pattern, format and long enumeration of the document's schemas, each with its x-expected. */
export function ruleUses(doc: Doc): RuleUse[] {
  const uses: RuleUse[] = [];
  const walk = (node: unknown, pointer: string, describedBy: string | undefined, parentKey: string) => {
    if (!node || typeof node !== 'object') return;
    if (Array.isArray(node)) {
      node.forEach((item, i) => void walk(item, `${pointer}/${i}`, describedBy, parentKey));
      return;
    }
    const n = node as Record<string, unknown>;
    // A tolerant copy of a request schema (x-tolerant-of, scripts/generators/tolerant-requests.ts) is
    // never what a refusal words: the gateway refuses by the exact schema it copies.
    if (typeof n['x-tolerant-of'] === 'string' && parentKey !== 'properties') return;
    // Names of properties, examples and extensions are not schemas.
    const isSchema = parentKey !== 'properties' && parentKey !== 'examples' && parentKey !== 'example';
    const expected = typeof n['x-expected'] === 'string' ? n['x-expected'] : describedBy;
    if (isSchema) {
      if (typeof n.pattern === 'string') uses.push({ key: ruleKey.pattern(n.pattern), pointer, expected });
      if (typeof n.format === 'string') uses.push({ key: ruleKey.format(n.format), pointer, expected });
      if (Array.isArray(n.enum) && n.enum.length > LISTED_ENUM_MAX)
        uses.push({ key: ruleKey.enum(n.enum), pointer, expected });
    }
    for (const [key, value] of Object.entries(n)) {
      if (key.startsWith('x-') || key === 'examples' || key === 'example') continue;
      const inherits = ALTERNATIVES.has(key) ? expected : undefined;
      walk(value, `${pointer}/${escapePart(key)}`, inherits, ALTERNATIVES.has(parentKey) ? parentKey : key);
    }
  };
  walk(doc.components, '#/components', undefined, '');
  walk(doc.paths, '#/paths', undefined, '');
  walk(doc.webhooks, '#/webhooks', undefined, '');
  return uses;
}

/**
 * The words of each rule, declared once per rule (where several schemas share a pattern, one of them
 * speaks for all): a rule without x-expected, or with it at two places, is an error that names where.
 */
export function expectedWords(doc: Doc): Record<string, string> {
  const byKey = new Map<string, RuleUse[]>();
  for (const use of ruleUses(doc)) byKey.set(use.key, [...(byKey.get(use.key) ?? []), use]);
  const problems: string[] = [];
  const words: Record<string, string> = {};
  for (const [key, uses] of [...byKey].sort(([a], [b]) => a.localeCompare(b))) {
    const declared = uses.filter((u) => u.expected);
    const places = (list: RuleUse[]) => list.map((u) => u.pointer).join(', ');
    if (!declared.length) problems.push(`${key} has no x-expected at ${places(uses)}`);
    else if (declared.length > 1)
      problems.push(`${key} has x-expected at ${declared.length} places (${places(declared)}): declare it once`);
    else words[key] = declared[0]!.expected!;
  }
  if (problems.length) throw new Error(`x-expected:\n  ${problems.join('\n  ')}`);
  return words;
}
