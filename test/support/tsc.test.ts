// test/support/tsc.ts's `folder`: a project in a folder that is another each run (the client app of
// test/package/install.test.ts) keeps its incremental state with the folder's files, node_modules
// included, named as under a fixed place, so the next run's folder starts from it; a file changed
// since is still checked anew, and its error reported under the new folder's name.
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildInfo, TSC_CACHE, tsc } from './tsc.ts';

const cache = `tsc-folder-test-${process.pid}`;
let tmp: string;

/** An app whose one file uses a library from its own node_modules, which declares `x` as `type`. */
async function app(name: string, type: string): Promise<string> {
  const folder = path.join(tmp, name);
  await mkdir(path.join(folder, 'node_modules/lib'), { recursive: true });
  await writeFile(
    path.join(folder, 'node_modules/lib/package.json'),
    JSON.stringify({ name: 'lib', types: 'index.d.ts' }),
  );
  await writeFile(path.join(folder, 'node_modules/lib/index.d.ts'), `export declare const x: ${type};\n`);
  await writeFile(
    path.join(folder, 'index.ts'),
    "import { x } from 'lib';\nexport const fixed: string = x.toFixed(2);\n",
  );
  await writeFile(
    path.join(folder, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: { strict: true, module: 'nodenext', moduleResolution: 'nodenext', noEmit: true, types: [] },
      files: ['index.ts'],
    }),
  );
  return folder;
}
const check = (folder: string) => tsc({ project: path.join(folder, 'tsconfig.json'), cache, folder, cwd: folder });

beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'pgw-tsc-folder-'));
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
  await rm(buildInfo(cache), { force: true });
});

describe('tsc over a project whose folder is another each run', () => {
  it("keeps its state with the folder's files, node_modules included, named as under a fixed place", async () => {
    const first = await app('first', 'number');
    expect(await check(first)).toBe('');
    const names = (JSON.parse(await readFile(buildInfo(cache), 'utf8')) as { fileNames: string[] }).fileNames;
    const place = `${cache}.folder`;
    expect(names).toContain(`${place}/index.ts`);
    expect(names).toContain(`${place}/node_modules/lib/index.d.ts`);
    expect(names.filter((name) => path.resolve(TSC_CACHE, name).startsWith(first))).toEqual([]);
  });

  it("checks anew what changed since: an installed declaration's change is an error in the next folder", async () => {
    const changed = await app('changed', 'string');
    expect(await check(changed)).toMatch(/^index\.ts\(2,\d+\): error TS2551: Property 'toFixed' does not exist/);
    // The same files as the first folder's, in a third: clean again.
    const third = path.join(tmp, 'third');
    await cp(path.join(tmp, 'first'), third, { recursive: true });
    expect(await check(third)).toBe('');
  });
});
