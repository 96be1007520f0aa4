// generated/hash-vectors.json: every md5 recipe's worked example of x-hash-recipes, in its current
// form and (where the recipe has one) its legacy form, as plain data another language can read:
// the recipe, its inputs, the string hashed (preimage) and the hash. The examples in examples/php,
// examples/python and examples/ruby compute their hashes by hand, the way the public clients of
// their language do; test/examples/hashes.test.ts holds each of them to these vectors.
import { computeHash, hashPreimage, legacyRecipe, type HashRecipe } from '../../runtime/signing.ts';
import type { Doc } from '../lib/contract.ts';
import { BANNER } from './banner.ts';

export interface HashVector {
  recipe: string;
  /** `current`: md5(passphrase) where the recipe says so; `legacy`: the passphrase itself (older clients). */
  form: 'current' | 'legacy';
  passphrase: string;
  inputs: Record<string, unknown>;
  preimage: string;
  hash: string;
}

function vector(
  name: string,
  form: HashVector['form'],
  recipe: HashRecipe,
  example: NonNullable<HashRecipe['example']>,
) {
  const hash = computeHash(recipe, example.passphrase, example.fields);
  // The spec's worked example is the published value: a recipe that no longer gives it is a spec error.
  if (hash !== example.hash)
    throw new Error(`x-hash-recipes.${name} (${form}): the example says ${example.hash}, the recipe gives ${hash}`);
  return {
    recipe: name,
    form,
    passphrase: example.passphrase,
    inputs: example.fields,
    preimage: hashPreimage(recipe, example.passphrase, example.fields),
    hash,
  } satisfies HashVector;
}

export function hashVectors(doc: Doc): HashVector[] {
  const vectors: HashVector[] = [];
  for (const [name, recipe] of Object.entries(doc['x-hash-recipes'])) {
    // Only the concatenation recipes: the file checksum has no preimage text, the header HMAC no md5.
    if (recipe.algorithm !== 'md5' || !recipe.parts || !recipe.example) continue;
    vectors.push(vector(name, 'current', recipe, recipe.example));
    const legacy = legacyRecipe(recipe);
    if (legacy && recipe.legacy?.example) vectors.push(vector(name, 'legacy', legacy, recipe.legacy.example));
  }
  return vectors;
}

export function hashVectorsFile(doc: Doc): string {
  return `${JSON.stringify({ 'x-generated-by': BANNER, vectors: hashVectors(doc) }, null, 2)}\n`;
}
