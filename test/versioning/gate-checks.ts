// What test/versioning/gate.test.ts checks of this checkout's changelog, as functions that return what
// is wrong. Paths are taken from where this file is (scripts/diff/ of the same checkout): a copy of the
// package checks itself by importing its own copy of this module (test/architecture/add-method.test.ts).
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import {
  changelogProblems,
  checkChangelog,
  diffDocs,
  lastRelease,
  load,
  workingTree,
} from '../../scripts/diff/index.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');

/** The contract changes since the last release that CHANGELOG.md's Unreleased does not record with their class. */
export async function unrecordedChanges(): Promise<string[]> {
  const base = await lastRelease();
  if (!base || !/releases\/openapi-\d+\.\d+\.\d+\.json$/.test(base))
    return [`no release snapshot in releases/: ${base}`];
  const report = await diffDocs(await load(base), await workingTree());
  const changelog = await readFile(path.join(ROOT, 'CHANGELOG.md'), 'utf8');
  return changelogProblems(checkChangelog(report.changes, changelog));
}

/** CHANGELOG.md lacks an Unreleased heading, or a dated heading of package.json's version. */
export async function changelogVersionProblems(): Promise<string[]> {
  const pkg = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8'));
  const changelog = await readFile(path.join(ROOT, 'CHANGELOG.md'), 'utf8');
  const problems: string[] = [];
  if (!/^## \[Unreleased\]/m.test(changelog)) problems.push('CHANGELOG.md has no ## [Unreleased]');
  if (!new RegExp(`^## \\[${pkg.version.replace(/\./g, '\\.')}\\] - \\d{4}-\\d{2}-\\d{2}`, 'm').test(changelog))
    problems.push(`CHANGELOG.md has no dated ## [${pkg.version}] (package.json's version)`);
  return problems;
}
