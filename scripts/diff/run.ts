// npm run diff -- --base REF [--revision REF] [--format markdown|json|changelog] [--check-version] [--check-changelog] [--base-version V]
//
// Compares the spec at REF (a git ref, a bundled openapi.json/yaml, a packed .tgz or npm:<version>)
// with the working tree (or --revision) and prints each change with its verdict for clients and for
// servers. --base defaults to the last release (load.ts lastRelease: the newest snapshot in releases/,
// else the newest tag vX.Y.Z, else the release commit CHANGELOG.md records).
// Exit status: 1 when --check-version is given and the changes need a larger version step than
// package.json took (a breaking change without a major bump), or --check-changelog is given and a
// change is not tagged under CHANGELOG.md's Unreleased (changelog-gate.ts); 2 when a version cannot
// be read, else 0.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import {
  changeGroups,
  changelogProblems,
  changelogRefusal,
  changelogSections,
  checkChangelog,
  diffDocs,
  lastRelease,
  load,
  markdown,
} from './index.ts';
import { ROOT } from './load.ts';

const { values } = parseArgs({
  options: {
    base: { type: 'string' },
    revision: { type: 'string' },
    'base-version': { type: 'string' },
    // Without --format, --check-changelog prints its verdict alone, not the whole report.
    format: { type: 'string' },
    'check-version': { type: 'boolean', default: false },
    'check-changelog': { type: 'boolean', default: false },
  },
});
const baseRef = values.base ?? (await lastRelease());
if (!baseRef) {
  console.error('diff: no --base given and no release found (not a git checkout?)');
  process.exit(2);
}
const [base, revision] = await Promise.all([load(baseRef), load(values.revision)]).catch((error: Error) => {
  console.error(`diff: ${error.message}`);
  process.exit(2);
});
// A bundled file carries no package version: --base-version says which release it was.
if (values['base-version']) base.version = values['base-version'];
const report = await diffDocs(base, revision);
const format = values.format ?? (values['check-changelog'] ? 'none' : 'markdown');
if (format !== 'none')
  console.log(
    format === 'json'
      ? JSON.stringify(report, null, 2)
      : format === 'changelog'
        ? changelogSections(report)
        : markdown(report),
  );
if (values['check-version'] && report.versionOk === false) {
  console.error(
    `diff: the spec changed incompatibly since ${report.base.label} but the version went ${report.base.version} → ${report.revision.version}: run \`npm version ${report.needed}\``,
  );
  process.exit(1);
}
if (values['check-changelog']) {
  const problems = changelogProblems(
    checkChangelog(report.changes, await readFile(path.join(ROOT, 'CHANGELOG.md'), 'utf8')),
  );
  if (problems.length) {
    console.error(changelogRefusal(problems));
    process.exit(1);
  }
  const groups = changeGroups(report.changes).length;
  console.log(
    `diff: CHANGELOG.md's Unreleased section records every contract change since ${report.base.label} (${groups} tag(s), ${report.changes.length} change(s)); ` +
      (report.needed ? `the next release takes \`npm version ${report.needed}\`.` : 'nothing to release.'),
  );
}
