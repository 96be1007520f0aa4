// A copy of the package in a temporary folder, for the tests that make a change there as a
// contributor would (add-method.test.ts, third-format.test.ts) and compare the files after with the
// package's own: what git, npm and runs leave is not copied, and node_modules is linked.
import { cp, mkdtemp, readdir, readFile, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from './contract.ts';

// A node_modules folder at any depth (scripts/tools/ installs the tool matrix's own, 650 MB) is no part of the sources.
const SKIPPED = new Set(['node_modules', '.git', 'dist', 'data', 'test-results']);
const skipped = (file: string) =>
  SKIPPED.has(file.split(path.sep)[0]!) || file.split(path.sep).includes('node_modules');

/** A fresh copy of the package (its sources, node_modules linked), in a folder named after `prefix`. */
export async function copyPackage(prefix: string): Promise<string> {
  const copy = await mkdtemp(path.join(os.tmpdir(), prefix));
  await cp(ROOT, copy, { recursive: true, filter: (source) => !skipped(path.relative(ROOT, source)) });
  await symlink(path.join(ROOT, 'node_modules'), path.join(copy, 'node_modules'));
  return copy;
}

/** Every file under dir but generated/ and the saved bench results, path → content. */
export async function tree(dir: string): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  for (const e of await readdir(dir, { recursive: true, withFileTypes: true })) {
    const file = path.relative(dir, path.join(e.parentPath, e.name));
    if (!e.isFile() || skipped(file) || file.startsWith('generated/') || file.startsWith('bench/results/')) continue;
    files.set(file, await readFile(path.join(dir, file), 'utf8'));
  }
  return files;
}

/** The files of the copy that differ from the package's (generated/ aside), sorted. */
export async function changedFiles(copy: string): Promise<string[]> {
  const before = await tree(ROOT);
  const after = await tree(copy);
  return [...after.keys()].filter((file) => before.get(file) !== after.get(file)).sort();
}
