// The server bundle (scripts/build-server-bundle.ts) carries the generated tables a server reads (the
// operation table, the hash recipes, the refusal catalogue) as JSON texts given to JSON.parse, not as
// object literals: V8 compiles a literal token by token at every start, and scans a string at once.
// What is held here: the module made of a table gives the very values of the table (deep-equal, the
// same keys in the same order); a module that is not data alone (an import, a function, a value JSON
// does not carry whole) is left as tsc wrote it. Counted and compared, not timed: the time is in
// docs/BENCHMARKS.md's cold start.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as hashRecipes from '../../generated/hash-recipes.ts';
import * as operations from '../../generated/operations.ts';
import * as refusalCatalogue from '../../generated/refusal-catalogue.ts';
import * as specConstants from '../../generated/spec-constants.ts';
import { dataModuleAsJson, moduleAsItReads } from '../../scripts/build-server-bundle.ts';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'pgw-bundle-data-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** The module text loaded as a module: its exports. */
let n = 0;
async function load(text: string): Promise<Record<string, unknown>> {
  const file = path.join(dir, `m${n++}.mjs`);
  await writeFile(file, text);
  return { ...(await import(pathToFileURL(file).href)) };
}

describe("the server bundle's generated tables", () => {
  const tables = { operations, hashRecipes, refusalCatalogue, specConstants };

  it.each(Object.entries(tables))(
    '%s: the module made of it gives the same values, the large ones by JSON.parse',
    async (_, mod) => {
      const exports = { ...mod } as Record<string, unknown>;
      const text = dataModuleAsJson('', exports);
      expect(text).toBeDefined();
      const loaded = await load(text!);
      expect(Object.keys(loaded).sort()).toEqual(Object.keys(exports).sort());
      for (const [name, value] of Object.entries(exports)) {
        expect(loaded[name], name).toStrictEqual(value);
        // The same keys in the same order (toStrictEqual does not look at the order).
        expect(JSON.stringify(loaded[name]), name).toBe(JSON.stringify(value));
      }
      // Each table of 1 KB of JSON or more is a JSON text; each smaller value a literal.
      const parsed = [...text!.matchAll(/^export const (\w+) = \/\* @__PURE__ \*\/ JSON\.parse\(/gm)].map((m) => m[1]);
      const large = Object.entries(exports)
        .filter(([, v]) => typeof v === 'object' && JSON.stringify(v).length >= 1024)
        .map(([k]) => k);
      expect(parsed.sort()).toEqual(large.sort());
    },
  );

  it('holds the operation table as JSON: the table every request reads, the largest', async () => {
    const text = dataModuleAsJson('', { ...operations })!;
    expect(text).toMatch(/^export const operations = \/\* @__PURE__ \*\/ JSON\.parse\(/m);
  });

  it('leaves a module that is not data alone as it is', () => {
    // An import (the protocols table imports the protocols' code).
    expect(dataModuleAsJson('import { x } from "./x.js";\nexport const a = 1;', { a: 1 })).toBeUndefined();
    // A value JSON would not give back: a function, undefined (a key JSON drops), NaN (null), a Date (a string), -0 (0).
    for (const value of [() => 1, { a: undefined }, [Number.NaN], { at: new Date(0) }, { n: -0 }, 10n])
      expect(dataModuleAsJson('', { table: value }), String(value)).toBeUndefined();
    // An object two parts share (JSON.parse would make two), and a cycle.
    const shared = ['a', 'b'];
    expect(dataModuleAsJson('', { table: { x: shared, y: shared } })).toBeUndefined();
    expect(dataModuleAsJson('', { one: { x: shared }, two: { y: shared } })).toBeUndefined();
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expect(dataModuleAsJson('', { table: cycle })).toBeUndefined();
    // The same values side by side, not shared, are data.
    expect(dataModuleAsJson('', { table: { x: ['a'], y: ['a'] } })).toBeDefined();
  });

  it('reads a table as its file says now, though the process imported the file before it changed', async () => {
    const file = path.join(dir, 'changing.mjs');
    await writeFile(file, 'export const zone = "Australia/Sydney";\n');
    expect((await moduleAsItReads(file)).exports.zone).toBe('Australia/Sydney');
    await writeFile(file, 'export const zone = "Australia/Perth";\n');
    const now = await moduleAsItReads(file);
    expect(now.source).toContain('Perth');
    expect(now.exports.zone).toBe('Australia/Perth');
  });
});
