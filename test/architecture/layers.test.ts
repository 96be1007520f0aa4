// The layers of ARCHITECTURE.md ("What each folder may import"), read from that file's table and
// checked over the real import graph: every relative import of every source file (dynamic imports
// included), read with TypeScript's own pre-processor. Known exceptions are listed edge by edge: a new
// edge outside the rules fails, and so does an exception that no longer exists, so the list only
// shrinks. And the graph has no circle: no file imports one that imports it back, through any
// chain, and no folder either.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/contract.ts';

interface Row {
  folder: string;
  /** The other folders it may import; undefined: anything (test/). */
  mayImport: string[] | undefined;
  /** The only files other folders may import; undefined: every file. */
  doors: string[] | undefined;
}

const ticked = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
const folderName = (name: string) => name.replace(/\/$/, '');

/** ARCHITECTURE.md's table, row by row, in its order (bottom layer first). */
function readTable(markdown: string): Row[] {
  const section = markdown.slice(markdown.indexOf('## What each folder may import')).split('\n');
  const first = section.findIndex((line) => line.startsWith('|'));
  const end = section.findIndex((line, i) => i > first && !line.startsWith('|'));
  const rows: Row[] = [];
  for (const line of section.slice(first, end)) {
    const [, name, may, doors] = line.split('|').map((c) => c.trim());
    if (!name?.startsWith('`')) continue;
    rows.push({
      folder: folderName(ticked(name)[0]!),
      mayImport: may === 'anything' ? undefined : ticked(may!).map(folderName),
      doors: doors!.startsWith('every file') ? undefined : ticked(doors!),
    });
  }
  return rows;
}

const TABLE = readTable(readFileSync(path.join(ROOT, 'ARCHITECTURE.md'), 'utf8'));
const RULES = new Map(TABLE.map((row) => [row.folder, row]));
/** The folders whose imports are checked; test/ may import anything, but only the bench may import it. */
const CHECKED = TABLE.filter((row) => row.mayImport !== undefined).map((row) => row.folder);

/** Edges that break the rules today, if any: `from -> to`. */
const KNOWN_EXCEPTIONS = new Set<string>(
  JSON.parse(readFileSync(path.join(ROOT, 'test/architecture/layer-exceptions.json'), 'utf8')),
);

function sourceFiles(dir: string): string[] {
  return (
    readdirSync(path.join(ROOT, dir), { withFileTypes: true, recursive: true })
      .filter((e) => e.isFile() && /\.(ts|js)$/.test(e.name) && !e.name.endsWith('.d.ts'))
      .map((e) => path.relative(ROOT, path.join(e.parentPath, e.name)))
      // The tool matrix's own installed tools (scripts/tools/node_modules, scripts/setup/tools.sh) are not the package's code.
      .filter((file) => !file.split(path.sep).includes('node_modules'))
  );
}

const folderOf = (file: string) => TABLE.map((row) => row.folder).find((f) => file.startsWith(`${f}/`));

function edges(folders: string[]): { from: string; to: string }[] {
  const found: { from: string; to: string }[] = [];
  for (const folder of folders) {
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
  if (a === undefined || b === undefined) return to.startsWith('dist/') || from.startsWith('dist/');
  if (a === b) return false;
  const may = RULES.get(a)!.mayImport;
  if (may !== undefined && !may.includes(b)) return true;
  const doors = RULES.get(b)!.doors;
  return doors !== undefined && !doors.includes(to);
}

/** Every circle of a graph (its strongly connected components of more than one node, or a self-loop). */
function circles(graph: Map<string, Set<string>>): string[][] {
  let index = 0;
  const order = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string) => {
    order.set(node, index);
    low.set(node, index++);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!order.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node)!, order.get(next)!));
    }
    if (low.get(node) === order.get(node)) {
      const component: string[] = [];
      let top: string;
      do {
        top = stack.pop()!;
        onStack.delete(top);
        component.push(top);
      } while (top !== node);
      if (component.length > 1 || graph.get(node)?.has(node)) found.push(component.sort());
    }
  };
  for (const node of graph.keys()) if (!order.has(node)) visit(node);
  return found;
}

const graphOf = (pairs: [string, string][]) => {
  const graph = new Map<string, Set<string>>();
  for (const [a, b] of pairs) {
    if (!graph.has(a)) graph.set(a, new Set());
    graph.get(a)!.add(b);
  }
  return graph;
};

describe('the layers', () => {
  it('ARCHITECTURE.md has the table, each row naming only folders above it', () => {
    expect(CHECKED).toEqual(
      expect.arrayContaining(['runtime', 'generated', 'server-stubs', 'sandbox', 'cli', 'bench']),
    );
    const seen: string[] = [];
    // test/ tests everything, the bench among it, and the bench takes test/'s fixtures: outside the order.
    for (const row of TABLE.filter((r) => r.mayImport !== undefined)) {
      expect(
        row.mayImport!.filter((f) => f !== 'test' && !seen.includes(f)),
        `${row.folder}/ may import only folders above it`,
      ).toEqual([]);
      seen.push(row.folder);
    }
  });

  it('every import between folders follows ARCHITECTURE.md, but for the known exceptions', () => {
    const breaks = edges(CHECKED)
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

  it('no file imports one that imports it back, through any chain', () => {
    const all = edges([...CHECKED, 'test']).map(({ from, to }) => [from, to] as [string, string]);
    expect(circles(graphOf(all))).toEqual([]);
  });

  it('no folder imports one that imports it back (test/, which tests everything, aside)', () => {
    const between = edges(CHECKED)
      .map(({ from, to }) => [folderOf(from), folderOf(to)] as [string, string])
      .filter(([a, b]) => a && b && a !== b && b !== 'test');
    expect(circles(graphOf(between))).toEqual([]);
  });

  it('the checks see a break and a circle', () => {
    expect(broken('sandbox/handlers/vault.ts', 'server-stubs/core/refusals.ts')).toBe(true);
    expect(broken('sandbox/handlers/vault.ts', 'server-stubs/index.ts')).toBe(false);
    expect(broken('runtime/client.ts', 'sandbox/index.ts')).toBe(true);
    expect(broken('mock/run.ts', 'generated/operations.ts')).toBe(false);
    expect(broken('sandbox/main.ts', 'cli/main.ts')).toBe(true);
    expect(broken('bench/servers/cold-start.js', 'dist/server-stubs/index.js')).toBe(true);
    // Test fixtures are the tests' and the bench's: nothing shipped may reach them.
    expect(broken('server-stubs/index.ts', 'test/fixtures/example-handlers.ts')).toBe(true);
    expect(broken('bench/floor.ts', 'test/fixtures/example-handlers.ts')).toBe(false);
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
