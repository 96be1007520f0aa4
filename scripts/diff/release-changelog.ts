// Run by `npm version` (package.json's "version" script), after the version is bumped and before it is
// committed. First the gate: every contract change since the last release snapshot must be tagged
// under Unreleased (changelog-gate.ts), and the new version must be the step the largest class
// asks (a breaking change under 1.0.0: `npm version minor`), no smaller and no larger. Then the
// Unreleased section of CHANGELOG.md becomes the new version's, dated today, under a fresh empty
// Unreleased; releases/openapi-X.Y.Z.json keeps the version's bundled document and
// releases/refusals-X.Y.Z.json its refusal catalogue, the base the gate compares with from then on
// (load.ts lastRelease). npm version then commits them with the regenerated files and tags vX.Y.Z.
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { changelogProblems, checkChangelog, releaseVersion } from './changelog-gate.ts';
import { diffDocs } from './index.ts';
import {
  type Loaded,
  lastRelease,
  load,
  RELEASES,
  ROOT,
  refusalSnapshot,
  releaseSnapshot,
  workingTree,
} from './load.ts';
import type { RefusalSnapshot } from './refusal-changes.ts';

/** Why this release may not be cut (empty when it may): changes not recorded, or the wrong step. */
export function releaseProblems(
  changelog: string,
  changes: Parameters<typeof checkChangelog>[0],
  from: string,
  to: string,
) {
  const check = checkChangelog(changes, changelog);
  const problems = changelogProblems(check);
  const wanted = releaseVersion(from, check.bump);
  if (to !== wanted)
    problems.push(
      `the changes since ${from} are ${check.bump}: the release is ${wanted}, not ${to} (undo with \`git checkout package.json package-lock.json\`, then run \`npm version ${wanted}\`)`,
    );
  return problems;
}

/** What `npm version` prints when it refuses the release. */
export const releaseRefusal = (base: string, problems: string[]) =>
  `npm version: no release from ${base}:\n${problems.map((p) => `- ${p}`).join('\n')}`;

export function releaseChangelog(text: string, version: string, date: string): string {
  const heading = /^## \[Unreleased\][^\n]*\n/m;
  const match = heading.exec(text);
  if (!match) throw new Error('CHANGELOG.md has no "## [Unreleased]" section');
  if (new RegExp(`^## \\[${version.replace(/\./g, '\\.')}\\]`, 'm').test(text))
    throw new Error(`CHANGELOG.md already has ${version}`);
  const start = match.index + match[0].length;
  const next = text.slice(start).search(/^## \[/m);
  const body = (next === -1 ? text.slice(start) : text.slice(start, start + next)).trim();
  if (!body)
    throw new Error('The Unreleased section is empty: write what changed (npm run diff -- --format changelog) first');
  const rest = next === -1 ? '' : text.slice(start + next);
  return `${text.slice(0, match.index)}## [Unreleased]\n\n## [${version}] - ${date}\n\n${body}\n\n${rest}`;
}

/**
 * Keeps a release's bundled document (releases/openapi-X.Y.Z.json), the base the breaking-change gate
 * compares with from then on, and its refusal catalogue beside it (releases/refusals-X.Y.Z.json: a file
 * of spec/, not of the bundled document; refusal-changes.ts). Answers the files written.
 */
export async function keepRelease(version: string, release: Loaded, dir = RELEASES): Promise<string[]> {
  const files = [releaseSnapshot(version, dir), refusalSnapshot(version, dir)];
  // Not read is not "had none": a snapshot saying null would make the next diff report the catalogue's arrival.
  if (release.refusals === undefined) throw new Error(`the refusal catalogue of ${version} was not read`);
  const kept: RefusalSnapshot = { refusals: release.refusals };
  await writeFile(files[0]!, `${JSON.stringify(release.doc, null, 2)}\n`);
  await writeFile(files[1]!, `${JSON.stringify(kept, null, 2)}\n`);
  return files;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const version =
    process.env.npm_package_version ?? JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8')).version;
  const file = path.join(ROOT, 'CHANGELOG.md');
  const changelog = await readFile(file, 'utf8');
  const base = await lastRelease();
  const [released, now] = await Promise.all([load(base), workingTree()]);
  if (base && released.version) {
    const report = await diffDocs(released, now);
    const problems = releaseProblems(changelog, report.changes, released.version, version);
    if (problems.length) {
      console.error(releaseRefusal(base, problems));
      process.exit(1);
    }
  }
  await writeFile(file, releaseChangelog(changelog, version, new Date().toISOString().slice(0, 10)));
  console.log(`CHANGELOG.md: Unreleased is now ${version}`);
  for (const file of await keepRelease(version, await workingTree()))
    console.log(`${path.relative(ROOT, file)}: kept for ${version}`);
}
