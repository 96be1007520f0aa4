// npm run build (npm pack's prepack) skips tsc and the bundle when the stamp in dist/ says the build on
// disk was made from these very inputs (scripts/build.ts); it must never leave dist/ stale. On a small
// package of its own, with the build's two steps replaced by stand-ins that copy each source into
// dist/ (the decision is what is tested; tsc and esbuild are npm pack's, test/contract/package.test.ts).
import { mkdir, mkdtemp, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type BuildSteps, build, buildInputs, STAMP } from '../../scripts/build.ts';

let root: string;
let steps: string[];

/**
 * tsc's stand-in, incremental as tsc is: it writes a source to dist/ only when its build info is missing
 * or holds another version of that source (tsc trusts the outputs its build info lists to be there), and
 * its build info as tsc does (fileNames relative to dist/).
 */
const standIns = (read: string[] = []): BuildSteps => ({
  compile: async (at) => {
    steps.push('compile');
    await mkdir(path.join(at, 'dist/src'), { recursive: true });
    const last = await readFile(path.join(at, 'dist/tsconfig.build.tsbuildinfo'), 'utf8').then(
      (text) => JSON.parse(text).versions as string[],
      () => undefined,
    );
    for (const [i, name] of ['a.ts', 'b.ts'].entries()) {
      const source = await readFile(path.join(at, 'src', name), 'utf8');
      if (last?.[i] !== source) await writeFile(path.join(at, 'dist/src', name.replace('.ts', '.js')), source);
    }
    const fileNames = ['../node_modules/typescript/lib/lib.es5.d.ts', '../src/a.ts', '../src/b.ts', ...read];
    // As tsc's, it holds what it compiled (tsc: a hash of each file).
    const versions = await Promise.all(['a.ts', 'b.ts'].map((f) => readFile(path.join(at, 'src', f), 'utf8')));
    await writeFile(path.join(at, 'dist/tsconfig.build.tsbuildinfo'), JSON.stringify({ fileNames, versions }));
  },
  bundle: async (at) => {
    steps.push('bundle');
    const parts = await Promise.all(['a.js', 'b.js'].map((f) => readFile(path.join(at, 'dist/src', f), 'utf8')));
    await writeFile(path.join(at, 'dist/server.js'), parts.join(''));
  },
});
const bundled = () => readFile(path.join(root, 'dist/server.js'), 'utf8');

beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'pgw-build-'));
  steps = [];
  await mkdir(path.join(root, 'src/deep'), { recursive: true });
  await mkdir(path.join(root, 'node_modules'));
  // As the checkout's: comments, a relative extends.
  await writeFile(
    path.join(root, 'tsconfig.json'),
    '{\n  // Type-checks everything.\n  "compilerOptions": { "strict": true },\n  "include": ["src", "test"]\n}\n',
  );
  await writeFile(
    path.join(root, 'tsconfig.build.json'),
    '{\n  // What the package runs.\n  "extends": "./tsconfig.json",\n  "compilerOptions": { "outDir": "dist" },\n  "include": ["src"],\n}\n',
  );
  await writeFile(path.join(root, 'package.json'), '{"type":"module"}');
  await writeFile(
    path.join(root, 'node_modules/.package-lock.json'),
    '{"packages":{"node_modules/typescript":{"version":"5.9.3"}}}',
  );
  await writeFile(path.join(root, 'src/a.ts'), 'export const a = 1;\n');
  await writeFile(path.join(root, 'src/b.ts'), 'export const b = 2;\n');
  await writeFile(path.join(root, 'src/deep/c.json'), '{"c":3}');
});
afterEach(() => rm(root, { recursive: true, force: true }));

describe('npm run build', () => {
  it('reads the build config, every file of the folders it includes, package.json and the installed tree', () => {
    expect(buildInputs(root)).toEqual([
      'node_modules/.package-lock.json',
      'package.json',
      'src/a.ts',
      'src/b.ts',
      'src/deep/c.json',
      'tsconfig.build.json',
      'tsconfig.json',
    ]);
  });

  it('builds once, then skips both steps while nothing it reads has changed', async () => {
    expect(await build(root, { with: standIns() })).toBe('built');
    expect(steps).toEqual(['compile', 'bundle']);
    expect(await bundled()).toBe('export const a = 1;\nexport const b = 2;\n');
    expect(await build(root, { with: standIns() })).toBe('up to date');
    expect(steps).toEqual(['compile', 'bundle']);
    // --force builds all the same.
    expect(await build(root, { force: true, with: standIns() })).toBe('built');
    expect(steps).toHaveLength(4);
  });

  it('a source changed with its time set back still reaches dist/: the decision reads contents, not times', async () => {
    const file = path.join(root, 'src/b.ts');
    // A time a file system keeps exactly (whole seconds), so that setting it again gives the same time.
    const then = new Date('2026-01-01T00:00:00Z');
    await utimes(file, then, then);
    await build(root, { with: standIns() });
    // Same length, another content, its old time (as a copy that keeps times, or a restore, would leave it).
    await writeFile(file, 'export const b = 9;\n');
    await utimes(file, then, then);
    expect((await stat(file)).mtimeMs).toBe(then.getTime());
    expect(await build(root, { with: standIns() })).toBe('built');
    expect(await bundled()).toBe('export const a = 1;\nexport const b = 9;\n');
  });

  it.each([
    ['a file added to an included folder', (at: string) => writeFile(path.join(at, 'src/deep/d.ts'), 'export {};\n')],
    ['a file removed', (at: string) => rm(path.join(at, 'src/deep/c.json'))],
    ['package.json', (at: string) => writeFile(path.join(at, 'package.json'), '{"type":"commonjs"}')],
    [
      'the installed tree (another TypeScript)',
      (at: string) =>
        writeFile(
          path.join(at, 'node_modules/.package-lock.json'),
          '{"packages":{"node_modules/typescript":{"version":"5.9.4"}}}',
        ),
    ],
    [
      'the config tsconfig.build.json extends',
      (at: string) => writeFile(path.join(at, 'tsconfig.json'), '{"compilerOptions":{"strict":false}}'),
    ],
    ['its bundle removed', (at: string) => rm(path.join(at, 'dist/server.js'))],
    ['a compiled file of dist/ removed', (at: string) => rm(path.join(at, 'dist/src/a.js'))],
    [
      'a compiled file of dist/ edited',
      (at: string) => writeFile(path.join(at, 'dist/src/b.js'), 'export const b = 7;\n'),
    ],
    ["tsc's build info removed", (at: string) => rm(path.join(at, 'dist/tsconfig.build.tsbuildinfo'))],
  ])('%s: builds again', async (_, change) => {
    await build(root, { with: standIns() });
    await change(root);
    expect(await build(root, { with: standIns() })).toBe('built');
    expect(steps).toEqual(['compile', 'bundle', 'compile', 'bundle']);
    // dist/ is what the sources make, whatever had happened to it.
    expect(await readFile(path.join(root, 'dist/src/a.js'), 'utf8')).toBe(
      await readFile(path.join(root, 'src/a.ts'), 'utf8'),
    );
    expect(await readFile(path.join(root, 'dist/src/b.js'), 'utf8')).toBe(
      await readFile(path.join(root, 'src/b.ts'), 'utf8'),
    );
    expect(await build(root, { with: standIns() })).toBe('up to date');
  });

  it('--force compiles every source again, though tsc would trust its build info', async () => {
    await build(root, { with: standIns() });
    await writeFile(path.join(root, 'dist/src/a.js'), 'damaged\n');
    await writeFile(path.join(root, STAMP), 'stale\n');
    expect(await build(root, { force: true, with: standIns() })).toBe('built');
    expect(await readFile(path.join(root, 'dist/src/a.js'), 'utf8')).toBe('export const a = 1;\n');
  });

  it('a dist/ compiled by tsc alone since (tsc -w, npx tsc -p) is built again, the sources back as stamped', async () => {
    await build(root, { with: standIns() });
    await writeFile(path.join(root, 'src/a.ts'), 'export const a = 5;\n');
    await standIns().compile(root);
    await writeFile(path.join(root, 'src/a.ts'), 'export const a = 1;\n');
    expect(await build(root, { with: standIns() })).toBe('built');
    expect(await bundled()).toBe('export const a = 1;\nexport const b = 2;\n');
    expect(await readFile(path.join(root, 'dist/src/a.js'), 'utf8')).toBe('export const a = 1;\n');
  });

  it('reads tsconfig files as tsc does: comments at a line end, block comments', async () => {
    await writeFile(
      path.join(root, 'tsconfig.build.json'),
      '{\n  /* What the package runs. */\n  "extends": "./tsconfig.json", // the checks\n  "compilerOptions": { "outDir": "dist" },\n  "include": ["src"] // only\n}\n',
    );
    expect(buildInputs(root)).toContain('src/a.ts');
    expect(await build(root, { with: standIns() })).toBe('built');
  });

  it("without npm's record of the installed tree, builds every time: a dependency changed would not be seen", async () => {
    await rm(path.join(root, 'node_modules/.package-lock.json'));
    expect(await build(root, { with: standIns() })).toBe('built');
    expect(await build(root, { with: standIns() })).toBe('built');
    await expect(stat(path.join(root, STAMP))).rejects.toThrow();
  });

  it('a file outside the included folders changes nothing', async () => {
    await build(root, { with: standIns() });
    await mkdir(path.join(root, 'test'));
    await writeFile(path.join(root, 'test/a.test.ts'), 'export {};\n');
    expect(await build(root, { with: standIns() })).toBe('up to date');
  });

  it('a build that fails leaves no stamp: the next one builds again', async () => {
    await build(root, { with: standIns() });
    await writeFile(path.join(root, 'src/a.ts'), 'export const a = 2;\n');
    const failing: BuildSteps = {
      ...standIns(),
      compile: () => {
        steps.push('compile');
        throw new Error('tsc: error TS2322');
      },
    };
    await expect(build(root, { with: failing })).rejects.toThrow('TS2322');
    await expect(stat(path.join(root, STAMP))).rejects.toThrow();
    // Put back as it was built: the outputs may be half written, so it builds again.
    await writeFile(path.join(root, 'src/a.ts'), 'export const a = 1;\n');
    expect(await build(root, { with: standIns() })).toBe('built');
  });

  it('refuses a build whose tsc read a file outside its inputs, naming it, and leaves no stamp', async () => {
    await mkdir(path.join(root, 'scripts'));
    await expect(build(root, { with: standIns(['../scripts/helper.ts']) })).rejects.toThrow(
      /tsc read scripts\/helper\.ts, which scripts\/build\.ts does not count among the build's inputs/,
    );
    await expect(stat(path.join(root, STAMP))).rejects.toThrow();
  });
});
