// A process bundles an unchanged spec once (scripts/generators/bundle.ts): the version gate, `generate`,
// the docs alone and the tests that run file after file in one worker each bundled the same spec again.
// What it answers is the bundle of the files as they are now: a change to spec/ or to a release snapshot
// is bundled afresh, and each caller owns its copy.
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleCount, bundleSpec } from '../../scripts/generators/bundle.ts';
import { ROOT } from '../support/contract.ts';

describe('bundleSpec: one bundle per unchanged spec', () => {
  let tree: string;
  // A tree of its own, as `npm run diff` bundles a git ref's (scripts/diff/load.ts): spec/, the release
  // snapshots the composer reads, and a bare redocly.yaml.
  beforeAll(async () => {
    tree = await mkdtemp(path.join(os.tmpdir(), 'pgw-bundle-once-'));
    await cp(path.join(ROOT, 'spec'), path.join(tree, 'spec'), { recursive: true });
    await cp(path.join(ROOT, 'releases'), path.join(tree, 'releases'), { recursive: true });
    await writeFile(path.join(tree, 'redocly.yaml'), 'apis:\n  gateway:\n    root: spec/openapi.yaml\n');
  });
  afterAll(() => rm(tree, { recursive: true, force: true }));

  const method = () => path.join(tree, 'spec/methods/post/processCard.yaml');

  it('bundles an unchanged spec once, and each caller gets a copy of its own', async () => {
    const before = bundleCount.made;
    const [first, concurrent] = await Promise.all([bundleSpec(tree), bundleSpec(tree)]);
    const again = await bundleSpec(tree);
    expect(bundleCount.made - before).toBe(1);
    expect(again).toEqual(first);
    expect(concurrent).toEqual(first);
    expect(again).not.toBe(first);
    // What one caller changes in its document, the next does not see.
    first.info.title = 'changed by a caller';
    delete first.paths['/post'];
    const later = await bundleSpec(tree);
    expect(later.info.title).toBe(again.info.title);
    expect(later.paths['/post']).toEqual(again.paths['/post']);
  });

  it('bundles afresh when a file of spec/ changes, and answers the change', async () => {
    const before = bundleCount.made;
    const old = await bundleSpec(tree);
    const text = await readFile(method(), 'utf8');
    expect(text).toMatch(/^ *summary: /m);
    await writeFile(method(), text.replace(/^( *summary: ).*$/m, '$1Card payment, as changed by the test'));
    const changed = await bundleSpec(tree);
    expect(changed.paths['/post'].post['x-methods'].processCard.summary).toBe('Card payment, as changed by the test');
    expect(old.paths['/post'].post['x-methods'].processCard.summary).toBe('Card purchase');
    expect(bundleCount.made - before).toBe(1);
    // Put back, it is the first bundle again.
    await writeFile(method(), text);
    expect(await bundleSpec(tree)).toEqual(old);
  });

  it('bundles afresh when the release snapshots the composer reads change', async () => {
    const before = bundleCount.made;
    await bundleSpec(tree);
    await rm(path.join(tree, 'releases'), { recursive: true });
    await bundleSpec(tree);
    expect(bundleCount.made - before).toBe(1);
  });

  it('keeps no failed bundle: a spec that cannot be bundled is refused each time, in its own words', async () => {
    const text = await readFile(path.join(tree, 'spec/openapi.yaml'), 'utf8');
    await writeFile(path.join(tree, 'spec/openapi.yaml'), text.replace('openapi: 3.1.0', 'openapi: [3.1.0'));
    await expect(bundleSpec(tree)).rejects.toThrow();
    const before = bundleCount.made;
    await expect(bundleSpec(tree)).rejects.toThrow();
    expect(bundleCount.made - before).toBe(1);
    await writeFile(path.join(tree, 'spec/openapi.yaml'), text);
    expect((await bundleSpec(tree)).openapi).toBe('3.1.0');
  });
});
