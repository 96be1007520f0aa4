// The layers of ARCHITECTURE.md ("What each folder may import"), checked over the real import graph:
// every relative import of every source file outside test/, read with TypeScript's own pre-processor.
// Today's known exceptions are listed edge by edge: a new edge outside the rules fails, and so does
// an exception that no longer exists, so the list can only shrink.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { expect, it } from 'vitest';
import { ROOT } from '../support/contract.ts';

type Folder =
  | 'scripts'
  | 'generated'
  | 'runtime'
  | 'server-stubs'
  | 'sandbox'
  | 'mock'
  | 'contract'
  | 'cli'
  | 'bench'
  | 'lint'
  | 'test';
/** The folders whose imports are checked; test/ may import anything, but only the bench may import it. */
const FOLDERS: Folder[] = [
  'scripts',
  'generated',
  'runtime',
  'server-stubs',
  'sandbox',
  'mock',
  'contract',
  'cli',
  'bench',
  'lint',
];

/** The folders whose doors are named files: the entry, and the programs the package's bins start. */
const ENTRY: Partial<Record<Folder, string[]>> = {
  'server-stubs': ['server-stubs/index.ts'],
  sandbox: ['sandbox/index.ts', 'sandbox/main.ts', 'sandbox/control-client.ts'],
  // cli/commands/listen.ts is a program (`node cli/commands/listen.ts`), whose run() the kit bench starts in-process.
  cli: ['cli/index.ts', 'cli/commands/listen.ts'],
  contract: ['contract/index.ts', 'contract/run.ts'],
  mock: ['mock/run.ts'],
  scripts: [],
};

/** ARCHITECTURE.md's table: which other folders each folder may import. */
const MAY_IMPORT: Record<Folder, Folder[]> = {
  scripts: ['runtime', 'generated'],
  generated: ['runtime'],
  runtime: ['generated'],
  'server-stubs': ['generated', 'runtime'],
  sandbox: ['server-stubs', 'generated', 'runtime', 'cli'],
  mock: ['server-stubs', 'generated', 'runtime', 'cli'],
  contract: ['generated', 'runtime', 'server-stubs', 'sandbox'],
  cli: ['generated', 'runtime', 'server-stubs', 'sandbox', 'contract', 'mock', 'scripts'],
  bench: ['generated', 'runtime', 'server-stubs', 'sandbox', 'contract', 'cli', 'test'],
  lint: [],
  test: [],
};

/** Edges that break the rules today, if any: `from -> to`. */
const KNOWN_EXCEPTIONS = new Set<string>(
  JSON.parse(readFileSync(path.join(ROOT, 'test/architecture/layer-exceptions.json'), 'utf8')),
);

function sourceFiles(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && /\.(ts|js)$/.test(e.name) && !e.name.endsWith('.d.ts'))
    .map((e) => path.relative(ROOT, path.join(e.parentPath, e.name)));
}

const folderOf = (file: string) => [...FOLDERS, 'test' as const].find((f) => file.startsWith(`${f}/`));

function edges(): { from: string; to: string }[] {
  const found: { from: string; to: string }[] = [];
  for (const folder of FOLDERS) {
    for (const from of sourceFiles(folder)) {
      const { importedFiles } = ts.preProcessFile(readFileSync(path.join(ROOT, from), 'utf8'), true, true);
      for (const { fileName } of importedFiles) {
        if (!fileName.startsWith('.')) continue;
        found.push({ from, to: path.relative(ROOT, path.resolve(ROOT, path.dirname(from), fileName)) });
      }
    }
  }
  return found;
}

function broken(from: string, to: string): boolean {
  const a = folderOf(from);
  const b = folderOf(to);
  if (!a || !b || a === b) return false;
  if (!MAY_IMPORT[a].includes(b)) return true;
  const entries = ENTRY[b];
  return entries !== undefined && !entries.includes(to);
}

it('every import between folders follows ARCHITECTURE.md, but for the known exceptions', () => {
  const breaks = edges()
    .filter(({ from, to }) => broken(from, to))
    .map(({ from, to }) => `${from} -> ${to}`);
  expect(
    breaks.filter((edge) => !KNOWN_EXCEPTIONS.has(edge)),
    'new imports across the layers',
  ).toEqual([]);
  expect(
    [...KNOWN_EXCEPTIONS].filter((edge) => !breaks.includes(edge)),
    'exceptions gone: remove them from layer-exceptions.json',
  ).toEqual([]);
});

it('the check sees a break: a sandbox file reaching into server-stubs/core is one', () => {
  expect(broken('sandbox/handlers/vault.ts', 'server-stubs/core/refusals.ts')).toBe(true);
  expect(broken('sandbox/handlers/vault.ts', 'server-stubs/index.ts')).toBe(false);
  expect(broken('runtime/client.ts', 'sandbox/index.ts')).toBe(true);
  expect(broken('mock/run.ts', 'generated/operations.ts')).toBe(false);
  // Test fixtures are the tests' and the bench's: nothing shipped may reach them.
  expect(broken('server-stubs/index.ts', 'test/fixtures/example-handlers.ts')).toBe(true);
  expect(broken('bench/floor.ts', 'test/fixtures/example-handlers.ts')).toBe(false);
});
