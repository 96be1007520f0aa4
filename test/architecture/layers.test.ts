// The layers of ARCHITECTURE.md ("What each folder may import"), read from that file's table and
// checked over the real import graph: every relative import of every source file (dynamic imports
// included), read with TypeScript's own pre-processor. Known exceptions are listed edge by edge: a new
// edge outside the rules fails, and so does an exception that no longer exists, so the list only
// shrinks. And the graph has no circle: no file imports one that imports it back, through any
// chain, and no folder either. The checks are in layer-checks.ts.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/contract.ts';
import {
  broken,
  CHECKED,
  circles,
  edges,
  fileCircles,
  folderCircles,
  graphOf,
  importReads,
  layerProblems,
  reachesInside,
  tableProblems,
  unlisted,
} from './layer-checks.ts';

/** The imports that break a rule are exactly the known ones listed in test/architecture/`listed`. */
function expectOnlyListed(folders: string[], breaks: (from: string, to: string) => boolean, listed: string): void {
  const { found, gone } = unlisted(folders, breaks, listed);
  expect(found, `imports that break the rule (${listed} lists the known ones)`).toEqual([]);
  expect(gone, `exceptions gone: remove them from ${listed}`).toEqual([]);
}

describe('the layers', () => {
  it('ARCHITECTURE.md has the table, each row naming only folders above it', () => {
    expect(CHECKED).toEqual(
      expect.arrayContaining(['runtime', 'generated', 'server-stubs', 'sandbox', 'cli', 'bench']),
    );
    expect(tableProblems()).toEqual([]);
  });

  it('every import between folders follows ARCHITECTURE.md, but for the known exceptions', () => {
    expectOnlyListed(CHECKED, broken, 'layer-exceptions.json');
  });

  it('test files reach other folders through their doors, or the internals of the folders they test', () => {
    expectOnlyListed(['test'], reachesInside, 'test-exceptions.json');
  });

  it('no file imports one that imports it back, through any chain', () => {
    expect(fileCircles()).toEqual([]);
  });

  it('no folder imports one that imports it back (test/, which tests everything, aside)', () => {
    expect(folderCircles()).toEqual([]);
  });

  it('reads each source file once, however many of the checks walk it', () => {
    // A walk of every folder the checks walk; then every check above, twice: none reads a file again.
    const walked = edges([...CHECKED, 'test']);
    const before = importReads.count;
    for (const _ of [1, 2]) layerProblems();
    expect(importReads.count - before).toBe(0);
    expect(importReads.count).toBeGreaterThan(0);
    // And the edges are what they were.
    expect(edges([...CHECKED, 'test'])).toEqual(walked);
  });

  it("no generator runs on generated/'s code: it makes its output from the spec, not from the last run's", () => {
    // A generator that imported generated/hash-recipes.ts signed the docs' samples with the recipes of
    // the run before: a changed recipe needed two `npm run generate` runs to come out fresh.
    const files = (dir: string): string[] =>
      readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((e) =>
        e.isDirectory() ? files(`${dir}/${e.name}`) : e.name.endsWith('.ts') ? [`${dir}/${e.name}`] : [],
      );
    const found = [...files('scripts/generators'), ...files('scripts/lib'), 'scripts/generate.ts'].flatMap((file) =>
      [
        ...readFileSync(path.join(ROOT, file), 'utf8').matchAll(
          /^import (?!type )[^;]*?from '([^']*\/generated\/[^']*)'/gm,
        ),
      ].map((m) => `${file}: ${m[1]}`),
    );
    expect(found).toEqual([]);
  });

  it('the checks see a break and a circle', () => {
    expect(broken('sandbox/handlers/vault.ts', 'server-stubs/core/refusals.ts')).toBe(true);
    expect(broken('sandbox/handlers/vault.ts', 'server-stubs/index.ts')).toBe(false);
    expect(broken('runtime/client.ts', 'sandbox/index.ts')).toBe(true);
    expect(broken('mock/run.ts', 'generated/operations.ts')).toBe(false);
    expect(broken('sandbox/main.ts', 'cli/main.ts')).toBe(true);
    // The generators read the refusal catalogue from the spec: scripts/ sits below the server stubs and the sandbox.
    expect(broken('scripts/generators/refusal-catalogue.ts', 'server-stubs/index.ts')).toBe(true);
    expect(broken('scripts/generators/refusal-catalogue.ts', 'sandbox/refusals.ts')).toBe(true);
    expect(broken('scripts/generators/refusal-catalogue.ts', 'generated/error-codes.ts')).toBe(false);
    expect(broken('bench/servers/cold-start.js', 'dist/server-stubs/index.js')).toBe(true);
    // Test fixtures are the tests' and the bench's: nothing shipped may reach them.
    expect(broken('server-stubs/index.ts', 'test/fixtures/example-handlers.ts')).toBe(true);
    expect(broken('bench/floor.ts', 'test/fixtures/example-handlers.ts')).toBe(false);
    // A test reaches a folder's internals only from the test folder that tests it.
    expect(reachesInside('test/stubs/wire.test.ts', 'server-stubs/core/json.ts')).toBe(false);
    expect(reachesInside('test/docs/docs.test.ts', 'server-stubs/core/json.ts')).toBe(true);
    expect(reachesInside('test/docs/docs.test.ts', 'server-stubs/index.ts')).toBe(false);
    expect(reachesInside('test/docs/docs.test.ts', 'generated/types.ts')).toBe(false);
    expect(
      circles(
        graphOf([
          ['a', 'b'],
          ['b', 'c'],
          ['c', 'a'],
          ['c', 'd'],
        ]),
      ),
    ).toEqual([['a', 'b', 'c']]);
  });
});
