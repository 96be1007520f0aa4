// Run by `npm version` (package.json's "version" script), after the version is bumped and before it is
// committed: the Unreleased section of CHANGELOG.md becomes the new version's, dated today, under a
// fresh empty Unreleased, and releases/openapi-X.Y.Z.json keeps the version's bundled document. npm version then commits it with the regenerated files and tags vX.Y.Z,
// the tag the breaking-change gate compares with from then on.
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ROOT, releaseSnapshot, workingTree } from './load.ts';

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

if (import.meta.url === `file://${process.argv[1]}`) {
  const version =
    process.env.npm_package_version ?? JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8')).version;
  const file = path.join(ROOT, 'CHANGELOG.md');
  await writeFile(file, releaseChangelog(await readFile(file, 'utf8'), version, new Date().toISOString().slice(0, 10)));
  console.log(`CHANGELOG.md: Unreleased is now ${version}`);
  // The release's own document, the base the breaking-change gate compares with from now on.
  await writeFile(releaseSnapshot(version), `${JSON.stringify((await workingTree()).doc, null, 2)}\n`);
  console.log(`${path.relative(ROOT, releaseSnapshot(version))}: the bundled document of ${version}`);
}
