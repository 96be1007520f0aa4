// The layers of ARCHITECTURE.md ("What each folder may import") and the import graph they are checked
// over, for test/architecture/layers.test.ts. Paths are taken from where this file is: a copy of the
// package checks itself by importing its own copy of this module (test/architecture/add-method.test.ts
// runs layerProblems on a copy with a method added).
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const ROOT = path.resolve(import.meta.dirname, '../..');

export interface Row {
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

export const TABLE = readTable(readFileSync(path.join(ROOT, 'ARCHITECTURE.md'), 'utf8'));
export const RULES = new Map(TABLE.map((row) => [row.folder, row]));
/** The folders whose imports are checked; test/ may import anything, but only the bench may import it. */
export const CHECKED = TABLE.filter((row) => row.mayImport !== undefined).map((row) => row.folder);

/**
 * ARCHITECTURE.md's second table: the test folders that may reach other folders' internals, and
 * whose (every other test file reaches a folder through its doors).
 */
function readTestTable(markdown: string): Map<string, string[]> {
  const lines = markdown.split('\n');
  const first = lines.findIndex((line) => line.startsWith('| test folder |'));
  const end = lines.findIndex((line, i) => i > first && !line.startsWith('|'));
  const reach = new Map<string, string[]>();
  for (const line of lines.slice(first + 2, end)) {
    const [, folder, internals] = line.split('|').map((c) => c.trim());
    reach.set(folderName(ticked(folder!)[0]!), ticked(internals!).map(folderName));
  }
  return reach;
}

const TEST_REACH = readTestTable(readFileSync(path.join(ROOT, 'ARCHITECTURE.md'), 'utf8'));

/** A test file's import of another folder's internal module, where its test folder does not test that folder. */
export function reachesInside(from: string, to: string): boolean {
  const target = folderOf(to);
  if (target === undefined || target === 'test') return false;
  const doors = RULES.get(target)!.doors;
  if (doors === undefined || doors.includes(to)) return false;
  const testFolder = from.split('/').slice(0, 2).join('/');
  return !(TEST_REACH.get(testFolder) ?? []).includes(target);
}

function sourceFiles(dir: string): string[] {
  return (
    readdirSync(path.join(ROOT, dir), { withFileTypes: true, recursive: true })
      // Installed packages are not the project's sources (scripts/tools holds the matrix's own tools).
      .filter((e) => !e.parentPath.split(path.sep).includes('node_modules'))
      .filter((e) => e.isFile() && /\.(ts|js)$/.test(e.name) && !e.name.endsWith('.d.ts'))
      .map((e) => path.relative(ROOT, path.join(e.parentPath, e.name)))
  );
}

export const folderOf = (file: string) => TABLE.map((row) => row.folder).find((f) => file.startsWith(`${f}/`));

/** Each file's imports as last read, with the text they were read from: layerProblems reads every file twice. */
const read = new Map<string, { text: string; imports: string[] }>();
/** How many files TypeScript's pre-processor has read (test/architecture/layers.test.ts reads it). */
export const importReads = { count: 0 };

/** The modules a source file imports (dynamic imports included), read again only when its text changed. */
function importsOf(file: string): string[] {
  const text = readFileSync(path.join(ROOT, file), 'utf8');
  const known = read.get(file);
  if (known?.text === text) return known.imports;
  importReads.count++;
  const imports = ts.preProcessFile(text, true, true).importedFiles.map((f) => f.fileName);
  read.set(file, { text, imports });
  return imports;
}

export function edges(folders: string[]): { from: string; to: string }[] {
  const found: { from: string; to: string }[] = [];
  for (const folder of folders) {
    for (const from of sourceFiles(folder)) {
      for (const fileName of importsOf(from)) {
        if (!fileName.startsWith('.')) continue;
        found.push({ from, to: path.relative(ROOT, path.resolve(ROOT, path.dirname(from), fileName)) });
      }
    }
  }
  return found;
}

export function broken(from: string, to: string): boolean {
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
export function circles(graph: Map<string, Set<string>>): string[][] {
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

export const graphOf = (pairs: [string, string][]) => {
  const graph = new Map<string, Set<string>>();
  for (const [a, b] of pairs) {
    if (!graph.has(a)) graph.set(a, new Set());
    graph.get(a)!.add(b);
  }
  return graph;
};

/**
 * The imports of `folders` that `breaks` a rule, against the list of known ones (`from -> to`, in
 * test/architecture/`listed`): the new ones (each fails) and the listed ones that are gone (each fails
 * too, so the list only shrinks).
 */
export function unlisted(
  folders: string[],
  breaks: (from: string, to: string) => boolean,
  listed: string,
): { found: string[]; gone: string[] } {
  const known = new Set<string>(JSON.parse(readFileSync(path.join(ROOT, 'test/architecture', listed), 'utf8')));
  const breaking = edges(folders)
    .filter(({ from, to }) => breaks(from, to))
    .map(({ from, to }) => `${from} -> ${to}`);
  return { found: breaking.filter((edge) => !known.has(edge)), gone: [...known].filter((e) => !breaking.includes(e)) };
}

/** The table's rows that may import a folder not above them. */
export function tableProblems(): string[] {
  const problems: string[] = [];
  const seen: string[] = [];
  // test/ tests everything, the bench among it, and the bench takes test/'s fixtures: outside the order.
  for (const row of TABLE.filter((r) => r.mayImport !== undefined)) {
    for (const f of row.mayImport!.filter((f) => f !== 'test' && !seen.includes(f)))
      problems.push(`${row.folder}/ may import ${f}/, which is not above it`);
    seen.push(row.folder);
  }
  return problems;
}

/** The circles among files (every folder's and test/'s). */
export const fileCircles = () =>
  circles(graphOf(edges([...CHECKED, 'test']).map(({ from, to }) => [from, to] as [string, string])));

/** The circles among folders (test/, which tests everything, aside). */
export const folderCircles = () =>
  circles(
    graphOf(
      edges(CHECKED)
        .map(({ from, to }) => [folderOf(from), folderOf(to)] as [string, string])
        .filter(([a, b]) => a && b && a !== b && b !== 'test'),
    ),
  );

/** Every check above on this checkout, one line per problem. */
export function layerProblems(): string[] {
  const rules = unlisted(CHECKED, broken, 'layer-exceptions.json');
  const tests = unlisted(['test'], reachesInside, 'test-exceptions.json');
  return [
    ...tableProblems(),
    ...rules.found.map((e) => `breaks a layer: ${e}`),
    ...rules.gone.map((e) => `exception gone: ${e}`),
    ...tests.found.map((e) => `reaches inside: ${e}`),
    ...tests.gone.map((e) => `test exception gone: ${e}`),
    ...fileCircles().map((c) => `file circle: ${c.join(' ')}`),
    ...folderCircles().map((c) => `folder circle: ${c.join(' ')}`),
  ];
}
