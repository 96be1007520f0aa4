// The gate: every contract change since the last release snapshot is recorded under CHANGELOG.md's
// Unreleased with its tag (class, kind, subject), and `npm version` takes the step the largest class
// asks. An unreleased change needs its changelog line, never a release, to be green. And the gate
// must be able to fail: a base that has a method the working tree lacks fails it until the line is
// written, and the release fails until the step is the one that change needs.
import { execFile, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import {
  type Change,
  changeGroups,
  changelogProblems,
  changelogRefusal,
  changelogSections,
  checkChangelog,
  diffDocs,
  load,
  releaseSnapshot,
  workingTree,
} from '../../scripts/diff/index.ts';
import { releaseProblems, releaseRefusal } from '../../scripts/diff/release-changelog.ts';
import { writeSample } from '../support/samples.ts';
import { changelogVersionProblems, unrecordedChanges } from './gate-checks.ts';

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../..');
const diff = (args: string[]) =>
  run(process.execPath, ['scripts/diff/run.ts', ...args], { cwd: ROOT, maxBuffer: 32 << 20 });
const gitCheckout = existsSync(path.join(ROOT, '.git'));
/** The commit release 0.1.0 was cut from, as CHANGELOG.md records it. */
const RELEASE_0_1_0 = '8f19ff5dfad6354cc1cd77bd308e4674a0cb4bc2';
const RELEASE_0_2_0 = '19b70cfff5d93ec6a8cb63ab6d26513d8e3510d2';
const hasCommit = (commit: string) =>
  gitCheckout && spawnSync('git', ['cat-file', '-e', `${commit}^{commit}`], { cwd: ROOT }).status === 0;

describe('breaking-change gate', () => {
  // No git history needed: CI's shallow clone has none, and this test failed there before releases/.
  // gate-checks.ts: test/architecture/add-method.test.ts runs it on a copy with a method added.
  it('every contract change since the last release is recorded under Unreleased with its class', async () => {
    expect(await unrecordedChanges(), 'npm run diff -- --format changelog prints the lines to add').toEqual([]);
  });

  // 0.2.0's commit is bundled as the diff bundles any ref; its spec predates the wire formats (it
  // threw in the tolerant-requests step until that step let such a spec be).
  for (const [version, commit] of [
    ['0.1.0', RELEASE_0_1_0],
    ['0.2.0', RELEASE_0_2_0],
  ] as const)
    it.skipIf(!hasCommit(commit))(
      `the release snapshot of ${version} is the bundled document of the commit the release was cut from, and says as it does that it had no refusal catalogue`,
      async () => {
        const snapshot = await load(releaseSnapshot(version));
        // A commit named twice (`diff --base HEAD --revision HEAD`) is bundled once: one document.
        const [cut, again] = await Promise.all([load(commit), load(commit)]);
        expect(again.doc).toBe(cut.doc);
        expect(snapshot.version).toBe(version);
        expect(cut.version).toBe(version);
        expect(snapshot.doc).toEqual(cut.doc);
        expect([snapshot.refusals, cut.refusals]).toEqual([null, null]);
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

  it('fails on a change the changelog does not record, and a release that does not take its step', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'pgw-gate-'));
    try {
      const { doc } = await workingTree();
      const older = structuredClone(doc);
      // The release had one more method: the working tree removed it.
      const post = older.paths['/post'].post;
      post['x-methods'].retiredMethod = {
        ...post['x-methods'].processVoid,
        operationId: 'retiredMethod',
        summary: 'Retired',
      };
      await writeFile(path.join(dir, 'release.json'), JSON.stringify(older));
      const failed = await diff(['--base', path.join(dir, 'release.json'), '--check-changelog']).then(
        () => undefined,
        (error) => error,
      );
      expect(failed?.code).toBe(1);
      expect(failed.stderr).toContain('`major: method-removed retiredMethod`');

      const report = await diffDocs({ label: 'release', doc: older }, await workingTree());
      const without = '# Changelog\n\n## [Unreleased]\n\n## [0.2.0] - 2026-11-24\n';
      const unrecorded = changelogProblems(checkChangelog(report.changes, without));
      expect(unrecorded).toEqual(["not in CHANGELOG.md's Unreleased section: `major: method-removed retiredMethod`"]);
      // docs/CHANGING.md shows what a contributor sees, printed by the command's own function.
      writeSample(
        'gate-unrecorded',
        `$ npm run diff -- --check-changelog\n${changelogRefusal(unrecorded)}`,
        'docs/CHANGING.md',
      );
      // The line the diff prints, pasted under Unreleased, is the record.
      const lines = changelogSections(report);
      expect(lines).toContain('`major: method-removed retiredMethod`');
      const recorded = without.replace('## [Unreleased]\n', `## [Unreleased]\n\n${lines}`);
      expect(checkChangelog(report.changes, recorded)).toMatchObject({ missing: [], stale: [], bump: 'major' });
      // A tag of another class, or of a change not made, is stale.
      const wrong = recorded.replace('`major: method-removed', '`minor: method-removed');
      expect(checkChangelog(report.changes, wrong).stale).toEqual(['minor: method-removed retiredMethod']);
      // Breaking under 1.0.0: the release from 0.2.0 is 0.3.0, not 0.2.1 and not 1.0.0.
      expect(releaseProblems(recorded, report.changes, '0.2.0', '0.3.0')).toEqual([]);
      const tooSmall = releaseProblems(recorded, report.changes, '0.2.0', '0.2.1');
      expect(tooSmall).toEqual([expect.stringContaining('the release is 0.3.0, not 0.2.1')]);
      writeSample(
        'gate-release',
        `$ npm version patch\n${releaseRefusal('releases/openapi-0.2.0.json', tooSmall)}`,
        'docs/CHANGING.md',
      );
      expect(releaseProblems(recorded, report.changes, '0.2.0', '1.0.0')).toHaveLength(1);
      expect(releaseProblems(without, report.changes, '0.2.0', '0.3.0')).toHaveLength(1);
      // Nothing on the wire: a patch.
      expect(releaseProblems(without, [], '0.2.0', '0.2.1')).toEqual([]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('records one change on many methods as one readable tag naming them, and still each method', () => {
    const formAdded = (path: string, method: string, operation: string): Change => ({
      kind: 'request-media-type-added',
      operations: [operation],
      pointer: `#/paths/~1${path}~1method=${method}/post/requestBody/content/application~1x-www-form-urlencoded`,
      message: `${operation}: form requests`,
      clients: false,
      servers: true,
      bump: 'minor',
    });
    const changes: Change[] = [
      formAdded('token', 'processCard', 'tokenProcessCard'),
      formAdded('post', 'processVoid', 'processVoid'),
      {
        kind: 'result-field-optional',
        operations: ['retrieveBatchResponse'],
        pointer: '#/components/schemas/BatchLine/required',
        message: 'BatchLine.transactionReferenceID optional',
        clients: true,
        servers: false,
        bump: 'major',
      },
    ];
    const both =
      'minor: request-media-type-added requestBody/content/application/x-www-form-urlencoded in processVoid, tokenProcessCard';
    expect(changeGroups(changes).map((g) => g.tag)).toEqual([both, 'major: result-field-optional BatchLine/required']);
    const recorded = `## [Unreleased]\n${changelogSections({ changes } as Parameters<typeof changelogSections>[0])}`;
    expect(recorded).toContain('the same change in 2 operations (servers must change)');
    expect(checkChangelog(changes, recorded)).toMatchObject({ missing: [], stale: [], bump: 'major' });
    // A method left out of the tag is a change not recorded: the gate names the whole line again.
    const short = recorded.replace('processVoid, tokenProcessCard', 'processVoid');
    expect(checkChangelog(changes, short).missing).toEqual([both]);
    // Whole operations stay a line each: a second method added leaves the first one's line as written.
    const added = (operation: string): Change => ({
      kind: 'method-added',
      operations: [operation],
      message: `${operation} added`,
      clients: false,
      servers: true,
      bump: 'minor',
    });
    expect(changeGroups([added('queryRefunds'), added('pingMerchant')]).map((g) => g.tag)).toEqual([
      'minor: method-added queryRefunds',
      'minor: method-added pingMerchant',
    ]);
  });

  it('the changelog names the package version of package.json', async () => {
    expect(await changelogVersionProblems()).toEqual([]);
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
