// The breaking-change check (scripts/diff) on a copy of the spec changed in many ways at once, each
// with the verdict a client team and a server team would give it. Redocly's own rating is the
// outside opinion: where a change travels on one side only, it must agree with ours for clients.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import {
  changeGroups,
  diffDocs,
  load,
  npmVersionArgument,
  refusalEntries,
  releaseSnapshot,
  versionStep,
  workingTree,
  type Change,
  type DiffReport,
  type RefusalEntry,
  type Refusals,
} from '../../scripts/diff/index.ts';
import { schemaUsage } from '../../scripts/diff/usage.ts';
import { contractOperations, type Doc, type DocNode } from '../../scripts/lib/contract.ts';
import { keepRelease } from '../../scripts/diff/release-changelog.ts';
import { canonicalOnly } from '../../runtime/document.ts';
import { ROOT } from '../support/contract.ts';

let base: Doc;
/** The commit that wrote spec/refusals.yaml (a shallow clone lacks it: that test is skipped). */
const CATALOGUE_ADDED = 'b03d7d9';
const hasCommit = (commit: string) =>
  spawnSync('git', ['cat-file', '-e', `${commit}^{commit}`], { cwd: ROOT }).status === 0;
let report: DiffReport;
let alternative: string;

const find = (kind: string, test: (c: Change) => boolean = () => true): Change => {
  const found = report.changes.filter((c) => c.kind === kind && test(c));
  expect(
    found,
    `${kind} in\n${report.changes.map((c) => `${c.kind} ${c.operations.join(',')} ${c.message}`).join('\n')}`,
  ).toHaveLength(1);
  return found[0]!;
};
const on = (op: string) => (c: Change) => c.operations.includes(op);
const at = (pointer: string) => (c: Change) => c.pointer === pointer;
const verdictOf = (c: Change) => ({ clients: c.clients, servers: c.servers, bump: c.bump });

beforeAll(async () => {
  base = (await workingTree()).doc;
  // A revision made by hand, some of it outside the document's declared shape on purpose (a legacy form with parts).
  const rev: DocNode = structuredClone(base);
  const s = rev.components.schemas;
  // The preconditions the verdicts rely on: which side each changed schema travels on.
  const usage = schemaUsage(base);
  expect(usage.get('CardType')!.in.size).toBe(0);
  expect(usage.get('CardBrand')!.in.size).toBe(0);
  expect(usage.get('SimulateNotifyRequest')!.out.size).toBe(0);
  expect(usage.get('AddMerchantRequest')!.out.size).toBe(0);
  expect(usage.get('TransactionID')!.in.size && usage.get('TransactionID')!.out.size).toBeTruthy();

  s.ProcessCaptureRequest.required.push('networkTransactionID'); //               1 new required request field
  delete s.CaptureResult.properties.receiptNo; //                                  2 removed result field
  s.CaptureResult.required = s.CaptureResult.required.filter((f: string) => f !== 'receiptNo');
  s.SimulateNotifyRequest.properties.event.enum.pop(); //                          3 request enum narrowed
  s.CardType.enum = s.CardType.enum.filter((v: string) => v !== 'unionpay'); //    4 result enum narrowed
  s.CardBrand.enum.push('maestro'); //                                             5 result enum widened
  s.AddMerchantRequest.properties.status.enum.push('suspended'); //                 6 request enum widened
  s.TransactionID.maxLength = 40; //                                               7 limit on a field of both sides
  s.ProcessCaptureRequest.properties.note = { type: 'string', maxLength: 50 }; //  8 new optional request field
  s.CaptureResult.properties.settledAt = { type: 'string' }; //                     9 new optional result field
  s.BatchUUID.type = 'integer'; //                                                 10 type change
  delete s.BatchUUID.pattern;
  const post = rev.paths['/post'].post;
  const body = post.requestBody.content['application/json'].schema; //             11 method removed
  body.oneOf = body.oneOf.filter((r: DocNode) => r.$ref !== '#/components/schemas/ProcessVoidRequest');
  delete body.discriminator?.mapping.processVoid;
  delete post['x-methods'].processVoid;
  post['x-methods'].refundCard.result = '#/components/schemas/TransactionResult'; // 12 method -> result map
  delete rev.paths['/npp/payto/agreement'].post; //                                 13 operation removed
  rev.paths['/npp/payid'].post.security = [{ SvcMerchantId: [], SvcApiKey: [] }]; // 14 header credential dropped
  rev['x-hash-recipes'].transaction.parts.reverse(); //                             15 hash recipe changed
  post['x-methods'].queryCard.credentials = ['merchant', 'accessToken']; //         16 body credentials added
  rev.components.securitySchemes.SvcApiKey.name = 'SVC-API-TOKEN'; //               17 credential header renamed
  s.ProcessAuthRequest.description = 'Reworded.'; //                                18 prose only
  // 19 another accepted form, on a recipe that has none yet
  alternative = Object.keys(base['x-hash-recipes']).find(
    (name) => !base['x-hash-recipes'][name]?.legacy && name !== 'transaction',
  )!;
  rev['x-hash-recipes'][alternative].legacy = { parts: [{ secret: 'passphrase' }, { field: 'merchantUUID' }] };
  s.NotUsedYet = { type: 'string' }; //                                             20 a component nothing uses
  report = await diffDocs(
    { label: 'spec', doc: base, version: '0.1.0' },
    { label: 'changed copy', doc: rev as Doc, version: '0.1.1' },
  );
});

describe('npm run diff: verdicts for clients and servers', () => {
  it('a new required request field breaks clients', () => {
    const c = find('request-field-required', on('processCapture'));
    expect(verdictOf(c)).toEqual({ clients: true, servers: false, bump: 'major' });
    expect(c.redocly).toBe('major');
  });
  it('a removed result field breaks clients (and servers, which still send it to a closed schema)', () => {
    const c = find('result-field-removed', on('processCapture'));
    expect(verdictOf(c)).toEqual({ clients: true, servers: true, bump: 'major' });
    expect(c.redocly).toBe('major');
  });
  it('a narrowed request enum breaks clients; a narrowed result enum does not (servers must stop sending it)', () => {
    const request = find('request-enum-narrowed', on('simulateNotify'));
    expect(verdictOf(request)).toEqual({ clients: true, servers: false, bump: 'major' });
    expect(request.redocly).toBe('major');
    const result = find('result-enum-narrowed', on('processCard'));
    expect(verdictOf(result)).toEqual({ clients: false, servers: true, bump: 'minor' });
    expect(result.redocly).toBe('patch');
  });
  it('a widened result enum breaks clients; a widened request enum asks servers to accept it', () => {
    const result = find('result-enum-widened', on('cardInfo'));
    expect(verdictOf(result)).toEqual({ clients: true, servers: false, bump: 'major' });
    expect(result.redocly).toBe('major');
    expect(verdictOf(find('request-enum-widened', on('addMerchant')))).toEqual({
      clients: false,
      servers: true,
      bump: 'minor',
    });
  });
  it('a tighter limit on a field of requests and results breaks both (Redocly sees one side only)', () => {
    const c = find('shared-limit-changed', at('#/components/schemas/TransactionID/maxLength'));
    expect(verdictOf(c)).toEqual({ clients: true, servers: true, bump: 'major' });
    expect(c.operations).toEqual(expect.arrayContaining(['processCapture', 'queryCard', 'processCard']));
  });
  it('an optional request field is minor: clients need not send it, servers must accept it', () => {
    expect(verdictOf(find('request-field-added', on('processCapture')))).toEqual({
      clients: false,
      servers: true,
      bump: 'minor',
    });
  });
  it('an optional result field is minor and breaks nobody', () => {
    expect(verdictOf(find('result-field-added', on('processCapture')))).toEqual({
      clients: false,
      servers: false,
      bump: 'minor',
    });
  });
  it('a type change breaks both sides', () => {
    expect(verdictOf(find('shared-type-changed', at('#/components/schemas/BatchUUID/type')))).toEqual({
      clients: true,
      servers: true,
      bump: 'major',
    });
  });
  it('a removed method of a shared path breaks clients, once, by name', () => {
    expect(verdictOf(find('method-removed', on('processVoid')))).toEqual({
      clients: true,
      servers: false,
      bump: 'major',
    });
    expect(report.changes.filter((c) => c.pointer?.includes('/oneOf/'))).toEqual([]);
  });
  it('a method answering another result (x-methods) breaks both', () => {
    expect(verdictOf(find('result-schema-changed', on('refundCard')))).toEqual({
      clients: true,
      servers: true,
      bump: 'major',
    });
  });
  it('a removed operation breaks clients', () => {
    expect(verdictOf(find('operation-removed', on('createAgreement')))).toEqual({
      clients: true,
      servers: false,
      bump: 'major',
    });
  });
  it('credentials: a header no longer required is for servers; body credentials added break both', () => {
    expect(verdictOf(find('credential-header-removed', on('createPayId')))).toEqual({
      clients: false,
      servers: true,
      bump: 'minor',
    });
    expect(verdictOf(find('credentials-added', on('queryCard')))).toEqual({
      clients: true,
      servers: true,
      bump: 'major',
    });
    expect(verdictOf(find('credential-header-renamed'))).toEqual({ clients: true, servers: true, bump: 'major' });
  });
  it('a changed hash recipe breaks every operation signed by it', () => {
    const c = find('hash-recipe-changed', on('processCapture'));
    expect(verdictOf(c)).toEqual({ clients: true, servers: true, bump: 'major' });
    expect(c.pointer).toBe('#/x-hash-recipes/transaction');
    expect(c.operations.length).toBeGreaterThan(5);
  });
  it('another form a recipe also accepts is for servers to accept, and breaks no client', () => {
    const c = find('hash-recipe-alternatives-changed', at(`#/x-hash-recipes/${alternative}`));
    expect(verdictOf(c)).toEqual({ clients: false, servers: true, bump: 'minor' });
    expect(c.message).toContain('legacy added');
  });
  it('a component nothing uses yet is no change on the wire', () => {
    expect(verdictOf(find('documentation', at('#/components/schemas/NotUsedYet')))).toEqual({
      clients: false,
      servers: false,
      bump: 'patch',
    });
  });
  it('prose is a patch', () => {
    expect(verdictOf(find('documentation', at('#/components/schemas/ProcessAuthRequest/description')))).toEqual({
      clients: false,
      servers: false,
      bump: 'patch',
    });
  });
  it('the whole needs a major version, and 0.1.0 -> 0.1.1 fails the check', () => {
    expect(report.bump).toBe('major');
    expect(report.versionOk).toBe(false);
    expect(report.needed).toBe('minor');
  });
  it('an unchanged spec has no changes', async () => {
    const same = await diffDocs(
      { label: 'a', doc: base, version: '0.1.0' },
      { label: 'b', doc: structuredClone(base), version: '0.1.0' },
    );
    expect(same.changes).toEqual([]);
  });
});

describe('version steps as npm caret ranges read them', () => {
  it('under 1.0.0 the minor part is the major one', () => {
    expect(versionStep('0.1.0', '0.2.0')).toBe('major');
    expect(versionStep('0.1.0', '0.1.1')).toBe('patch');
    expect(versionStep('1.2.3', '1.3.0')).toBe('minor');
    expect(versionStep('1.2.3', '2.0.0')).toBe('major');
    expect(versionStep('1.2.3', '1.2.3')).toBe('none');
    expect(npmVersionArgument('0.1.0', 'major')).toBe('minor');
    expect(npmVersionArgument('1.4.0', 'major')).toBe('major');
  });
});

describe('the form/XML mode (x-wire-formats) against a spec without it', () => {
  it('its request type asks servers to change; its answer type, given only to form requests, breaks no client', async () => {
    const { doc } = await workingTree();
    const formPaths = doc['x-wire-formats'].form!.paths!;
    const before = structuredClone(canonicalOnly(doc)) as DocNode;
    delete before['x-wire-formats'];
    const after: DocNode = structuredClone(doc);
    // A control: an XML answer on a path without the mode would reach the clients of that path.
    after.paths['/npp/payid'].post.responses['200'].content['application/xml'] = { schema: { type: 'string' } };
    const diff = await diffDocs(
      { label: 'before', doc: before as Doc, version: '0.2.0' },
      { label: 'after', doc: after as Doc, version: '0.2.0' },
    );
    const byKind = (kind: string) => diff.changes.filter((c) => c.kind === kind);
    // Judged per method (per-method.ts): each method of the mode's five paths gains the form request
    // and the XML answer.
    const methods = contractOperations(doc).filter((op) => op.method && formPaths.includes(op.path)).length;
    expect(methods).toBeGreaterThan(30);
    expect(byKind('request-media-type-added').map(verdictOf)).toEqual(
      Array(methods).fill({ clients: false, servers: true, bump: 'minor' }),
    );
    expect(byKind('documentation').filter((c) => /form-mode-answer-added/.test(c.message))).toHaveLength(methods);
    const control = diff.changes.filter((c) => c.pointer?.includes('npp~1payid'));
    expect(control.map(verdictOf)).toEqual([{ clients: true, servers: false, bump: 'major' }]);
  });
});

describe('the refusal catalogue (spec/refusals.yaml, beside the bundled document)', () => {
  it('each refusal by its code: added, removed, moved, its responseCode, status and words, each with its verdict and tag', async () => {
    const now = await workingTree();
    const entries = now.refusals!;
    expect(entries.length).toBeGreaterThan(100);
    const gateway = entries.filter((e) => e.catalogue === 'refusals');
    const [first, second, third, fourth] = gateway;
    const [sandboxOnly, sandboxOther] = entries.filter((e) => e.catalogue === 'sandboxRefusals');
    const revised = structuredClone(entries).filter((e) => e.code !== second!.code); // removed
    // added
    revised.push({
      catalogue: 'refusals',
      madeBy: 'servers',
      code: 'PGW_ERR_TEST_NEW',
      responseCode: -2,
      message: 'New',
    });
    revised.push({
      catalogue: 'sandboxRefusals',
      madeBy: 'sandbox',
      code: 'PGW_ERR_TEST_SANDBOX',
      responseCode: -2,
      message: 'New',
    });
    const changed = (code: string) => revised.find((e) => e.code === code)!;
    changed(first!.code).responseCode = -9; // responseCode
    changed(third!.code).status = 418; // status
    changed(fourth!.code).message = 'Reworded'; // words
    Object.assign(changed(sandboxOnly!.code), { catalogue: 'refusals', madeBy: 'servers' }); // moved into the servers'
    changed(sandboxOther!.code).responseCode = -9; // a sandbox refusal's responseCode
    const diff = await diffDocs(
      { label: 'a', doc: now.doc, version: '0.3.0', refusals: entries },
      { label: 'b', doc: now.doc, version: '0.3.0', refusals: revised },
    );
    const byKind = <T extends { kind: string; subject?: string | undefined }>(list: T[]) =>
      list.sort((a, b) => `${a.kind} ${a.subject}`.localeCompare(`${b.kind} ${b.subject}`));
    expect(byKind(diff.changes.map((c) => ({ kind: c.kind, subject: c.subject, ...verdictOf(c) })))).toEqual(
      byKind([
        { kind: 'refusal-added', subject: 'PGW_ERR_TEST_NEW', clients: false, servers: true, bump: 'minor' },
        // The sandbox's own refusals ask nothing of a gateway's server.
        { kind: 'refusal-added', subject: 'PGW_ERR_TEST_SANDBOX', clients: false, servers: false, bump: 'minor' },
        { kind: 'refusal-catalogue-changed', subject: sandboxOnly!.code, clients: false, servers: true, bump: 'minor' },
        { kind: 'refusal-message-changed', subject: fourth!.code, clients: false, servers: false, bump: 'patch' },
        { kind: 'refusal-removed', subject: second!.code, clients: false, servers: false, bump: 'minor' },
        { kind: 'refusal-response-code-changed', subject: first!.code, clients: true, servers: true, bump: 'major' },
        // Clients read it; no gateway's server makes it.
        {
          kind: 'refusal-response-code-changed',
          subject: sandboxOther!.code,
          clients: true,
          servers: false,
          bump: 'major',
        },
        { kind: 'refusal-status-changed', subject: third!.code, clients: true, servers: true, bump: 'major' },
      ]),
    );
    // The changelog names each by its code.
    expect(changeGroups(diff.changes).map((g) => g.tag)).toContain('minor: refusal-added PGW_ERR_TEST_NEW');
    expect(diff.bump).toBe('major');
  });

  it("who makes a refusal is its catalogue's madeBy, not its name; a catalogue written before the field is read by its name", async () => {
    const now = await workingTree();
    expect(new Set(now.refusals!.map((e) => `${e.catalogue} ${e.madeBy}`))).toEqual(
      new Set(['refusals servers', 'validationRefusals servers', 'sandboxRefusals sandbox', 'controlRefusals sandbox']),
    );
    const added = async (base: RefusalEntry[], entries: RefusalEntry[]) =>
      Object.fromEntries(
        (
          await diffDocs({ label: 'a', doc: now.doc, refusals: base }, { ...now, refusals: [...base, ...entries] })
        ).changes.map((c) => [c.subject, verdictOf(c).servers]),
      );
    const entry = (code: string, catalogue: string, madeBy?: RefusalEntry['madeBy']): RefusalEntry => ({
      catalogue,
      ...(madeBy && { madeBy }),
      code,
      responseCode: -2,
      message: 'New',
    });
    expect(
      await added(now.refusals!, [
        entry('PGW_ERR_TEST_PARTNER', 'partnerRefusals', 'servers'),
        entry('PGW_ERR_TEST_NAMED', 'refusals', 'sandbox'),
      ]),
    ).toEqual({ PGW_ERR_TEST_PARTNER: true, PGW_ERR_TEST_NAMED: false });
    // A catalogue's madeBy changed, its entries staying: now every server's asks servers to make them.
    const [control] = now.refusals!.filter((e) => e.catalogue === 'controlRefusals');
    const madeByServers = now.refusals!.map((e) => (e === control ? { ...e, madeBy: 'servers' as const } : e));
    const changes = async (base: RefusalEntry[], revision: RefusalEntry[]) =>
      (await diffDocs({ label: 'a', doc: now.doc, refusals: base }, { ...now, refusals: revision })).changes.map(
        (c) => ({ kind: c.kind, subject: c.subject, ...verdictOf(c) }),
      );
    expect(await changes(now.refusals!, madeByServers)).toEqual([
      { kind: 'refusal-made-by-changed', subject: control!.code, clients: false, servers: true, bump: 'minor' },
    ]);
    expect(await changes(madeByServers, now.refusals!)).toEqual([
      { kind: 'refusal-made-by-changed', subject: control!.code, clients: false, servers: false, bump: 'minor' },
    ]);
    // A spec from before the field (b03d7d9 up to the commit that added it): the stubs' catalogue and
    // the schema's were every server's.
    const before = now.refusals!.map(({ madeBy: _, ...e }) => e);
    expect(
      await added(before, [
        entry('PGW_ERR_TEST_STUBS', 'refusals'),
        entry('PGW_ERR_TEST_SCHEMA', 'validationRefusals'),
        entry('PGW_ERR_TEST_SANDBOX', 'sandboxRefusals'),
      ]),
    ).toEqual({ PGW_ERR_TEST_STUBS: true, PGW_ERR_TEST_SCHEMA: true, PGW_ERR_TEST_SANDBOX: false });
  });

  it('a catalogue of the working tree must say who makes it; an earlier version read by npm run diff need not', async () => {
    const now = await workingTree();
    const dir = await mkdtemp(path.join(os.tmpdir(), 'pgw-made-by-'));
    try {
      await mkdir(path.join(dir, 'spec'));
      const file = await readFile(path.join(ROOT, 'spec/refusals.yaml'), 'utf8');
      await writeFile(path.join(dir, 'spec/refusals.yaml'), file.replace(/^ {2}madeBy: sandbox\n/m, ''));
      expect(() => refusalEntries(now.doc, dir)).toThrow(
        'spec/refusals.yaml: sandboxRefusals.madeBy must be one of servers, sandbox',
      );
      const past = refusalEntries(now.doc, dir, true)!;
      expect(past.filter((e) => e.madeBy === undefined).map((e) => e.catalogue)).toEqual(
        now.refusals!.filter((e) => e.catalogue === 'sandboxRefusals').map(() => 'sandboxRefusals'),
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a version without a catalogue against one with it is the catalogue added; one not read is not compared', async () => {
    const now = await workingTree();
    const kinds = async (refusals: Refusals) =>
      (await diffDocs({ label: 'a', doc: now.doc, refusals }, now)).changes.map((c) => `${c.bump}: ${c.kind}`);
    expect(await kinds(null)).toEqual(['minor: refusal-catalogue-added']);
    expect(await kinds(undefined)).toEqual([]);
    // What npm version keeps is never "had none" for a catalogue nobody read.
    await expect(keepRelease('9.9.9', { ...now, refusals: undefined }, os.tmpdir())).rejects.toThrow(/not read/);
  });

  it('reads each side where it keeps its catalogue: a release snapshot, a packed package', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'pgw-release-'));
    try {
      // What `npm version` keeps of a release is read back as it was.
      const now = await workingTree();
      const [document, catalogue] = await keepRelease('9.9.9', now, dir);
      expect(path.basename(catalogue!)).toBe('refusals-9.9.9.json');
      const kept = await load(document!);
      expect(kept.version).toBe('9.9.9');
      expect(kept.refusals).toEqual(now.refusals);
      // A packed package reads its own spec/refusals.yaml; one without it had none.
      const pkg = path.join(dir, 'package');
      await mkdir(path.join(pkg, 'generated'), { recursive: true });
      await mkdir(path.join(pkg, 'spec'));
      await writeFile(path.join(pkg, 'generated/openapi.json'), JSON.stringify(now.doc));
      await writeFile(path.join(pkg, 'package.json'), JSON.stringify({ name: 'p', version: '9.9.9' }));
      await writeFile(path.join(pkg, 'spec/refusals.yaml'), await readFile(path.join(ROOT, 'spec/refusals.yaml')));
      execFileSync('tar', ['-czf', 'with.tgz', 'package'], { cwd: dir });
      await rm(path.join(pkg, 'spec'), { recursive: true });
      execFileSync('tar', ['-czf', 'without.tgz', 'package'], { cwd: dir });
      expect((await load(path.join(dir, 'with.tgz'))).refusals).toEqual(now.refusals);
      expect((await load(path.join(dir, 'without.tgz'))).refusals).toBeNull();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    // A hand-written root named by a relative path is bundled with its own catalogue.
    const root = await load(path.relative(process.cwd(), path.join(ROOT, 'spec/openapi.yaml')));
    expect(root.doc).toEqual((await workingTree()).doc);
    expect(root.refusals).toEqual((await workingTree()).refusals);
    // 0.2.0 predates the catalogue, and its snapshot says so (releases/refusals-0.2.0.json).
    const released = await load(path.relative(process.cwd(), releaseSnapshot('0.2.0')));
    expect(released.refusals).toBeNull();
  });

  it.skipIf(!hasCommit(CATALOGUE_ADDED))("reads a git ref's catalogue from that ref's own spec/", async () => {
    // The commit that wrote the catalogue had fewer refusals than the working tree: each code it
    // reads is one that commit's file writes (an entry's code, or a family's codes).
    const written = YAML.parse(
      execFileSync('git', ['show', `${CATALOGUE_ADDED}:spec/refusals.yaml`], { cwd: ROOT }).toString(),
      { merge: true },
    );
    const codesIn = (node: unknown): string[] =>
      !node || typeof node !== 'object'
        ? []
        : Object.entries(node).flatMap(([key, value]) =>
            key === 'code' && typeof value === 'string'
              ? [value]
              : key === 'codes'
                ? Object.values(value as Record<string, string>)
                : codesIn(value),
          );
    const [atCommit, now] = await Promise.all([load(CATALOGUE_ADDED), workingTree()]);
    const codes = atCommit.refusals!.map((e) => e.code).sort();
    expect(codes).toEqual([...new Set(codesIn(written))].sort());
    // Written before madeBy: read all the same, each catalogue by its name (the test above).
    expect(atCommit.refusals!.filter((e) => e.madeBy !== undefined)).toEqual([]);
    expect(codes.length).toBeLessThan(now.refusals!.length);
  });
});
