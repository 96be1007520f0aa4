// The contract's breaking-change check: every change between two versions of the bundled spec, each
// judged for clients and for servers, the semver bump they need together, and whether the package
// version moved far enough. Public entry of scripts/diff/ (run.ts is its command line).
import { maxBump, type Bump, type Change } from './change.ts';
import { type ChangeGroup, changeGroups } from './changelog-gate.ts';
import { contractChanges } from './contract-changes.ts';
import { refusalChanges } from './refusal-changes.ts';
import type { Loaded } from './load.ts';
import { schemaChanges } from './schema-changes.ts';

import { npmVersionArgument, versionStep } from './version.ts';

export type { Bump, Change } from './change.ts';
export type { RefusalEntry, Refusals, RefusalSnapshot } from './refusal-changes.ts';
export { refusalEntries } from './refusal-changes.ts';
export { npmVersionArgument, versionStep } from './version.ts';
export { lastRelease, load, releaseSnapshot, workingTree, type Loaded } from './load.ts';
export {
  changeGroups,
  type ChangeGroup,
  changelogProblems,
  changelogRefusal,
  checkChangelog,
  releaseVersion,
  unreleased,
  type ChangelogCheck,
} from './changelog-gate.ts';

export interface DiffReport {
  base: { label: string; version: string | undefined; api: string | undefined };
  revision: { label: string; version: string | undefined; api: string | undefined };
  changes: Change[];
  bump: Bump;
  breaksClients: boolean;
  breaksServers: boolean;
  /** False when a breaking change comes without a version outside the base's caret range. */
  versionOk?: boolean;
  /** What `npm version` the next release needs (from the base's version). */
  needed?: string;
}

/** Each side as load.ts answers it: its bundled document, version, and refusal catalogue where it was read. */
export async function diffDocs(base: Loaded, revision: Loaded): Promise<DiffReport> {
  const changes = [
    ...contractChanges(base.doc, revision.doc),
    ...(await schemaChanges(base.doc, revision.doc)),
    ...refusalChanges(base.refusals, revision.refusals),
  ];
  const bump = maxBump(changes.map((c) => c.bump));
  const report: DiffReport = {
    base: { label: base.label, version: base.version, api: base.doc.info?.version },
    revision: { label: revision.label, version: revision.version, api: revision.doc.info?.version },
    changes,
    bump: changes.length ? bump : 'patch',
    breaksClients: changes.some((c) => c.clients),
    breaksServers: changes.some((c) => c.servers),
  };
  if (base.version && revision.version && changes.length) {
    const step = versionStep(base.version, revision.version);
    // Only a breaking change must come with its step: additions and fixes wait under Unreleased
    // for the next release, whose `npm version` the report names.
    report.versionOk = bump !== 'major' || step === 'major';
    report.needed = npmVersionArgument(base.version, bump);
  }
  return report;
}

const yes = (b: boolean) => (b ? '**breaking**' : 'no');

/** The report as Markdown: a table per verdict, for a pull request or the changelog. */
export function markdown(report: DiffReport): string {
  const lines = [
    `# Contract changes: ${report.base.label} → ${report.revision.label}`,
    '',
    `Package ${report.base.version ?? '?'} → ${report.revision.version ?? '?'}, API ${report.base.api ?? '?'} → ${report.revision.api ?? '?'}. ` +
      `${report.changes.length} change(s); needs a **${report.bump}** version. Breaks clients: ${report.breaksClients ? 'yes' : 'no'}; breaks servers: ${report.breaksServers ? 'yes' : 'no'}.`,
  ];
  if (report.versionOk === false && report.revision.version === report.base.version)
    // The working tree between releases: its changes wait under Unreleased for the release's step.
    lines.push(
      '',
      `Not released yet: the next release takes \`npm version ${report.needed}\` from ${report.base.version} (a breaking change).`,
    );
  else if (report.versionOk === false)
    lines.push(
      '',
      `**Version check failed:** a breaking change needs a major step from ${report.base.version} (${report.revision.version} is not one). Run \`npm version ${report.needed}\`.`,
    );
  else if (report.needed && report.changes.length)
    lines.push('', `The next release: \`npm version ${report.needed}\` from ${report.base.version}.`);
  if (!report.changes.length) return `${lines.join('\n')}\n\nNo changes.\n`;
  lines.push('', '| bump | clients | servers | kind | operations | change |', '|---|---|---|---|---|---|');
  const order: Bump[] = ['major', 'minor', 'patch'];
  for (const c of [...report.changes].sort((a, b) => order.indexOf(a.bump) - order.indexOf(b.bump))) {
    const ops =
      c.operations.length > 4
        ? `${c.operations.slice(0, 4).join(', ')} and ${c.operations.length - 4} more`
        : c.operations.join(', ');
    lines.push(
      `| ${c.bump} | ${yes(c.clients)} | ${yes(c.servers)} | ${c.kind} | ${ops} | ${c.message.replace(/\|/g, '\\|').replace(/\n/g, ' ')} |`,
    );
  }
  return `${lines.join('\n')}\n`;
}

/**
 * The changes as Keep a Changelog sections, to paste under `## [Unreleased]` and edit: Added,
 * Changed, Deprecated, Removed, a line for each group of changes one tag records (changelog-gate.ts),
 * marked "(breaking change)" for clients where it is one and "(servers must change)" where a server
 * written for the base no longer conforms, and ending with its tag (`minor: method-added
 * queryRefund`), which `npm test` looks for.
 */
export function changelogSections(report: DiffReport): string {
  const sections: Record<string, string[]> = { Added: [], Changed: [], Deprecated: [], Removed: [] };
  for (const group of changeGroups(report.changes)) {
    const section = group.kind.endsWith('-added')
      ? 'Added'
      : group.kind.endsWith('-removed')
        ? 'Removed'
        : group.kind.endsWith('-deprecated')
          ? 'Deprecated'
          : 'Changed';
    const marks = [
      group.changes.some((c) => c.clients) ? '**(breaking change)**' : '',
      group.changes.some((c) => c.servers) ? '(servers must change)' : '',
    ]
      .filter(Boolean)
      .join(' ');
    sections[section]!.push(`- ${groupMessage(group)}${marks ? ` ${marks}` : ''} \`${group.tag}\``);
  }
  const out = Object.entries(sections)
    .filter(([, lines]) => lines.length)
    .map(([name, lines]) => `### ${name}\n${lines.join('\n')}`);
  return out.length ? `${out.join('\n\n')}\n` : '_No contract changes._\n';
}

/** One change says itself; a group says its kind and how many operations it reaches. */
function groupMessage(group: ChangeGroup): string {
  const messages = [...new Set(group.changes.map((c) => c.message))];
  if (messages.length === 1) return messages[0]!;
  return `${group.kind.replace(/-/g, ' ')}: the same change in ${group.operations.length} operations`;
}
