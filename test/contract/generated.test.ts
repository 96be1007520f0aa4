// generated/ is never edited by hand and never stale: regenerating from spec/ gives the same bytes.
// The checks are functions (generated-checks.ts) that test/architecture/add-method.test.ts also runs
// on a copy of the package with a method added.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  composedListsInSpec,
  docsOnlyProblems,
  fileListProblems,
  recipeTableProblems,
  regenerate,
  staleFiles,
  unnamedFiles,
} from './generated-checks.ts';

describe('generated/', () => {
  let fresh: Awaited<ReturnType<typeof regenerate>>;
  beforeAll(async () => {
    fresh = await regenerate();
  });
  afterAll(() => fresh.remove());

  it('holds exactly the files `npm run generate` writes', async () => {
    expect(await fileListProblems(fresh.folder), '+ only in generated/, - only in a fresh generation').toEqual([]);
  });

  it('is fresh: every file is byte for byte what spec/ generates now (run `npm run generate` if not)', async () => {
    expect(await staleFiles(fresh.folder)).toEqual([]);
  });

  it('`npm run docs` (the docs alone) writes the same page as `npm run generate`', async () => {
    expect(await docsOnlyProblems(fresh.folder)).toEqual([]);
  }, 120_000);

  it('names the script that made it, on its first line (JSON: its first member)', async () => {
    expect(await unnamedFiles(fresh.folder)).toEqual([]);
  });
});

describe('spec/ holds no generated text', () => {
  // The parts derived from other parts are composed as the document is read (compose.ts).
  it('no shared path file lists its methods: they are composed from spec/methods/<group>/', async () => {
    expect(await composedListsInSpec()).toEqual([]);
  });

  it("the intro's recipe table is composed: spec/openapi.yaml has its header and no row", async () => {
    expect(await recipeTableProblems()).toEqual([]);
  });
});
