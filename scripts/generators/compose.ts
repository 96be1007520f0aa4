// The document as it is read: the hand-written files of spec/, with the parts derived from other
// parts composed in as they are loaded, never written back into a hand-written file. Redocly's
// bundler and linter load every file through this resolver, which hands them each shared path file
// with its method lists composed (method-index.ts) and each other path file with its request examples
// paired with an answer by name (example-pairs.ts); the intro's hash-recipe table is filled in the
// bundled document (recipe-table.ts).
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { BaseResolver, Source } from '@redocly/openapi-core';
import semver from 'semver';
import YAML from 'yaml';
import type { DocNode } from '../lib/contract.ts';
import { withPairedExamples } from './example-pairs.ts';
import { methodIndex } from './method-index.ts';

/** The newest release's bundled document (releases/openapi-X.Y.Z.json), if the package has one. */
export function lastReleased(root: string): DocNode | undefined {
  const dir = path.join(root, 'releases');
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return undefined;
  }
  const newest = names
    .map((name) => /^openapi-(\d+\.\d+\.\d+)\.json$/.exec(name)?.[1])
    .filter((v): v is string => v !== undefined)
    .sort(semver.compare)
    .at(-1);
  return newest ? JSON.parse(readFileSync(path.join(dir, `openapi-${newest}.json`), 'utf8')) : undefined;
}

/** Whether spec/openapi.yaml declares its examples paired by name (`x-example-pairs: by-name`). */
function examplePairs(spec: string): boolean {
  return YAML.parse(readFileSync(path.join(spec, 'openapi.yaml'), 'utf8'))?.['x-example-pairs'] === 'by-name';
}

/** Loads spec/ files as Redocly's BaseResolver does, but each shared path file with its lists composed. */
export class ComposingResolver extends BaseResolver {
  readonly #composed: Promise<Map<string, string>>;
  readonly #paths: string;
  readonly #paired: boolean;

  constructor(root: string) {
    super();
    const spec = path.join(root, 'spec');
    this.#paths = path.join(spec, 'paths') + path.sep;
    // A spec that declares x-example-pairs (releases before 0.3 did not) has its examples paired.
    this.#paired = examplePairs(spec);
    this.#composed = methodIndex(spec, lastReleased(root), this.#paired).then(
      (texts) => new Map([...texts].map(([file, text]) => [path.join(spec, file), text])),
    );
  }

  override async loadExternalRef(absoluteRef: string): Promise<Source> {
    const text = (await this.#composed).get(absoluteRef);
    if (text !== undefined) return new Source(absoluteRef, text);
    const source = await super.loadExternalRef(absoluteRef);
    // A path file of operations of their own: its request examples paired with an answer by name.
    const paired = this.#paired && absoluteRef.startsWith(this.#paths) ? withPairedExamples(source.body) : undefined;
    return paired === undefined ? source : new Source(absoluteRef, paired);
  }
}
