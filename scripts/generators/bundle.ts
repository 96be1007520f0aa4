// The bundled document: spec/openapi.yaml and every file it references, in one self-contained
// document (@redocly/openapi-core, the library behind the Redocly CLI), with the parts derived from
// other parts composed in (compose.ts): the shared paths' method lists and the intro's recipe table.
import path from 'node:path';
import { bundle, loadConfig } from '@redocly/openapi-core';
import YAML from 'yaml';
import { contractOperations, type Doc } from '../lib/contract.ts';
import { BANNER } from './banner.ts';
import { ComposingResolver } from './compose.ts';
import { hasRecipeTable, recipeTable, withRecipeTable } from './recipe-table.ts';
import { published, withTolerantRequests } from './tolerant-requests.ts';
import { withWireFormats } from './wire-formats.ts';

export { SpecProblem } from './wire-formats.ts';

export async function bundleSpec(root: string): Promise<Doc> {
  const config = await loadConfig({ configPath: path.join(root, 'redocly.yaml') });
  const result = await bundle({
    ref: path.join(root, 'spec/openapi.yaml'),
    config,
    removeUnusedComponents: false,
    externalRefResolver: new ComposingResolver(root),
  });
  const errors = result.problems.filter((p) => p.severity === 'error');
  if (errors.length) throw new Error(`Bundling failed:\n${errors.map((p) => p.message).join('\n')}`);
  const doc = result.bundle.parsed as Doc;
  // The table's rows name the operations each recipe signs: known once the document is whole.
  if (doc.info?.description && hasRecipeTable(doc.info.description) && doc['x-hash-recipes'])
    doc.info.description = withRecipeTable(
      doc.info.description,
      recipeTable(doc['x-hash-recipes'], contractOperations(doc)),
    );
  // Held to what its wire formats carry; the added ones' media types written onto the spec's own
  // schemas; then every request body points at its tolerant copy (what the gateway accepts, in each mode).
  return withTolerantRequests(withWireFormats(doc, root));
}

// Written as published: the exact request schemas, which no operation uses once every body points at
// its tolerant copy, out of the components (x-exact-requests); the generators read the bundle itself.
export const bundledJson = (doc: Doc): string =>
  `${JSON.stringify({ 'x-generated-by': BANNER, ...published(doc) }, null, 2)}\n`;
export const bundledYaml = (doc: Doc): string =>
  `# ${BANNER}\n${YAML.stringify(published(doc), { lineWidth: 0, aliasDuplicateObjects: false })}`;
