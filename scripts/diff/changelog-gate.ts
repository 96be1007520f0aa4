// Where the version gate lives: the changelog. Every contract change since the last release is a
// line under CHANGELOG.md's `## [Unreleased]` carrying its tag, a code span naming its class, kind
// and subject (`minor: method-added queryRefund`), which `npm run diff -- --format changelog` prints
// ready to paste. `npm test` checks both ways (every change has its tag, every tag a change), so an
// unreleased change needs only its changelog line to be green; `npm version` (release-changelog.ts)
// then takes the step the largest class asks, and no other.
import semver from 'semver';
import { maxBump, type Bump, type Change } from './change.ts';
import { npmVersionArgument } from './version.ts';

/** The tag a change is recorded by: `<class>: <kind> <subject>` (prose and examples need none). */
export function changeTag(c: Change): string | undefined {
  if (c.kind === 'documentation') return undefined;
  const subject = c.pointer ?? c.operations.join(',');
  return `${c.bump}: ${c.kind}${subject ? ` ${subject}` : ''}`;
}

const TAG = /`((?:major|minor|patch): [a-z0-9-]+(?: [^`]+)?)`/g;

/** The text of the `## [Unreleased]` section (empty when there is none). */
export function unreleased(changelog: string): string {
  const heading = /^## \[Unreleased\][^\n]*\n/m.exec(changelog);
  if (!heading) return '';
  const rest = changelog.slice(heading.index + heading[0].length);
  const next = rest.search(/^## \[/m);
  return next === -1 ? rest : rest.slice(0, next);
}

export interface ChangelogCheck {
  /** Changes with no tag under Unreleased. */
  missing: string[];
  /** Tags under Unreleased that name no change (reverted, or of another class). */
  stale: string[];
  /** The largest class of the recorded changes: the release's step. */
  bump: Bump;
}

export function checkChangelog(changes: Change[], changelog: string): ChangelogCheck {
  const wanted = new Set(changes.map(changeTag).filter((t): t is string => t !== undefined));
  const written = new Set([...unreleased(changelog).matchAll(TAG)].map((m) => m[1]!));
  return {
    missing: [...wanted].filter((t) => !written.has(t)),
    stale: [...written].filter((t) => !wanted.has(t)),
    bump: maxBump([...wanted].map((t) => t.split(':')[0] as Bump)),
  };
}

/** What is wrong with a changelog for this report, as lines to print (none when it is right). */
export function changelogProblems(check: ChangelogCheck): string[] {
  return [
    ...check.missing.map((t) => `not in CHANGELOG.md's Unreleased section: \`${t}\``),
    ...check.stale.map((t) => `CHANGELOG.md's Unreleased section names a change the spec does not make: \`${t}\``),
  ];
}

/**
 * The one version a release from `from` may take for changes of this class, as npm's caret ranges
 * read it (a breaking change under 1.0.0 steps the minor part). No recorded change is a patch.
 */
export function releaseVersion(from: string, bump: Bump): string {
  return semver.inc(from, npmVersionArgument(from, bump))!;
}
