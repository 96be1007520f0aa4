// The hash recipes of x-hash-recipes as a module, for runtime/signing.ts.
import type { Doc } from '../lib/contract.ts';
import { tsHeader } from './banner.ts';

export function hashRecipesModule(doc: Doc): string {
  // Only what the runtime needs: the worked examples and reasons stay in the spec.
  const recipes = Object.fromEntries(
    Object.entries(doc['x-hash-recipes']).map(([name, r]) => {
      const { example: _example, inferred: _inferred, evidence: _evidence, legacy, ...recipe } = r;
      // Of a legacy form the runtime needs only that there is one (legacyRecipe derives it).
      return [name, legacy ? { ...recipe, legacy: { source: (legacy as { source: string }).source } } : recipe];
    }),
  );
  return [
    tsHeader('The hash recipes of x-hash-recipes, for runtime/signing.ts to compute and check message hashes.'),
    "import type { HashRecipes } from '../runtime/signing.ts';",
    '',
    `export const hashRecipes = ${JSON.stringify(recipes, null, 2)} as const satisfies HashRecipes;`,
    '',
    'export type HashRecipeName = keyof typeof hashRecipes;',
    '',
  ].join('\n');
}
