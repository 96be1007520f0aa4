// The hash-recipe table of the spec's introduction, written from spec/hash-recipes.yaml (how each
// hash is computed) and the operation descriptors (which operations use it), so that neither column
// can drift: the hand-written table it replaces had lost verifyCard from its "used by" column.
// It is composed into the bundled document's info.description (bundle.ts), below the header row
// spec/openapi.yaml writes, never written into the hand-written file.
import { recipeFormula } from '../../runtime/recipe-text.ts';
import type { HashRecipe } from '../../runtime/signing.ts';
import type { Operation } from '../lib/contract.ts';

const HEADER = '| recipe | computed as | source | used by |';
// A formula's alternatives are written `a | b`: inside a Markdown table cell the bar is escaped.
const cell = (text: string) => text.replaceAll('|', '\\|');

function usedBy(name: string, ops: Operation[]): string {
  const own = ops.filter((o) => !o.aliasOf);
  const body: string[] = [];
  const headers = new Map<string, Operation[]>();
  const results = new Map<string, string[]>();
  for (const op of own) {
    for (const h of op.hashes ?? []) {
      if (h.recipe !== name) continue;
      if (h.in === 'header') headers.set(h.name, [...(headers.get(h.name) ?? []), op]);
      else body.push(h.name === 'hash' ? op.operationId : `${h.name} of ${op.operationId}`);
    }
    for (const h of op.resultHashes ?? [])
      if (h.recipe === name) results.set(h.name, [...(results.get(h.name) ?? []), op.operationId]);
  }
  const uses = [...body];
  for (const [header, list] of headers)
    uses.push(
      `${header} of the ${list.length} operations tagged ${[...new Set(list.flatMap((o) => o.tags))].join(', ')}`,
    );
  for (const [field, list] of results) uses.push(`${field} in the results of ${list.join(', ')}`);
  return uses.length ? uses.join(', ') : '(none)';
}

/** The table's lines, header included, without indentation. */
export function recipeTable(recipes: Record<string, unknown>, ops: Operation[]): string[] {
  return [
    HEADER,
    '|---|---|---|---|',
    ...Object.entries(recipes as Record<string, HashRecipe & { source: string }>).map(
      ([name, r]) => `| ${name} | ${cell(recipeFormula(r))} | ${r.source} | ${cell(usedBy(name, ops))} |`,
    ),
  ];
}

/** Whether a text has the table's header row (an older spec, bundled by the diff, may have none). */
export const hasRecipeTable = (text: string): boolean => text.split('\n').some((l) => l.trim() === HEADER);

/** spec/openapi.yaml's text with the table replaced; throws when the table's header row is missing. */
export function withRecipeTable(openapiYaml: string, table: string[]): string {
  const lines = openapiYaml.split('\n');
  const start = lines.findIndex((l) => l.trim() === HEADER);
  if (start < 0) throw new Error(`spec/openapi.yaml: no recipe table (a line "${HEADER}" in info.description)`);
  const indent = lines[start]!.slice(0, lines[start]!.indexOf('|'));
  let end = start;
  while (end < lines.length && lines[end]!.trim().startsWith('|')) end++;
  lines.splice(start, end - start, ...table.map((l) => indent + l));
  return lines.join('\n');
}
