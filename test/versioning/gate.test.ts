// The CI gate: the spec compared with the last release must not change incompatibly unless
// package.json's version took a step big enough (npm run diff -- --check-version). And the gate must
// be able to fail: a base that has a method the working tree lacks, at the same version, fails it.
import { execFile, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { lastRelease, load, releaseSnapshot, workingTree } from '../../scripts/diff/index.ts';

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../..');
const diff = (args: string[]) =>
  run(process.execPath, ['scripts/diff/run.ts', ...args], { cwd: ROOT, maxBuffer: 32 << 20 });
const gitCheckout = existsSync(path.join(ROOT, '.git'));
/** The commit release 0.1.0 was cut from, as CHANGELOG.md records it. */
const RELEASE_0_1_0 = '8f19ff5dfad6354cc1cd77bd308e4674a0cb4bc2';
const hasCommit = (commit: string) =>
  gitCheckout && spawnSync('git', ['cat-file', '-e', `${commit}^{commit}`], { cwd: ROOT }).status === 0;

describe('breaking-change gate', () => {
  // No git history needed: CI's shallow clone has none, and this test failed there before releases/.
  it('the spec is compatible with the last release, or the version says it is not', async () => {
    const base = await lastRelease();
    expect(base, 'the newest release snapshot in releases/').toMatch(/releases\/openapi-\d+\.\d+\.\d+\.json$/);
    try {
      await diff(['--base', base!, '--check-version']);
    } catch (error: any) {
      expect.fail(`npm run diff -- --base ${base} --check-version failed:\n${error.stderr}\n${error.stdout}`);
    }
  });

  it.skipIf(!hasCommit(RELEASE_0_1_0))(
    'the release snapshot is the bundled document of the commit the release was cut from',
    async () => {
      const snapshot = await load(releaseSnapshot('0.1.0'));
      const cut = await load(RELEASE_0_1_0);
      expect(snapshot.version).toBe('0.1.0');
      expect(cut.version).toBe('0.1.0');
      expect(snapshot.doc).toEqual(cut.doc);
    },
  );

  it.skipIf(!gitCheckout)(
    "reads any git ref as its base, bundling that ref's own spec (HEAD: the committed spec)",
    async () => {
      const { stdout } = await diff(['--base', 'HEAD', '--format', 'json']);
      const report = JSON.parse(stdout);
      expect(report.base.label).toMatch(/^HEAD \([0-9a-f]{7}\)$/);
      expect(report.base.api).toBe('2.0');
    },
  );

  it('fails when a breaking change comes without the version step it needs', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'pgw-gate-'));
    try {
      const { doc, version } = await workingTree();
      const older = structuredClone(doc);
      // The release had one more method: the working tree removed it.
      const post = older.paths['/post'].post;
      post['x-methods'].retiredMethod = {
        ...post['x-methods'].processVoid,
        operationId: 'retiredMethod',
        summary: 'Retired',
      };
      await writeFile(path.join(dir, 'release.json'), JSON.stringify(older));
      const failed = await diff([
        '--base',
        path.join(dir, 'release.json'),
        '--base-version',
        version!,
        '--check-version',
      ]).then(
        () => undefined,
        (error) => error,
      );
      expect(failed?.code).toBe(1);
      expect(failed.stderr).toMatch(/npm version (minor|major)/);
      expect(failed.stdout).toContain('method retiredMethod removed');
      // The same change after the step it needs passes.
      const [major, minor] = version!.split('.').map(Number);
      const stepped = major === 0 ? `0.${Math.max(0, minor! - 1)}.0` : `${major! - 1}.0.0`;
      if (stepped !== version)
        await diff(['--base', path.join(dir, 'release.json'), '--base-version', stepped, '--check-version']);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('the changelog names the package version of package.json', async () => {
    const pkg = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8'));
    const changelog = await readFile(path.join(ROOT, 'CHANGELOG.md'), 'utf8');
    expect(changelog).toMatch(/^## \[Unreleased\]/m);
    expect(changelog).toMatch(new RegExp(`^## \\[${pkg.version.replace(/\./g, '\\.')}\\] - \\d{4}-\\d{2}-\\d{2}`, 'm'));
  });
});

describe('release: npm version moves Unreleased under the new version', () => {
  it('the Unreleased section becomes the version, dated, above the previous ones', async () => {
    const { releaseChangelog } = await import('../../scripts/diff/release-changelog.ts');
    const before =
      '# Changelog\n\nIntro.\n\n## [Unreleased]\n\n### Added\n- a thing\n\n## [0.1.0] - 2026-11-23\n\nFirst.\n';
    const after = releaseChangelog(before, '0.2.0', '2026-12-01');
    expect(after).toBe(
      '# Changelog\n\nIntro.\n\n## [Unreleased]\n\n## [0.2.0] - 2026-12-01\n\n### Added\n- a thing\n\n## [0.1.0] - 2026-11-23\n\nFirst.\n',
    );
    expect(() => releaseChangelog(after, '0.3.0', '2026-12-02')).toThrow(/empty/);
    expect(() => releaseChangelog(before, '0.1.0', '2026-12-02')).toThrow(/already/);
  });
});
