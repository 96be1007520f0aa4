// npm run build (and npm pack's prepack): tsc -p tsconfig.build.json, then the server bundle
// (scripts/build-server-bundle.ts), both skipped when what they read is, byte for byte, what the build
// on disk was made from.
//
// Why: every test run packs the package once (test/support/packed.ts), and its build cost 4.3 s of
// CPU when nothing had changed since the last run: tsc, incremental as it is, still parses every
// source and every declaration it reads before it finds nothing to emit.
//
// When it builds: the decision is a hash of the contents (not the times) of every file the build
// reads, kept in dist/ (STAMP) once a build has ended well, with a hash of every file the build left in
// dist/ (so that a tsc run by hand since, an edit or a deletion there, is seen): the build's tsconfig
// files (read by TypeScript's own reader), every file under the folders its `include` names,
// package.json (its "type" decides how tsc emits), npm's record of the installed tree (TypeScript's
// version, the declarations of the dependencies, esbuild's version) and these two scripts. Without
// npm's record (another package manager) it builds every time. The stamp is removed before a build
// starts, so a build that fails or is stopped halfway is redone. After a build, every file tsc says it
// read (its build info's fileNames) must be one of those inputs or an installed package's: a new
// import from outside them stops the build, naming the file, rather than leave the next build blind to
// it. Not seen: a package linked into node_modules (npm link) changed in its own folder; --force then.
//
//   node scripts/build.ts [--force]     (--force: build even when the stamp matches)
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const CONFIG = 'tsconfig.build.json';
/** The hash of the inputs of the build that wrote dist/, and of its outputs, written when that build ended well. */
export const STAMP = 'dist/build-inputs.sha256';
/**
 * npm's record of the installed tree: what tells the stamp that a dependency changed (TypeScript, the
 * declarations tsc reads, esbuild). Without it (another package manager) nothing would, so every build
 * builds.
 */
const INSTALLED = 'node_modules/.package-lock.json';
/** tsc's record of its last build (tsconfig.build.json's tsBuildInfoFile). */
const BUILD_INFO = 'dist/tsconfig.build.tsbuildinfo';
/** Read by the build besides the sources: the scripts that make it, and what npm installed. */
const TOOLS = ['package.json', 'scripts/build.ts', 'scripts/build-server-bundle.ts', 'package-lock.json', INSTALLED];

/** A tsconfig file as tsc reads it (comments and trailing commas allowed): TypeScript's own reader. */
function readConfig(root: string, file: string): { extends?: string; include?: string[]; files?: string[] } {
  const ts = createRequire(import.meta.url)('typescript') as typeof import('typescript');
  const { config, error } = ts.readConfigFile(path.join(root, file), ts.sys.readFile);
  if (error) throw new Error(`${file}: ${ts.flattenDiagnosticMessageText(error.messageText, '\n')}`);
  return config;
}

/** The files the build reads (relative to the checkout, sorted): see the header. */
export function buildInputs(root = ROOT): string[] {
  const configs: string[] = [];
  let include: string[] | undefined;
  for (let file: string | undefined = CONFIG; file; ) {
    configs.push(file);
    const config = readConfig(root, file);
    if (config.files) throw new Error(`${file}: "files" is not read by scripts/build.ts; name folders in "include"`);
    include ??= config.include;
    const parent: string | undefined = config.extends;
    if (parent && !parent.startsWith('.'))
      throw new Error(`${file}: scripts/build.ts reads a relative "extends" only, not ${parent}`);
    file = parent ? path.join(path.dirname(file), parent) : undefined;
  }
  if (!include?.length) throw new Error(`${CONFIG}: no "include" for scripts/build.ts to read`);
  const files = new Set(configs);
  for (const folder of include) {
    if (!/^[\w-]+(\/[\w-]+)*$/.test(folder))
      throw new Error(`${CONFIG}: scripts/build.ts reads "include" as folder names, not ${folder}`);
    for (const entry of readdirSync(path.join(root, folder), { recursive: true, withFileTypes: true }))
      if (entry.isFile()) files.add(path.relative(root, path.join(entry.parentPath, entry.name)));
  }
  for (const file of TOOLS) if (existsSync(path.join(root, file))) files.add(file);
  return [...files].map((f) => f.split(path.sep).join('/')).sort();
}

/** The inputs' contents as one hash, each file's path and length with its bytes. */
export function inputsHash(root = ROOT): string {
  const hash = createHash('sha256');
  for (const file of buildInputs(root)) {
    const bytes = readFileSync(path.join(root, file));
    hash.update(`${file}\0${bytes.length}\0`).update(bytes);
  }
  return hash.digest('hex');
}

/**
 * What the build left, every file of dist/ but the stamp, as one hash: a file of dist/ changed or
 * removed since (a `tsc -p` or `tsc -w` run by hand, an edit, a deletion) means the next build builds,
 * even when the sources are back as they were stamped.
 */
function outputsHash(root: string): string {
  const hash = createHash('sha256');
  const files = readdirSync(path.join(root, 'dist'), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.relative(root, path.join(e.parentPath, e.name)).split(path.sep).join('/'))
    .filter((f) => f !== STAMP)
    .sort();
  for (const file of files) hash.update(`${file}\0`).update(readFileSync(path.join(root, file)));
  return hash.digest('hex');
}

/** The files tsc's last build read that are neither inputs nor an installed package's (see the header). */
export function readOutsideInputs(root = ROOT): string[] {
  const info = path.join(root, BUILD_INFO);
  const { fileNames } = JSON.parse(readFileSync(info, 'utf8')) as { fileNames?: string[] };
  if (!Array.isArray(fileNames))
    throw new Error(`${path.relative(root, info)} lists no fileNames: scripts/build.ts cannot tell what tsc read`);
  const inputs = new Set(buildInputs(root));
  return fileNames
    .map((f) =>
      path
        .relative(root, path.resolve(path.dirname(info), f))
        .split(path.sep)
        .join('/'),
    )
    .filter((f) => !inputs.has(f) && !f.split('/').includes('node_modules'));
}

export interface BuildSteps {
  compile(root: string): void | Promise<void>;
  bundle(root: string): unknown;
}

const steps: BuildSteps = {
  compile: (root) => {
    const tsc = createRequire(path.join(root, 'package.json')).resolve('typescript/bin/tsc');
    execFileSync(process.execPath, [tsc, '-p', CONFIG], { cwd: root, stdio: 'inherit' });
  },
  bundle: async (root) => (await import('./build-server-bundle.ts')).buildServerBundle(root),
};

/** Builds dist/ unless the stamp says it was built from these very inputs; says which it did. */
export async function build(
  root = ROOT,
  { force = false, with: using = steps }: { force?: boolean; with?: BuildSteps } = {},
): Promise<'built' | 'up to date'> {
  const stamp = path.join(root, STAMP);
  const hash = inputsHash(root);
  const made = existsSync(stamp) ? readFileSync(stamp, 'utf8').split('\n') : undefined;
  const left = made === undefined ? undefined : outputsHash(root);
  if (!force && made?.[0] === hash && made[1] === left) return 'up to date';
  rmSync(stamp, { force: true });
  // tsc trusts its build info that the outputs it lists are there as it wrote them, and writes none of
  // an unchanged source again: when dist/ is not as the stamped build left it (a file edited or
  // removed, no stamp to tell), or asked to (--force), it compiles everything afresh.
  if (force || made === undefined || made[1] !== left) rmSync(path.join(root, BUILD_INFO), { force: true });
  await using.compile(root);
  const outside = readOutsideInputs(root);
  if (outside.length)
    throw new Error(
      `tsc read ${outside.join(', ')}, which scripts/build.ts does not count among the build's inputs: a change there would not rebuild dist/`,
    );
  await using.bundle(root);
  // The hash taken before the build: a file changed while it ran gives another hash, and the next build.
  if (existsSync(path.join(root, INSTALLED))) writeFileSync(stamp, `${hash}\n${outputsHash(root)}\n`);
  else
    console.error(
      `scripts/build.ts: no ${INSTALLED} (installed by another tool than npm?), so dist/ is not stamped and the next build builds again`,
    );
  return 'built';
}

if (import.meta.main) {
  const done = await build(ROOT, { force: process.argv.includes('--force') });
  if (done === 'up to date') console.error(`dist/ is up to date (${STAMP}); --force builds it again`);
}
