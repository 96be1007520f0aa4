// scripts/lib/build-cache.ts, through its one function: a tool's output is built once per input and
// installed tree, read back after that, built again when either changes or when PGW_BUILD_CACHE=off,
// never seen half-written by a concurrent build, and pruned to the most recently used entries.
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { cachedBuild } from '../../scripts/lib/build-cache.ts';

let root: string;
let builds: string[];
/** A build that writes its input upper-cased, slowly enough for a concurrent one to overlap it. */
const build = (input: string) =>
  cachedBuild(root, 'docs', [input], async (file) => {
    builds.push(input);
    await writeFile(file, input.slice(0, 3));
    await new Promise((resolve) => setTimeout(resolve, 20));
    await writeFile(file, input.toUpperCase());
  });
const entries = async () => (await readdir(path.join(root, 'node_modules/.cache/pgw-build/docs'))).sort();

// The switch is the caller's: off for the test that turns it off, put back as it was for the files after.
const given = process.env.PGW_BUILD_CACHE;
beforeAll(() => {
  delete process.env.PGW_BUILD_CACHE;
});
afterAll(() => {
  if (given === undefined) delete process.env.PGW_BUILD_CACHE;
  else process.env.PGW_BUILD_CACHE = given;
});
beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'pgw-build-cache-'));
  await mkdir(path.join(root, 'node_modules'));
  await writeFile(path.join(root, 'node_modules/.package-lock.json'), '{"packages":{"a":"1.0.0"}}');
  builds = [];
});
afterEach(async () => {
  delete process.env.PGW_BUILD_CACHE;
  await rm(root, { recursive: true, force: true });
});

describe('a build cached by its input and the installed tree', () => {
  it('builds an input once and reads it back after that', async () => {
    expect(String(await build('page one'))).toBe('PAGE ONE');
    expect(String(await build('page one'))).toBe('PAGE ONE');
    expect(String(await build('page two'))).toBe('PAGE TWO');
    expect(builds).toEqual(['page one', 'page two']);
  });

  it('tells apart inputs whose parts only join the same way', async () => {
    const parts = (input: string[]) =>
      cachedBuild(root, 'docs', input, async (file) => writeFile(file, input.join('|')));
    expect(String(await parts(['ab', 'c']))).toBe('ab|c');
    expect(String(await parts(['a', 'bc']))).toBe('a|bc');
  });

  it('builds again once npm has installed another tree', async () => {
    await build('page');
    // As after `npm ci` of another lockfile: npm rewrites its record of the tree.
    await writeFile(path.join(root, 'node_modules/.package-lock.json'), '{"packages":{"a":"2.0.1"}}');
    await cachedBuild(root, 'docs', ['page'], async (file: string) => {
      builds.push('after the install');
      await writeFile(file, 'NEW');
    });
    expect(builds).toEqual(['page', 'after the install']);
  });

  it('builds every time under PGW_BUILD_CACHE=off, and keeps nothing', async () => {
    process.env.PGW_BUILD_CACHE = 'off';
    await build('page');
    await build('page');
    expect(builds).toEqual(['page', 'page']);
    expect(await entries()).toEqual([]);
  });

  it('gives concurrent builds of one input the whole output, never a half-written file', async () => {
    const outputs = await Promise.all([build('same page'), build('same page'), build('same page')]);
    expect(outputs.map(String)).toEqual(['SAME PAGE', 'SAME PAGE', 'SAME PAGE']);
    expect(await entries()).toHaveLength(1);
    expect(String(await build('same page'))).toBe('SAME PAGE');
  });

  it('keeps the most recently used entries of a kind and drops older ones', async () => {
    for (let i = 0; i < 10; i++) await build(`page ${i}`);
    await build('page 0'); // used again: among those kept
    await build('page 10');
    expect(await entries()).toHaveLength(8);
    builds = [];
    await build('page 0');
    await build('page 1');
    expect(builds).toEqual(['page 1']);
  });
});
