// Adding a wire format is one module and the spec: on a copy of the package, a small test format
// (test/fixtures/protocols/lines.ts.fixture: one name=value line per field, never shipped) becomes
// runtime/protocols/lines.ts, and x-wire-formats gains `lines` on /post; nothing else is touched.
// After the copy's own `npm run generate`, the format is in the bundled document, the copy's lint
// holds /post's schemas to its declared limits, the stubs serve it (requests read in it, answers and
// refusals written in it), every /post operation's examples round-trip through it, and no other file
// names it.
import { execFile } from 'node:child_process';
import { cp, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../support/contract.ts';
import { changedFiles, copyPackage, typeCheckCopy } from '../support/package-copy.ts';

const MODULE = path.join(ROOT, 'test/fixtures/protocols/lines.ts.fixture');
const DECLARATION = `  lines:
    request: application/x-lines
    answer: application/x-lines
    paths: [/post]
`;
const run = (copy: string, ...args: string[]) =>
  promisify(execFile)(process.execPath, args, { cwd: copy, maxBuffer: 32 << 20 }).then(
    () => '',
    (failure: { stdout: string; stderr: string }) => `${failure.stdout}${failure.stderr}`,
  );

describe('a third wire format is one module and the spec', () => {
  let copy: string;
  // tsc over the copy, started as soon as the copy is generated: it runs beside the other tests
  // instead of after them, and the last test waits for its output.
  let tscOutput: Promise<string>;
  const inCopy = <T>(file: string): Promise<T> => import(path.join(copy, file));

  beforeAll(async () => {
    copy = await copyPackage('pgw-third-format-');
    // The change: the module, and its declaration beside the others in x-wire-formats.
    await cp(MODULE, path.join(copy, 'runtime/protocols/lines.ts'));
    const spec = await readFile(path.join(copy, 'spec/openapi.yaml'), 'utf8');
    expect(spec.split('\npaths:\n')).toHaveLength(2);
    await writeFile(path.join(copy, 'spec/openapi.yaml'), spec.replace('\npaths:\n', `\n${DECLARATION}paths:\n`));
    expect(await run(copy, 'scripts/generate.ts')).toBe('');
    tscOutput = typeCheckCopy(copy, 'third-format');
  }, 180_000);
  afterAll(async () => {
    await tscOutput; // never rejects: the copy is removed once tsc is done with it
    if (copy) await rm(copy, { recursive: true, force: true });
  }, 180_000);

  it('touches runtime/protocols/lines.ts and spec/openapi.yaml, nothing else', async () => {
    expect(await changedFiles(copy)).toEqual(['runtime/protocols/lines.ts', 'spec/openapi.yaml']);
  });

  it('is in the bundled document beside the others, and its limits hold over /post (the copy lints clean)', async () => {
    const doc = JSON.parse(await readFile(path.join(copy, 'generated/openapi.json'), 'utf8'));
    const post = doc.paths['/post'].post;
    expect(Object.keys(post.requestBody.content)).toEqual([
      'application/json',
      'application/x-www-form-urlencoded',
      'application/x-lines',
    ]);
    // Its answer example is a value its schema describes, which the module writes as lines.
    const { protocols } = await inCopy<typeof import('../../generated/protocols.ts')>('generated/protocols.ts');
    const { deref } = await inCopy<typeof import('../../runtime/document.ts')>('runtime/document.ts');
    const example = deref(doc, post.responses['200'].content['application/x-lines'].examples.processCardApproved);
    expect(protocols.byId('lines')!.writeAnswer(example.value)).toMatch(/^responseCode=0\nresponseMessage=/);
    const document = await inCopy<typeof import('../contract/document-checks.ts')>('test/contract/document-checks.ts');
    expect(await document.lintProblems()).toEqual([]);
  });

  it('is served by the stubs: a request in it is read, its answer and its refusals written in it', async () => {
    const stubs = await inCopy<typeof import('../../server-stubs/index.ts')>('server-stubs/index.ts');
    const contract = await inCopy<typeof import('../../contract/index.ts')>('contract/index.ts');
    const fixtures = await inCopy<typeof import('../fixtures/example-handlers.ts')>(
      'test/fixtures/example-handlers.ts',
    );
    const lines = stubs.protocols.byId('lines')!;
    const gateway = stubs.createGateway({
      handlers: fixtures.echoHandlers(),
      accounts: fixtures.accounts,
      logger: false,
    });
    const op = contract.operation('processCard');
    const example = contract.requestExamples(op)[0]!.value;
    const request = contract.buildRequest(op, { body: example, signBody: true, wire: 'lines' });
    expect(request.headers['content-type']).toBe('application/x-lines');
    expect(String(request.body)).toMatch(/^method=processCard\n/);
    const answer = await gateway.handle(request);
    expect(answer.headers['content-type']).toBe('application/x-lines');
    expect(lines.readAnswer(String(answer.body), op.shapes.result)).toMatchObject({ ok: { responseCode: '0' } });
    const { transactionAmount: _gone, ...short } = example;
    const refused = await gateway.handle(contract.buildRequest(op, { body: short, signBody: true, wire: 'lines' }));
    expect(refused.headers['content-type']).toBe('application/x-lines');
    expect(String(refused.body)).toBe("responseCode=-3\nresponseMessage=Field%20'transactionAmount'%20is%20required");
  });

  it("round-trips every /post operation's examples through it, and no other file names it", async () => {
    const compliance = await inCopy<typeof import('../protocols/compliance-checks.ts')>(
      'test/protocols/compliance-checks.ts',
    );
    const cases = compliance.complianceCases().filter((c) => c.protocol.id === 'lines');
    expect(cases.length).toBeGreaterThan(20);
    expect(new Set(cases.map((c) => c.op.path))).toEqual(new Set(['/post']));
    for (const c of cases) expect(await compliance.complianceProblems(c)).toEqual([]);
    const naming = await inCopy<typeof import('./wire-format-checks.ts')>('test/architecture/wire-format-checks.ts');
    expect(naming.wireFormatMarks().map((m) => m.text)).toContain('application/x-lines');
    expect(naming.namingProblems()).toEqual([]);
  });

  it('type-checks as a Protocol in the copy', async () => {
    expect(await tscOutput).toBe('');
  }, 180_000);
});
