// The document as it is read: the hand-written files of spec/, with the parts derived from other
// parts composed in as they are loaded, never written back into a hand-written file. Redocly's
// bundler and linter load every file through this resolver, which hands them each shared path file
// with its method lists composed (method-index.ts); the intro's hash-recipe table is filled in the
// bundled document (recipe-table.ts).
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { BaseResolver, Source } from '@redocly/openapi-core';
import semver from 'semver';
import type { DocNode } from '../lib/contract.ts';
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

/** Loads spec/ files as Redocly's BaseResolver does, but each shared path file with its lists composed. */
export class ComposingResolver extends BaseResolver {
  readonly #composed: Promise<Map<string, string>>;

  constructor(root: string) {
    super();
    const spec = path.join(root, 'spec');
    this.#composed = methodIndex(spec, lastReleased(root)).then(
      (texts) => new Map([...texts].map(([file, text]) => [path.join(spec, file), text])),
    );
  }

  override async loadExternalRef(absoluteRef: string): Promise<Source> {
    const text = (await this.#composed).get(absoluteRef);
    return text === undefined ? super.loadExternalRef(absoluteRef) : new Source(absoluteRef, text);
  }
}
