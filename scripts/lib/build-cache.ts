// A content-addressed cache for a tool's output that is a pure function of its input: the same
// input, tool and installed dependencies give the same bytes, so a build that was done once is read
// back instead of run again. Redocly's build-docs costs about 0.55 s of CPU in a child process (a
// whole generate went from 3.54 to 2.98 s once its page was cached), and the same page is built
// several times over: `npm run docs` then `npm run generate`, the freshness check of generated/, a
// copy of the package that regenerates itself (test/architecture/add-method.test.ts builds each
// copy's page three times).
//
// The key covers everything the output depends on: the input given by the caller (the documents,
// and the tool's arguments and environment, paths left out), and the installed dependency tree
// (npm's own record of it, node_modules/.package-lock.json, rewritten by every install), so an
// upgrade of the tool never serves a page it did not build. PGW_BUILD_CACHE=off builds every time.
// The cache lives in node_modules/.cache (gone with node_modules, never packed, never committed); it
// keeps the most recently used entries of each kind (KEEP) and drops older ones.
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, stat, utimes } from 'node:fs/promises';
import path from 'node:path';

/**
 * Entries kept of a kind: enough for what one test run builds of it (each would be evicted by the next
 * otherwise, and built again on the next run), few enough to stay small. Redocly's pages weigh 4 MB
 * (the package's, two copies', what a branch switch brings back); its diff reports, some kB.
 */
const KEEP: Record<string, number> = { docs: 8, 'redocly-diff': 64 };

const installedTree = new Map<string, { seen: string; hash: Promise<string> }>();
/** What npm installed, as a hash (empty where no install record exists: the key then rests on the input alone). */
async function treeOf(root: string): Promise<string> {
  const record = path.join(root, 'node_modules/.package-lock.json');
  const info = await stat(record).catch(() => undefined);
  // Hashed again only when npm rewrote it (a long-lived process may outlast an install).
  const seen = info ? `${info.mtimeMs}:${info.size}` : '';
  const known = installedTree.get(record);
  if (known?.seen === seen) return known.hash;
  const hash = info
    ? readFile(record).then(
        (bytes) => createHash('sha256').update(bytes).digest('hex'),
        () => '',
      )
    : Promise.resolve('');
  installedTree.set(record, { seen, hash });
  return hash;
}

/**
 * The bytes `build` writes into the file it is given for this input, from the cache when the same
 * input was built before with the same installed tree. `input` must hold everything the output
 * depends on besides the installed tools (the document, the options, the tool's arguments).
 */
export async function cachedBuild(
  root: string,
  kind: string,
  input: readonly (string | Uint8Array)[],
  build: (file: string) => Promise<void>,
): Promise<Buffer> {
  const dir = path.join(root, 'node_modules/.cache/pgw-build', kind);
  const hash = createHash('sha256').update(await treeOf(root));
  for (const part of input) hash.update(String(part.length)).update(':').update(part);
  const entry = path.join(dir, hash.digest('hex'));
  const off = process.env.PGW_BUILD_CACHE === 'off';
  if (!off) {
    const hit = await readFile(entry).catch(() => undefined);
    if (hit) {
      const now = new Date();
      await utimes(entry, now, now).catch(() => {}); // recently used: kept by the pruning below
      return hit;
    }
  }
  await mkdir(dir, { recursive: true });
  // Built beside the entry and renamed into place: a concurrent build of the same input (parallel
  // test files) never lets a reader see half a file.
  const temporary = `${entry}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  try {
    await build(temporary);
    const bytes = await readFile(temporary);
    if (off) return bytes;
    await rename(temporary, entry);
    await prune(dir, KEEP[kind] ?? 8);
    return bytes;
  } finally {
    await rm(temporary, { force: true });
  }
}

/** Drops all but the `keep` most recently used entries (and temporary files an interrupted build left). */
async function prune(dir: string, keep: number): Promise<void> {
  const names = await readdir(dir).catch(() => []);
  const entries = await Promise.all(
    names.map(async (name) => ({ name, used: (await stat(path.join(dir, name)).catch(() => undefined))?.mtimeMs })),
  );
  const hour = Date.now() - 3_600_000;
  const stale = entries.filter((e) => e.used !== undefined && e.name.endsWith('.tmp') && e.used < hour);
  const kept = entries
    .filter((e) => e.used !== undefined && !e.name.endsWith('.tmp'))
    .sort((a, b) => b.used! - a.used!);
  for (const e of [...stale, ...kept.slice(keep)]) await rm(path.join(dir, e.name), { force: true });
}
