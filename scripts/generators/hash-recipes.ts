// The hash recipes of x-hash-recipes as a module, for runtime/signing.ts.
import type { HashRecipe } from '../../runtime/signing.ts';
import type { Doc } from '../lib/contract.ts';
import { tsHeader } from './banner.ts';

const made = new WeakMap<Doc, Record<string, HashRecipe>>();

/**
 * The recipes as the runtime reads them (generated/hash-recipes.ts holds these), made from this
 * document: a generator signs with them, never with the module the last `npm run generate` wrote,
 * which a changed recipe makes stale until the run that rewrites it has ended.
 */
export function recipesOf(doc: Doc): Record<string, HashRecipe> {
  let recipes = made.get(doc);
  if (!recipes) {
    // Only what the runtime needs: the worked examples and reasons stay in the spec.
    recipes = Object.fromEntries(
      Object.entries(doc['x-hash-recipes']).map(([name, r]) => {
        const { example: _example, inferred: _inferred, evidence: _evidence, legacy, ...recipe } = r;
        // Of a legacy form the runtime needs only that there is one (legacyRecipe derives it).
        return [name, legacy ? { ...recipe, legacy: { source: (legacy as { source: string }).source } } : recipe];
      }),
    ) as Record<string, HashRecipe>;
    made.set(doc, recipes);
  }
  return recipes;
}

export function hashRecipesModule(doc: Doc): string {
  const recipes = recipesOf(doc);
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
