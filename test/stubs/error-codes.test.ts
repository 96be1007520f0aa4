// The refusal codes tied together both ways (Fastify's test/internals/errors.test.js habit): every
// entry of the catalogue (spec/refusals.yaml) has a code, and every catalogue the stubs and the
// sandbox make callable is one of the spec's; the codes are unique and never renamed or removed once
// released (released-error-codes.json); every code is on the generated page and in the ErrorCode
// type, and every code the docs name is a catalogue's. And no refusal is made outside a catalogue,
// so that every refusal the package answers carries its code.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { errorCodes } from '../../generated/error-codes.ts';
import * as sandboxCatalogue from '../../sandbox/refusals.ts';
import { bundleSpec, refusalsDocText } from '../../scripts/generate.ts';
import { type Catalogue, refusalCatalogues } from '../../scripts/generators/refusal-catalogue.ts';
import type { CatalogueEntry } from '../../runtime/refusal-catalogue.ts';
import * as stubsCatalogue from '../../server-stubs/core/refusals.ts';
import { refusalFor } from '../../server-stubs/core/refusals.ts';
import type { ErrorCode } from '../../server-stubs/index.ts';
import { ROOT } from '../support/contract.ts';

const catalogues: Catalogue[] = refusalCatalogues(await bundleSpec(), ROOT);
const entries = catalogues.flatMap((c) => c.entries.map((e) => ({ catalogue: c.name, ...e })));
const codes = entries.map((e) => e.entry.errorCode);
const released: string[] = JSON.parse(readFileSync(path.join(ROOT, 'test/stubs/released-error-codes.json'), 'utf8'));
/** A code named in prose; a prefix written with its ellipsis (PGW_ERR_SANDBOX_…) is not one. */
const CODE = /PGW_ERR_[A-Z0-9_]*[A-Z0-9](?![A-Z0-9_])/g;

type Member = ((...args: never[]) => unknown) & { errorCode?: unknown; entries?: Record<string, unknown> };
const isEntry = (member: unknown): member is CatalogueEntry<unknown[]> =>
  typeof member === 'function' && typeof (member as Member).errorCode === 'string';

/**
 * A callable catalogue's entries in its order; a family (the numbered refusals: one function, one
 * entry per name) gives its own. A member that is neither names no code: listed under `uncoded`.
 */
function entriesOf(catalogue: Record<string, unknown>): { entries: CatalogueEntry<unknown[]>[]; uncoded: string[] } {
  const entries: CatalogueEntry<unknown[]>[] = [];
  const uncoded: string[] = [];
  for (const [name, member] of Object.entries(catalogue)) {
    if (isEntry(member)) entries.push(member);
    else if (typeof member === 'function' && (member as Member).entries) {
      for (const [sub, e] of Object.entries((member as Member).entries!))
        if (isEntry(e)) entries.push(e);
        else uncoded.push(`${name}('${sub}')`);
    } else uncoded.push(name);
  }
  return { entries, uncoded };
}

/**
 * Each exported object of a catalogue module whose members are all functions: a catalogue, listed or
 * not. `forms` is the one that is not: its functions word a message, they make no refusal.
 */
const catalogueExports = (module: Record<string, unknown>) =>
  Object.entries(module).filter(
    ([name, value]) =>
      name !== 'forms' &&
      typeof value === 'object' &&
      value !== null &&
      Object.keys(value).length > 0 &&
      Object.values(value).every((member) => typeof member === 'function'),
  ) as [string, Record<string, unknown>][];

describe('every catalogue entry has a code', () => {
  it('finds the catalogues of both modules, and each of their entries is listed with its code', () => {
    const found = [...catalogueExports(stubsCatalogue), ...catalogueExports(sandboxCatalogue)];
    expect(found.map(([name]) => name)).toEqual(expect.arrayContaining(catalogues.map((c) => c.name)));
    const listed = new Set(codes);
    for (const [name, catalogue] of found) {
      const { entries: coded, uncoded } = entriesOf(catalogue);
      expect(uncoded, `${name}: entries without a code`).toEqual([]);
      // A catalogue made callable whose code is not the spec's would be a code the docs miss.
      for (const e of coded)
        expect(listed.has(e.errorCode), `${name}: ${e.errorCode} is on docs/REFUSALS.md`).toBe(true);
    }
  });

  it('tells an entry without a code from one with (the check above can fail)', () => {
    const { uncoded } = entriesOf({
      coded: stubsCatalogue.refusals.bodyRequired,
      plain: () => stubsCatalogue.refuse(-2, 'worded without an entry'),
    });
    expect(uncoded).toEqual(['plain']);
  });

  it('each entry makes refusals that carry its code', () => {
    for (const { name, entry } of entries) expect(entry(...entry.example).errorCode, name).toBe(entry.errorCode);
  });

  it('no source outside the catalogue makes a refusal of its own (refuse(), which carries no code)', () => {
    // The server stubs' door re-exports refuse for a server team's own refusals; nothing of the package uses it.
    const catalogueFiles = new Set(['server-stubs/core/refusals.ts', 'server-stubs/index.ts']);
    const files = ['server-stubs', 'sandbox', 'mock', 'contract', 'cli', 'cli-kit', 'notifications'].flatMap((dir) =>
      readdirSync(path.join(ROOT, dir), { recursive: true, withFileTypes: true })
        .filter((e) => e.isFile() && e.name.endsWith('.ts'))
        .map((e) => path.relative(ROOT, path.join(e.parentPath, e.name))),
    );
    const importers = files
      .filter((file) => !catalogueFiles.has(file))
      .filter((file) => {
        const source = ts.createSourceFile(file, readFileSync(path.join(ROOT, file), 'utf8'), ts.ScriptTarget.Latest);
        return source.statements.some(
          (s) =>
            ts.isImportDeclaration(s) &&
            s.importClause?.namedBindings !== undefined &&
            ts.isNamedImports(s.importClause.namedBindings) &&
            s.importClause.namedBindings.elements.some((e) => (e.propertyName ?? e.name).text === 'refuse'),
        );
      });
    expect(importers).toEqual([]);
  });

  it('every keyword the generated validators report has a code of its own (anyOf, oneOf, if only wrap others)', () => {
    const folder = path.join(ROOT, 'generated/validators/requests');
    const validators = readdirSync(folder)
      .map((file) => readFileSync(path.join(folder, file), 'utf8'))
      .join('\n');
    const keywords = new Set([...validators.matchAll(/keyword:"([^"]+)"/g)].map((m) => m[1]!));
    const wrappers = new Set(['anyOf', 'oneOf', 'if', 'then', 'else', 'allOf', 'not']);
    expect(keywords.size).toBeGreaterThan(10);
    for (const keyword of keywords) {
      if (wrappers.has(keyword)) continue;
      const params = { missingProperty: 'a', property: 'b', additionalProperty: 'a', limit: 1, allowedValues: ['x'] };
      const refusal = refusalFor([{ keyword, instancePath: '/a', schemaPath: '#', params }]);
      expect(refusal.errorCode, keyword).toBeDefined();
      expect(refusal.errorCode, `${keyword} has a code of its own`).not.toBe('PGW_ERR_FIELD_INVALID');
    }
  });
});

describe('the codes are unique and stable', () => {
  it('are PGW_ERR_ codes, the sandbox’s under PGW_ERR_SANDBOX_ and its control API’s under PGW_ERR_CONTROL_', () => {
    for (const { catalogue, name, entry } of entries) {
      expect(entry.errorCode, name).toMatch(/^PGW_ERR_[A-Z0-9]+(_[A-Z0-9]+)*$/);
      const prefix = { sandboxRefusals: 'PGW_ERR_SANDBOX_', controlRefusals: 'PGW_ERR_CONTROL_' }[catalogue];
      if (prefix) expect(entry.errorCode, name).toMatch(new RegExp(`^${prefix}`));
      else expect(entry.errorCode, name).not.toMatch(/^PGW_ERR_(SANDBOX|CONTROL)_/);
    }
  });

  it('no two entries share a code', () => {
    const seen = new Map<string, string>();
    const shared = entries.flatMap(({ name, entry }) => {
      const other = seen.get(entry.errorCode);
      seen.set(entry.errorCode, name);
      return other ? [`${entry.errorCode}: ${other} and ${name}`] : [];
    });
    expect(shared).toEqual([]);
  });

  it('no released code is renamed or removed (test/stubs/released-error-codes.json)', () => {
    const gone = released.filter((code) => !codes.includes(code as ErrorCode));
    expect(gone, 'a released code must stay: clients switch on it').toEqual([]);
  });

  it('a new code is added to the released list in the same change', () => {
    const unlisted = codes.filter((code) => !released.includes(code));
    expect(unlisted, 'add it to test/stubs/released-error-codes.json').toEqual([]);
  });
});

describe('the docs and the type name exactly the catalogues’ codes', () => {
  const page = readFileSync(path.join(ROOT, 'docs/REFUSALS.md'), 'utf8');

  it('docs/REFUSALS.md is what the catalogues write (run `npm run generate` if not)', async () => {
    expect(page).toBe(await refusalsDocText());
  });

  it('says a sandbox catalogue is exported by the server entry when, and only when, the entry exports it', async () => {
    // A checkout whose server entry (server-stubs/index.ts) exports another set of names: the page
    // follows the entry's real exports, not a name the generator keeps of its own.
    const bundled = await bundleSpec();
    const pageWith = async (edit: (entry: string) => string) => {
      const root = mkdtempSync(path.join(tmpdir(), 'pgw-entry-'));
      try {
        for (const dir of ['spec', 'server-stubs']) mkdirSync(path.join(root, dir));
        writeFileSync(path.join(root, 'spec/refusals.yaml'), readFileSync(path.join(ROOT, 'spec/refusals.yaml')));
        const entry = readFileSync(path.join(ROOT, 'server-stubs/index.ts'), 'utf8');
        writeFileSync(path.join(root, 'server-stubs/index.ts'), edit(entry));
        return await refusalsDocText(root, structuredClone(bundled));
      } finally {
        rmSync(root, { recursive: true, force: true });
      }
    };
    const said = (name: string) => `Its entries are exported (\`${name}\` of \`payment-gateway-contract/server\`)`;
    expect(page).toContain(said('sandboxRefusals'));
    expect(page).not.toContain(said('controlRefusals'));
    const without = await pageWith((entry) => entry.replace(/^ {2}sandboxRefusals,\n/m, ''));
    expect(without).not.toContain(said('sandboxRefusals'));
    const withControl = await pageWith((entry) => entry.replace(/^ {2}sandboxRefusals,\n/m, '$&  controlRefusals,\n'));
    expect(withControl).toContain(said('sandboxRefusals'));
    expect(withControl).toContain(said('controlRefusals'));
  });

  it('every code has its row on docs/REFUSALS.md', () => {
    const rows = new Set([...page.matchAll(/^\| `(PGW_ERR_[A-Z0-9_]+)` \|/gm)].map((m) => m[1]));
    expect(codes.filter((code) => !rows.has(code))).toEqual([]);
    expect([...rows].filter((code) => !codes.includes(code as ErrorCode))).toEqual([]);
  });

  it('every code the docs and the README name is a catalogue’s', () => {
    const docs = ['README.md', ...readdirSync(path.join(ROOT, 'docs')).map((f) => `docs/${f}`)].filter((f) =>
      f.endsWith('.md'),
    );
    const unknown = docs.flatMap((file) =>
      [...readFileSync(path.join(ROOT, file), 'utf8').matchAll(CODE)]
        .map((m) => m[0])
        .filter((code) => !codes.includes(code as ErrorCode))
        .map((code) => `${file}: ${code}`),
    );
    expect(unknown).toEqual([]);
  });

  it('the ErrorCode type is the union of exactly these codes, in order', () => {
    expect([...errorCodes]).toEqual(codes);
    // Held by typecheck: a code is one of the union, a made-up one is not.
    const known: ErrorCode = 'PGW_ERR_SANDBOX_NO_SUCH_CARD';
    // @ts-expect-error not a code of any catalogue
    const unknown: ErrorCode = 'PGW_ERR_NO_SUCH_CODE';
    expect(codes).toContain(known);
    expect(codes).not.toContain(unknown);
  });
});
