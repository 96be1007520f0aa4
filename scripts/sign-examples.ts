// npm run sign-examples: rewrites, in spec/, the hash fields of every example so that they are what
// the recipes give with the sandbox passphrase (x-sandbox). Run it after editing an example; the
// test suite fails while any example hash is wrong (test/contract/examples.test.ts).
//
// Request examples get the hashes their operation sends (x-method.hashes, body ones); result examples
// get the hashes the result carries (resultHashes), computed over the operation's first request
// example joined with the result. An example's own `x-hash-context` adds fields a hash covers that are
// not in its body (the hashSalt of a direct debit outcome, say). Recipes get their worked example.
import { readFile, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import YAML, { isMap, isPair, isScalar, Scalar, type Document, type YAMLMap } from 'yaml';
import { canonicalJson, computeHash, type HashRecipe } from '../runtime/signing.ts';
import { bundleSpec, toldInWords } from './generate.ts';
import { contractOperations, exampleValue, hashRecipes, type Doc } from './lib/contract.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** What each example's hash fields must be, by example name. */
export function expectedExampleHashes(doc: Doc): Map<string, Record<string, string>> {
  const recipes = hashRecipes(doc);
  const passphrase: string = doc.info['x-sandbox'].passphrase;
  const expected = new Map<string, Record<string, string>>();
  // A hash is part of an example only where the example carries its field: the forms of one method
  // differ (processCard's 3DS forms send no hash), and the request schema says which must.
  const sign = (
    name: string,
    uses: { name: string; recipe: string; in?: string }[],
    context: Record<string, unknown>,
    own: object,
  ) => {
    const fields: Record<string, string> = {};
    for (const use of uses.filter((u) => u.in !== 'header' && carries(own, u.name))) {
      const recipe = recipes[use.recipe];
      if (!recipe) throw new Error(`Unknown recipe ${use.recipe}`);
      fields[use.name] = computeHash(recipe, passphrase, context);
    }
    if (Object.keys(fields).length) expected.set(name, fields);
  };
  for (const op of contractOperations(doc)) {
    const [firstRequest] = op.examples.request;
    const requestValue = (firstRequest ? exampleValue(doc, firstRequest) : {}) as Record<string, unknown>;
    for (const name of op.examples.request) {
      const value = exampleValue(doc, name) as object;
      sign(name, op.hashes ?? [], { ...(exampleContext(doc, name) ?? {}), ...value }, value);
    }
    for (const name of op.examples.result ?? []) {
      const value = exampleValue(doc, name) as object;
      sign(name, op.resultHashes ?? [], { ...requestValue, ...value }, value);
    }
  }
  return expected;
}

const carries = (value: object, field: string): boolean => Object.hasOwn(value, field);

function exampleContext(doc: Doc, name: string): Record<string, unknown> | undefined {
  return doc.components?.examples?.[name]?.['x-hash-context'] ?? findInline(doc, name)?.['x-hash-context'];
}

function findInline(doc: Doc, name: string): any {
  let found: any;
  const visit = (node: any): void => {
    if (found || !node || typeof node !== 'object') return;
    if (node.examples?.[name]) found = node.examples[name];
    else for (const v of Object.values(node)) visit(v);
  };
  visit(doc.webhooks);
  visit(doc.paths);
  return found;
}

/** The worked example of each recipe: its hash (and canonical text for HMAC recipes). */
export function expectedRecipeExamples(doc: Doc): Map<string, Record<string, string>> {
  const out = new Map<string, Record<string, string>>();
  for (const [name, recipe] of Object.entries(hashRecipes(doc))) {
    const example = (recipe as HashRecipe & { example: { passphrase: string; fields: Record<string, unknown> } })
      .example;
    const values: Record<string, string> = { hash: computeHash(recipe, example.passphrase, example.fields) };
    if (recipe.algorithm === 'hmac-sha256') values.canonical = canonicalJson(example.fields);
    out.set(name, values);
  }
  return out;
}

function quoted(value: string): Scalar {
  const scalar = new Scalar(value);
  scalar.type = Scalar.QUOTE_SINGLE;
  return scalar;
}

/** Sets fields inside the YAML maps named in `targets` (under an `examples` map, or a recipe's `example`). */
function rewrite(
  document: Document,
  examples: Map<string, Record<string, string>>,
  recipes: Map<string, Record<string, string>>,
  isRecipeFile: boolean,
): number {
  let changes = 0;
  const setAll = (map: YAMLMap, values: Record<string, string>) => {
    for (const [key, value] of Object.entries(values)) {
      const current = map.get(key);
      if (current !== value) {
        map.set(key, quoted(value));
        changes++;
      }
    }
  };
  const visit = (node: unknown): void => {
    if (!isMap(node)) return;
    for (const pair of node.items) {
      if (!isPair(pair) || !isScalar(pair.key)) continue;
      const key = String(pair.key.value);
      if (key === 'examples' && isMap(pair.value)) {
        for (const item of pair.value.items) {
          if (!isPair(item) || !isScalar(item.key) || !isMap(item.value)) continue;
          const values = examples.get(String(item.key.value));
          const valueMap = item.value.get('value');
          if (values && isMap(valueMap)) setAll(valueMap, values);
        }
      }
      if (isRecipeFile && recipes.has(key) && isMap(pair.value)) {
        const example = pair.value.get('example');
        if (isMap(example)) setAll(example, recipes.get(key)!);
      }
      visit(pair.value);
    }
  };
  visit(document.contents);
  return changes;
}

async function yamlFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries.filter((e) => e.isFile() && e.name.endsWith('.yaml')).map((e) => path.join(e.parentPath, e.name));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const doc = await bundleSpec().catch(toldInWords);
  const examples = expectedExampleHashes(doc);
  const recipes = expectedRecipeExamples(doc);
  let total = 0;
  for (const file of await yamlFiles(path.join(ROOT, 'spec'))) {
    const text = await readFile(file, 'utf8');
    const document = YAML.parseDocument(text);
    const changes = rewrite(document, examples, recipes, file.endsWith('hash-recipes.yaml'));
    if (changes) {
      await writeFile(file, document.toString({ lineWidth: 0, flowCollectionPadding: false }));
      console.log(`${path.relative(ROOT, file)}: ${changes} hash(es) updated`);
      total += changes;
    }
  }
  console.log(total ? `${total} hashes updated` : 'every example hash is already right');
}
