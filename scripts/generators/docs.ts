// The documentation: the bundled document decorated for readers (each method of a shared path on
// a page of its own, see docs-view.ts), then built by Redocly's build-docs
// with Redoc inlined and its telemetry off (it opens from disk and sends nothing anywhere). Decorations come from the contract's own
// extensions: each method's result and examples (x-methods), hashes and credentials, provenance
// (x-inferred, seed) as badges and notes, and the README's client quick start in the introduction.
import { withExactRequests } from './tolerant-requests.ts';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import YAML from 'yaml';
import { resolvePointer, type Doc, type Operation } from '../lib/contract.ts';
import { asInstalled } from '../lib/as-installed.ts';
import { cachedBuild } from '../lib/build-cache.ts';
import { BANNER } from './banner.ts';
import { showVersions } from './lifecycle.ts';
import { codeSamples, methodPath, recipesSection, splitSharedPaths } from './docs-view.ts';
import { tableEntries } from './operations.ts';
import { withTryIt } from './try-it/page.ts';

const INFERRED = { name: 'Inferred', color: '#b35c00' };

function provenanceNote(op: Operation): string {
  const lines = [op.seed ? `**Seeded:** the specification shows it (${op.seed}).` : `**Inferred:** ${op.inferred}`];
  if (op.resultInferred) lines.push(`**Result inferred:** ${op.resultInferred}`);
  if (op.payloadInferred) lines.push(`**Payload inferred:** ${op.payloadInferred}`);
  return lines.join('\n\n');
}

function securityNote(op: Operation, doc: Doc): string {
  const parts: string[] = [];
  if (op.credentials?.length)
    parts.push(`credentials in the body: ${op.credentials.map((c) => `\`${c}\``).join(', ')}`);
  for (const h of op.hashes ?? [])
    parts.push(
      `\`${h.name}\` ${h.in === 'header' ? '(header) ' : ''}by the recipe [\`${h.recipe}\`](#section/Hash-recipes)`,
    );
  for (const h of op.resultHashes ?? []) parts.push(`the result's \`${h.name}\` by the recipe \`${h.recipe}\``);
  const recipes = doc['x-hash-recipes'];
  const defined = (op.hashes ?? []).filter((h) => recipes[h.recipe]?.source === 'defined').map((h) => h.recipe);
  const note = parts.length ? `**Authentication:** ${parts.join('; ')}.` : '';
  const list = defined.map((r) => `\`${r}\``).join(', ');
  if (!defined.length) return note;
  return `${note} ${defined.length === 1 ? `The recipe ${list} is` : `The recipes ${list} are`} defined by this contract (no public source shows ${defined.length === 1 ? 'it' : 'them'}).`;
}

function markInferred(node: any): void {
  if (!node || typeof node !== 'object') return;
  if (Array.isArray(node)) {
    for (const n of node) markInferred(n);
    return;
  }
  if (typeof node['x-inferred'] === 'string') {
    node.description = `**Inferred:** ${node['x-inferred']}${node.description ? `\n\n${node.description}` : ''}`;
    node['x-badges'] = [...(node['x-badges'] ?? []), INFERRED];
  }
  for (const value of Object.values(node)) markInferred(value);
}

export async function decorate(doc: Doc, ops: Operation[], quickStart: string): Promise<Doc> {
  // The page shows each request's exact schema; the tolerant copies validators read requests with
  // (scripts/generators/tolerant-requests.ts) are described in the introduction, not listed.
  const out: Doc = structuredClone(withExactRequests(doc));
  markInferred(out.components.schemas);
  markInferred(out.components.parameters);
  markInferred(out.components.responses);
  for (const op of ops) {
    if (op.method && !op.webhook) continue; // a page of its own, below
    const item = (op.webhook ? out.webhooks : out.paths)[op.path][op.verb];
    item.description = [item.description, provenanceNote(op), securityNote(op, out)].filter(Boolean).join('\n\n');
    if (op.inferred) item['x-badges'] = [INFERRED];
    if (!op.webhook) item['x-codeSamples'] = codeSamples(op, out);
  }
  // Each method of a shared path: its own operation, sidebar entry, URL and page (docs only).
  splitSharedPaths(out, ops, (op) => {
    const schema = resolvePointer(out, op.request!);
    return [schema.description, provenanceNote(op), securityNote(op, out)].filter(Boolean).join('\n\n');
  });
  for (const op of ops.filter((o) => o.method && o.inferred && !o.webhook))
    out.paths[methodPath(op)].post['x-badges'] = [INFERRED];
  // The recipes written out in full, in place of the introduction's summary table.
  const intro: string = out.info.description ?? '';
  const start = intro.indexOf('## Hash recipes');
  if (start >= 0) {
    const end = intro.indexOf('\n## ', start + 3);
    out.info.description = `${intro.slice(0, start)}${recipesSection(out, ops)}\n${end >= 0 ? intro.slice(end) : ''}`;
  }
  // Redoc's Servers box shows a description as plain text: no Markdown in it.
  for (const server of out.servers ?? [])
    if (server.description) server.description = server.description.replace(/`/g, '');
  out.info.description += `\n\n## Client quick start\n\nWith the typed client (\`payment-gateway-contract/client\`), signing is done for you:\n\n\`\`\`ts\n${quickStart}\`\`\`\n\nEvery request and result type comes from this document; see the README for the server stubs, the sandbox and the mock.\n`;
  return out;
}

// Redoc's attribution logo is an <img> from its CDN, which a page that must open offline cannot load:
// it is swapped for an inline SVG that keeps the attribution.
const LOGO = `data:image/svg+xml,${encodeURIComponent('<svg xmlns="http://www.w3.org/2000/svg" width="64" height="16"><text x="0" y="12" font-family="sans-serif" font-size="12" fill="#888">Redocly</text></svg>')}`;
// The page's icon, inline: a browser asks a server for /favicon.ico when a page names no icon (a 404
// in every console where the page is served), and a page opened from disk can load nothing else.
const ICON = `data:image/svg+xml,${encodeURIComponent('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect x="2" y="7" width="28" height="19" rx="3" fill="#0044d4"/><rect x="2" y="11" width="28" height="4" fill="#0b1f4d"/><rect x="6" y="19" width="9" height="3" rx="1" fill="#fff"/></svg>')}`;
const offline = (html: string) =>
  html
    .replace(/^<!DOCTYPE html>/i, `<!DOCTYPE html><!-- ${BANNER} -->`)
    .replace(/<head>/i, `<head>\n  <link rel="icon" type="image/svg+xml" href="${ICON}">`)
    .replace(/https:\/\/cdn\.redoc\.ly\/redoc\/logo-mini(-full)?\.svg/g, LOGO);

/** The documentation page: Redoc inlined, nothing loaded from elsewhere. */
export async function docsPage(root: string, doc: Doc, ops: Operation[]): Promise<string> {
  return withTryIt(offline(await buildDocs(root, doc, ops)), doc, tableEntries(doc, ops), ops);
}

/** The languages of the page's samples, in the order the operations first show them, as Redocly's list names them. */
export function sampleLanguages(decorated: Doc): { lang: string; label: string }[] {
  const labels = new Set<string>();
  for (const item of Object.values<any>(decorated.paths))
    for (const op of Object.values<any>(item))
      for (const sample of op?.['x-codeSamples'] ?? []) labels.add(sample.label);
  return [...labels].map((label) => ({ lang: label, label }));
}

/** Redoc's page for the decorated document, inlined (built once per input: scripts/lib/build-cache.ts). */
async function buildDocs(root: string, doc: Doc, ops: Operation[]): Promise<string> {
  const quickStart = asInstalled(await readFile(path.join(root, 'examples/client-quick-start.ts'), 'utf8'));
  const decorated = await decorate(doc, ops, quickStart);
  const pkg = JSON.parse(await readFile(path.join(root, 'package.json'), 'utf8'));
  showVersions(decorated, pkg.name, pkg.version);
  const input = JSON.stringify(decorated);
  // Redocly offers a sample only in a language its list names (by default curl, JavaScript, Python,
  // C#, PHP, Ruby…, not TypeScript): the list is the samples' own labels, so every one is reachable.
  const config = YAML.stringify({ openapi: { codeSamples: { languages: sampleLanguages(decorated) } } });
  const title = `${doc.info.title} ${doc.info.version}`;
  const command = (document: string, output: string, options: string) => [
    'build-docs',
    document,
    '--output',
    output,
    '--inlineBundle',
    '--title',
    title,
    '--config',
    options,
    '--lint-config',
    'off',
  ];
  // Off: the CLI's own telemetry, and the page's (it sets Redoc's disableTelemetry).
  const env = { REDOCLY_TELEMETRY: 'off' };
  // The command and its environment are part of the key: a changed option builds the page anew.
  const how = JSON.stringify({ command: command('<document>', '<output>', '<config>'), env });
  const page = await cachedBuild(root, 'docs', [input, config, how], async (file) => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'pgw-docs-'));
    try {
      await writeFile(path.join(dir, 'openapi.json'), input);
      await writeFile(path.join(dir, 'redocly.yaml'), config);
      await promisify(execFile)(
        process.execPath,
        [
          path.join(root, 'node_modules/@redocly/cli/bin/cli.js'),
          ...command(path.join(dir, 'openapi.json'), file, path.join(dir, 'redocly.yaml')),
        ],
        { cwd: root, env: { ...process.env, ...env } },
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
  return page.toString('utf8');
}
