// Where the version gate lives: the changelog. Every contract change since the last release is
// recorded under CHANGELOG.md's `## [Unreleased]` by a tag, a code span naming its class, kind and
// subject (`minor: method-added queryRefund`), which `npm run diff -- --format changelog` prints
// ready to paste. `npm test` checks both ways (every change has its tag, every tag a change), so an
// unreleased change needs only its changelog line to be green; `npm version` (release-changelog.ts)
// then takes the step the largest class asks, and no other.
//
// One tag records every change of one class and kind at one place of an operation, naming the
// operations it reaches: the form/XML mode's new request media type on 35 methods is one line
// (`minor: request-media-type-added requestBody/content/application/x-www-form-urlencoded in
// addBlacklistedCard, addCard, …`), not 35 JSON pointers. A change of a shared schema is named by
// the schema and where in it (`major: result-field-optional BatchLine/required`), a refusal's by its
// code (`minor: refusal-added PGW_ERR_…`).
import semver from 'semver';
import { maxBump, type Bump, type Change } from './change.ts';
import { npmVersionArgument } from './version.ts';

/** A readable place for a JSON pointer: its segments unescaped, `#/components/schemas/` left out. */
function place(pointer: string): { where: string; inOperation: boolean } {
  const segments = pointer
    .replace(/^#\//, '')
    .split('/')
    .map((s) => decodeURIComponent(s).replace(/~1/g, '/').replace(/~0/g, '~'));
  // #/paths/<path>/<verb>/<rest>: the rest is the place, the change's operations say whose.
  if (segments[0] === 'paths') return { where: segments.slice(3).join('/'), inOperation: true };
  if (segments[0] === 'components' && segments[1] === 'schemas')
    return { where: segments.slice(2).join('/'), inOperation: false };
  return { where: segments.join('/'), inOperation: false };
}

/** One line of the record: the changes of one class and kind at one place, and what they reach. */
export interface ChangeGroup {
  tag: string;
  bump: Bump;
  kind: string;
  changes: Change[];
  operations: string[];
}

/**
 * The changes grouped as the changelog records them, one tag each (prose and examples need none):
 * `<class>: <kind> <place> in <operations>` for a place inside operations, `<class>: <kind> <place>`
 * for one outside them (a shared schema, a hash recipe), `<class>: <kind> <operation>` for a whole
 * operation (added, removed), one line each.
 */
export function changeGroups(changes: Change[]): ChangeGroup[] {
  const groups = new Map<string, ChangeGroup & { where: string; inOperation: boolean }>();
  for (const c of changes) {
    if (c.kind === 'documentation') continue;
    const { where, inOperation } = c.pointer
      ? place(c.pointer)
      : c.subject
        ? { where: c.subject, inOperation: false }
        : { where: '', inOperation: true };
    // A whole operation (added, removed) is its own line: a second method added since the release
    // gets a line of its own, and the first one's line stays as it was written.
    const key = `${c.bump}: ${c.kind} ${where || c.operations.join(',')}`;
    const group = groups.get(key) ?? {
      tag: '',
      bump: c.bump,
      kind: c.kind,
      changes: [],
      operations: [],
      where,
      inOperation,
    };
    group.changes.push(c);
    group.operations = [...new Set([...group.operations, ...c.operations])].sort();
    groups.set(key, group);
  }
  return [...groups.values()].map(({ where, inOperation, ...group }) => {
    const reach = inOperation ? group.operations.join(', ') : '';
    const subject = where && reach ? `${where} in ${reach}` : where || reach;
    return { ...group, tag: `${group.bump}: ${group.kind}${subject ? ` ${subject}` : ''}` };
  });
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
  const wanted = new Set(changeGroups(changes).map((g) => g.tag));
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

/** What `npm run diff -- --check-changelog` prints when the changelog and the changes disagree. */
export const changelogRefusal = (problems: string[]) =>
  `diff: CHANGELOG.md does not record the contract changes since the last release:\n${problems.map((p) => `- ${p}`).join('\n')}\n(npm run diff -- --format changelog prints each change's line with its tag)`;

/**
 * The one version a release from `from` may take for changes of this class, as npm's caret ranges
 * read it (a breaking change under 1.0.0 steps the minor part). No recorded change is a patch.
 */
export function releaseVersion(from: string, bump: Bump): string {
  return semver.inc(from, npmVersionArgument(from, bump))!;
}
