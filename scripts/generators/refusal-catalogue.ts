// The refusal catalogue (spec/refusals.yaml): every refusal the package can make, with its stable
// code (Fastify's error codes), read from the spec like everything else. It writes
// generated/refusal-catalogue.ts (the entries and their arguments' types, which the server stubs and
// the sandbox make their refusals with), generated/error-codes.ts (the ErrorCode union) and
// docs/REFUSALS.md (each code, its responseCode, status, message and when). A family of entries (the
// numbered refusals) is one entry per name of the list in the bundled document it points to.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { resolvePointer, type Doc } from '../../runtime/document.ts';
import { entryOf, type CatalogueEntry, type EntryText } from '../../runtime/refusal-catalogue.ts';
import { SERVER_ENTRY } from '../lib/as-installed.ts';
import { tsHeader } from './banner.ts';

export const CATALOGUE_FILE = 'spec/refusals.yaml';

/**
 * Who makes a catalogue's refusals: every server of the contract, or the sandbox alone (then a change
 * to them asks nothing of a gateway's server).
 */
export const MADE_BY = ['servers', 'sandbox'] as const;
export type MadeBy = (typeof MADE_BY)[number];

/** A catalogue as the page shows it: its name, what it covers, who makes it, and its entries in order. */
export interface Catalogue {
  name: string;
  about: string;
  /** Undefined in a catalogue written before the field (a git ref's spec, read by `npm run diff`). */
  madeBy: MadeBy | undefined;
  entries: { name: string; entry: CatalogueEntry<unknown[]> }[];
  /** Its entries as the spec writes them (a family's, one per name), for generated/refusal-catalogue.ts. */
  texts: { name: string; text: EntryText; family?: string }[];
}

interface WrittenEntry {
  code?: string;
  responseCode: EntryText['responseCode'];
  status?: number;
  args?: Record<string, string>;
  message?: string | string[];
  when: string;
  example?: unknown[];
  /** A family: the list (a pointer into the bundled document) that names and words its entries. */
  family?: string;
  codes?: Record<string, string>;
}

/** The catalogue file, read as written (its x- keys are the file's own shorthands: YAML anchors). */
function readCatalogueFile(
  root: string,
): Record<string, { about: string; madeBy?: string; entries: Record<string, WrittenEntry> }> {
  const parsed = YAML.parse(readFileSync(path.join(root, CATALOGUE_FILE), 'utf8'), { merge: true });
  return Object.fromEntries(Object.entries(parsed).filter(([key]) => !key.startsWith('x-'))) as never;
}

const text = (e: WrittenEntry, where: string): EntryText => {
  if (!e.code || !e.message || !e.when || typeof e.responseCode !== 'number')
    throw new Error(`${CATALOGUE_FILE}: ${where} needs a code, a responseCode, a message and when`);
  return {
    code: e.code,
    responseCode: e.responseCode,
    ...(e.status === undefined ? {} : { status: e.status }),
    ...(e.args ? { args: Object.entries(e.args) } : {}),
    message: e.message,
    when: e.when,
    ...(e.example ? { example: e.example } : {}),
  };
};

/**
 * Every catalogue of the spec, in its order (the stubs' first: every server makes those). `past`: the
 * spec of an earlier commit, whose catalogues may have been written before `madeBy`.
 */
export function refusalCatalogues(doc: Doc, root: string, past = false): Catalogue[] {
  return Object.entries(readCatalogueFile(root)).map(([name, { about, madeBy, entries }]) => {
    if (!(MADE_BY as readonly unknown[]).includes(madeBy) && !(past && madeBy === undefined))
      throw new Error(`${CATALOGUE_FILE}: ${name}.madeBy must be one of ${MADE_BY.join(', ')}`);
    const texts: Catalogue['texts'] = [];
    for (const [entryName, written] of Object.entries(entries)) {
      if (!written.family) {
        texts.push({ name: entryName, text: text(written, `${name}.${entryName}`) });
        continue;
      }
      // One entry per name of the list, worded as it words them: a message the spec's list changes follows.
      const list: Record<string, { message: string }> = resolvePointer(doc, written.family);
      for (const [member, { message }] of Object.entries(list)) {
        const code = written.codes?.[member];
        if (!code) throw new Error(`${CATALOGUE_FILE}: ${name}.${entryName} has no code for ${member}`);
        texts.push({
          name: member,
          family: entryName,
          text: { code, responseCode: written.responseCode, message, when: written.when.replace('{name}', member) },
        });
      }
    }
    return {
      name,
      about,
      madeBy: madeBy as MadeBy | undefined,
      texts,
      entries: texts.map((t) => ({
        name: t.family ? `${t.family}('${t.name}')` : t.name,
        entry: entryOf<unknown[]>(t.text),
      })),
    };
  });
}

/** A type of spec/refusals.yaml as TypeScript writes it. */
function tsType(type: string): { type: string; optional: boolean } {
  const optional = type.endsWith('?');
  const [base, ...rest] = type
    .replace(/\?$/, '')
    .split('|')
    .map((t) => t.trim());
  const ts = { string: 'string', upper: 'string', number: 'number', list: 'readonly string[]', kind: 'RefusalKind' }[
    base!
  ];
  if (!ts) throw new Error(`${CATALOGUE_FILE}: no type ${base}`);
  return { type: [ts, ...rest].join(' | '), optional: optional || base === 'kind' };
}

const argsTuple = (t: EntryText) =>
  `[${(t.args ?? [])
    .map(([name, type]) => {
      const { type: ts, optional } = tsType(type);
      return `${name}${optional ? '?' : ''}: ${ts}`;
    })
    .join(', ')}]`;

/** generated/refusal-catalogue.ts: each catalogue's entries as the spec writes them, and their arguments' types. */
export function refusalCatalogueModule(catalogues: Catalogue[]): string {
  const entriesOf = (c: Catalogue, family: boolean) =>
    Object.fromEntries(c.texts.filter((t) => Boolean(t.family) === family).map((t) => [t.name, t.text]));
  const families = catalogues.filter((c) => c.texts.some((t) => t.family));
  const argsOf = (c: Catalogue, family: boolean) =>
    c.texts
      .filter((t) => Boolean(t.family) === family)
      .map((t) => `    ${JSON.stringify(t.name)}: ${argsTuple(t.text)};`);
  return [
    tsHeader(`The refusal catalogue (${CATALOGUE_FILE}): each entry, and the arguments it takes.`).trimEnd(),
    '',
    "import type { EntryText } from '../runtime/refusal-catalogue.ts';",
    "import type { RefusalKind } from '../runtime/refusal-text.ts';",
    '',
    "/** Each catalogue's entries, by name (runtime/refusal-catalogue.ts makes them callable). */",
    `export const refusalCatalogue = ${JSON.stringify(Object.fromEntries(catalogues.map((c) => [c.name, entriesOf(c, false)])), null, 2)} as const satisfies Record<string, Record<string, EntryText>>;`,
    '',
    '/** The families of entries (one entry per name of a list the spec words), by catalogue and family. */',
    `export const refusalFamilies = ${JSON.stringify(Object.fromEntries(families.map((c) => [c.name, Object.fromEntries([...new Set(c.texts.filter((t) => t.family).map((t) => t.family!))].map((f) => [f, entriesOf(c, true)]))])), null, 2)} as const satisfies Record<string, Record<string, Record<string, EntryText>>>;`,
    '',
    '/** What each entry is called with, in order. */',
    'export interface RefusalArgs {',
    ...catalogues.flatMap((c) => [`  ${c.name}: {`, ...argsOf(c, false), '  };']),
    '}',
    '',
  ].join('\n');
}

const HEADER = `Generated by scripts/generate.ts (scripts/generators/refusal-catalogue.ts) from the refusal catalogue, ${CATALOGUE_FILE}. Do not edit: change the catalogue and run \`npm run generate\`.`;

/** generated/error-codes.ts: every code, in the catalogues' order, and their union. */
export function errorCodesModule(catalogues: Catalogue[]): string {
  const codes = catalogues.flatMap((c) => c.entries.map((e) => e.entry.errorCode));
  return `// ${HEADER}
// Each refusal's stable code, written once beside its entry in a catalogue (docs/REFUSALS.md).
export const errorCodes = ${JSON.stringify(codes, null, 2)} as const;

/** A refusal's stable code: in the request log (errorCode=…), never in the gateway's answer. */
export type ErrorCode = (typeof errorCodes)[number];
`;
}

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/**
 * docs/REFUSALS.md: each catalogue's codes, with the answer each gives and when. `serverExports` are
 * the names the server stubs' entry exports (SERVER_ENTRY, read by valueExports): a sandbox catalogue
 * it exports under the catalogue's name is said to be exported, and only then.
 */
export function refusalsDoc(catalogues: Catalogue[], serverExports: ReadonlySet<string>): string {
  const total = catalogues.reduce((n, c) => n + c.entries.length, 0);
  const sections = catalogues.map((c) => {
    const rows = c.entries.map(({ name, entry }) => {
      const refusal = entry(...entry.example);
      const status = refusal.status === undefined ? "the operation's" : String(refusal.status);
      return `| \`${entry.errorCode}\` | ${refusal.code} | ${status} | ${cell(refusal.message)} | ${cell(entry.when)} | \`${name}\` |`;
    });
    return [
      `## \`${c.name}\` (${CATALOGUE_FILE})`,
      '',
      c.about,
      '',
      `Made by ${c.madeBy === 'servers' ? 'every server of the contract: a refusal added here, or a changed responseCode or HTTP status, asks each server to change' : `the sandbox alone: a change here asks nothing of a gateway's server${serverExports.has(c.name) ? `. Its entries are exported (\`${c.name}\` of \`${SERVER_ENTRY.specifier}\`) for a server team to answer its own business rules in the same words: renaming or removing an entry, or rewording it, changes the package for them (a release note; a removal waits for a major version)` : ''}`} (\`madeBy: ${c.madeBy}\`, read by \`npm run diff\`).`,
      '',
      '| code | responseCode | HTTP status | message (an example) | when | entry |',
      '|---|---|---|---|---|---|',
      ...rows,
    ].join('\n');
  });
  return `<!-- ${HEADER} -->
# Refusals and their codes

Every refusal the package can make has a stable code, \`PGW_ERR_…\` (\`PGW_ERR_SANDBOX_…\` for the
sandbox's business rules, \`PGW_ERR_CONTROL_…\` for its control API; Fastify's \`FST_ERR_…\` habit, and
apart from the \`PGW_…\` environment variables), written once beside its entry in the catalogue,
${CATALOGUE_FILE}.
The gateway's answer does not carry it: a refusal on the wire is the gateway's \`responseCode\` and
\`responseMessage\`, nothing more. The code is where a team can see it without changing the wire:

- the request log of the stubs (\`payment-gateway: refused … errorCode=PGW_ERR_FIELD_REQUIRED …\`) and of
  the sandbox (\`… -3 1.2ms PGW_ERR_FIELD_REQUIRED\`), and the \`errorCode\` of the stubs' \`onRequest\`
  record (docs/SERVER-STUBS.md);
- the contract-test suite's report, where a check expected a refusal (\`expected -3 PGW_ERR_FIELD_REQUIRED\`);
- the \`ErrorCode\` type the server stubs export (\`import type { ErrorCode } from
  'payment-gateway-contract/server'\`), the union of the codes below, for a test to switch on.

A code is never renamed or removed once released (\`test/stubs/error-codes.test.ts\` holds the released
list); a message may be reworded. A message names the field and the rule, never a value; the examples
below show what varies as \`{name}\` or as an example value.

${total} codes.

${sections.join('\n\n')}
`;
}
