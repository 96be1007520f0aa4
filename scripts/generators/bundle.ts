// The bundled document: spec/openapi.yaml and every file it references, in one self-contained
// document (@redocly/openapi-core, the library behind the Redocly CLI), with the parts derived from
// other parts composed in (compose.ts): the shared paths' method lists and the intro's recipe table.
import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
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

/**
 * What a bundle of `root` reads, as one digest: redocly.yaml, the lint plugins it names (lint/), every
 * file of spec/, and the release snapshots the composer reads (releases/openapi-*.json, compose.ts).
 * A folder that is not there counts as such.
 */
async function inputsDigest(root: string): Promise<string> {
  const hash = createHash('sha256');
  const add = async (file: string) => {
    const text = await readFile(path.join(root, file)).catch(() => undefined);
    hash.update(`${file}\0${text ? `${text.length}\0` : 'absent\0'}`);
    if (text) hash.update(text);
  };
  const filesUnder = async (dir: string) =>
    (await readdir(path.join(root, dir), { recursive: true, withFileTypes: true }).catch(() => []))
      .filter((e) => e.isFile())
      .map((e) => path.relative(root, path.join(e.parentPath, e.name)))
      .sort();
  await add('redocly.yaml');
  for (const file of await filesUnder('lint')) await add(file);
  for (const file of await filesUnder('spec')) await add(file);
  for (const file of (await filesUnder('releases')).filter((f) => /openapi-[^/]*\.json$/.test(f))) await add(file);
  return hash.digest('hex');
}

/** The bundles made in this process, by folder: the newest few, each with the digest of what it read. */
const made = new Map<string, { digest: string; doc: Promise<Doc> }>();
const KEPT = 8;
/** How many bundles this process has made (not answered from `made`): test/contract/bundle-once.test.ts reads it. */
export const bundleCount = { made: 0 };

/**
 * The bundled document of `root`'s spec. A process bundles a spec once: asked again while spec/,
 * redocly.yaml, lint/ and releases/ hold the same bytes, it answers a copy of that bundle (each
 * caller owns what it gets), and bundles afresh when any of them changed. The tests, which run file
 * after file in one worker, and a check that bundles the same tree several times (the version gate,
 * `generate`, the docs alone) each bundled the same unchanged spec again, 0.5 to 0.8 s of CPU each.
 */
export async function bundleSpec(root: string): Promise<Doc> {
  const digest = await inputsDigest(root);
  let entry = made.get(root);
  if (entry?.digest !== digest) {
    const doc = bundleAfresh(root);
    entry = { digest, doc };
    made.delete(root);
    made.set(root, entry);
    for (const old of made.keys()) if (made.size > KEPT) made.delete(old);
    // A failed bundle is not kept: the next call tries again (and fails again, in its own words).
    doc.catch(() => {
      if (made.get(root)?.doc === doc) made.delete(root);
    });
  } else {
    made.delete(root);
    made.set(root, entry);
  }
  return structuredClone(await entry.doc);
}

async function bundleAfresh(root: string): Promise<Doc> {
  bundleCount.made++;
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
