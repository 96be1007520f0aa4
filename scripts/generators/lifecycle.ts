// What the docs show of versions: the package version beside the API version in the introduction,
// and the lifecycle marks (x-added-in, x-deprecated-in, x-removal; spec/extensions/lifecycle.schema.yaml)
// as badges and a note on every operation, schema or field that carries them.
import type { Doc } from '../lib/contract.ts';

const ADDED = '#2e7d32';
const DEPRECATED = '#8a6d00';

/** The note and badges one element's marks give, or nothing when it has none. */
export function lifecycleNote(
  node: Record<string, unknown>,
): { note: string; badges: { name: string; color: string }[] } | undefined {
  const added = node['x-added-in'];
  const deprecated = node['x-deprecated-in'];
  const removal = node['x-removal'];
  if (!added && !deprecated) return undefined;
  const parts: string[] = [];
  const badges: { name: string; color: string }[] = [];
  if (added) {
    parts.push(`**Added in ${added}.**`);
    badges.push({ name: `Added in ${added}`, color: ADDED });
  }
  if (deprecated) {
    parts.push(`**Deprecated in ${deprecated}**${removal ? `; it may be removed from ${removal} on` : ''}.`);
    badges.push({ name: `Deprecated in ${deprecated}`, color: DEPRECATED });
  }
  return { note: parts.join(' '), badges };
}

function mark(node: unknown): void {
  if (!node || typeof node !== 'object') return;
  if (Array.isArray(node)) {
    for (const n of node) mark(n);
    return;
  }
  const record = node as Record<string, any>;
  const found = lifecycleNote(record);
  if (found) {
    record.description = `${found.note}${record.description ? `\n\n${record.description}` : ''}`;
    record['x-badges'] = [...(record['x-badges'] ?? []), ...found.badges];
  }
  for (const [key, value] of Object.entries(record)) if (key !== 'examples' && key !== 'example') mark(value);
}

/** Marks a copy of the document for readers (the docs' own copy: the spec is not changed). */
export function showVersions(doc: Doc, packageName: string, packageVersion: string): void {
  mark(doc.paths);
  mark(doc.webhooks);
  mark(doc.components);
  const line = `**Versions:** API ${doc.info.version} (the \`SVC-API-VERSION\` header), described by the package \`${packageName}\` ${packageVersion}. What changed in each package version is in its CHANGELOG.md; elements added later say "Added in", deprecated ones "Deprecated in".`;
  doc.info.description = `${line}\n\n${doc.info.description ?? ''}`;
}
