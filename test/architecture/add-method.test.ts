// ARCHITECTURE.md's "how to add a method", done whole on a copy of the package: one new method file
// (test/fixtures/methods/post/pingMerchant.yaml: a request with a body hash, a result of its own,
// examples) and the changelog line the diff prints for it, nothing else. `npm run generate` runs over
// the copy; the method then exists in the bundled document, the generated types, the operation
// table, the docs page, and the validating stubs (routed, validated, handled) through the client;
// and the checks that a new method used to trip (generated/ fresh, the spec's lint, the version gate,
// the layers, the README's tables) pass on the copy with no other file touched.
import { cp, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { changelogSections, diffDocs, lastRelease, load, workingTree } from '../../scripts/diff/index.ts';
import { bundleSpec, generate } from '../../scripts/generate.ts';
import { withExactRequests } from '../../scripts/generators/tolerant-requests.ts';
import { ROOT } from '../support/contract.ts';

const FIXTURE = path.join(ROOT, 'test/fixtures/methods/post/pingMerchant.yaml');
// Not copied: what git, npm and runs leave (node_modules is linked). A node_modules folder at any
// depth (scripts/tools/ installs the tool matrix's own, 650 MB) is no part of the sources.
const SKIPPED = new Set(['node_modules', '.git', 'dist', 'data', 'test-results']);
const skipped = (file: string) =>
  SKIPPED.has(file.split(path.sep)[0]!) || file.split(path.sep).includes('node_modules');

/** Every file under dir but generated/, path → content. */
async function tree(dir: string): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  for (const e of await readdir(dir, { recursive: true, withFileTypes: true })) {
    const file = path.relative(dir, path.join(e.parentPath, e.name));
    if (!e.isFile() || skipped(file) || file.startsWith('generated/')) continue;
    if (file.startsWith('bench/results/')) continue;
    files.set(file, await readFile(path.join(dir, file), 'utf8'));
  }
  return files;
}

describe('adding a method is one file in spec/methods/ and its changelog line', () => {
  let copy: string;
  const read = (file: string) => readFile(path.join(copy, file), 'utf8');

  beforeAll(async () => {
    copy = await mkdtemp(path.join(os.tmpdir(), 'pgw-add-method-'));
    await cp(ROOT, copy, {
      recursive: true,
      filter: (source) => !skipped(path.relative(ROOT, source)),
    });
    await symlink(path.join(ROOT, 'node_modules'), path.join(copy, 'node_modules'));
    // The change: the method file, then the changelog line `npm run diff -- --format changelog` prints.
    await cp(FIXTURE, path.join(copy, 'spec/methods/post/pingMerchant.yaml'));
    const release = await lastRelease();
    const report = await diffDocs(await load(path.join(ROOT, release!)), {
      label: 'copy',
      doc: await bundleSpec(copy),
    });
    const changelog = await read('CHANGELOG.md');
    await writeFile(
      path.join(copy, 'CHANGELOG.md'),
      changelog.replace('## [Unreleased]\n', `## [Unreleased]\n\n${changelogSections(report)}`),
    );
    await generate(path.join(copy, 'generated'), undefined, copy);
  }, 120_000);
  afterAll(() => rm(copy, { recursive: true, force: true }));

  it('touches no other file by hand: spec/ gains the file, CHANGELOG.md the line, and nothing else changes', async () => {
    const before = await tree(ROOT);
    const after = await tree(copy);
    const changed = [...after.keys()].filter((file) => before.get(file) !== after.get(file)).sort();
    expect(changed).toEqual(['CHANGELOG.md', 'spec/methods/post/pingMerchant.yaml']);
    expect(await read('CHANGELOG.md')).toContain('`minor: method-added pingMerchant`');
    // The working tree itself is untouched by the copy's change.
    expect((await workingTree()).doc.paths['/post'].post['x-methods'].pingMerchant).toBeUndefined();
  });

  it('reaches the bundled document, the types, the operation table and the docs page', async () => {
    const doc = JSON.parse(await read('generated/openapi.json'));
    const post = doc.paths['/post'].post;
    expect(post['x-methods'].pingMerchant.operationId).toBe('pingMerchant');
    expect(post['x-methods'].pingMerchant.hashes).toEqual([{ name: 'hash', recipe: 'merchant' }]);
    expect(doc.components.schemas.PingMerchantRequest.required).toContain('note');
    expect(doc.components.schemas.PingMerchantResult.required).toContain('echo');
    // Composed into the shared path's lists: the request branch, its mapping, the result, the examples;
    // the published body holds the branch's tolerant copy (scripts/generators/tolerant-requests.ts).
    expect(post.requestBody.content['application/json'].schema.oneOf).toContainEqual({
      $ref: '#/components/schemas/PingMerchantRequestAsSent',
    });
    const body = withExactRequests(doc).paths['/post'].post.requestBody.content['application/json'];
    const branch = { $ref: '#/components/schemas/PingMerchantRequest' };
    expect(body.schema.oneOf).toContainEqual(branch);
    // /post carries no discriminator (processCard takes several forms): the descriptor names the branch.
    expect(post['x-methods'].pingMerchant.request).toBe('#/components/schemas/PingMerchantRequest');
    expect(Object.keys(body.examples)).toContain('pingMerchant');
    // Every other branch and example keeps its place (a method added since the release, sorting after
    // the fixture, may follow it: the walk of issue 30 found `.at(-1)` failing then).
    const now = withExactRequests((await workingTree()).doc).paths['/post'].post.requestBody.content[
      'application/json'
    ];
    expect(body.schema.oneOf.filter((b: { $ref: string }) => b.$ref !== branch.$ref)).toEqual(now.schema.oneOf);
    expect(Object.keys(body.examples).filter((name) => name !== 'pingMerchant')).toEqual(Object.keys(now.examples));
    const result = post.responses['200'].content['application/json'];
    expect(result.schema.anyOf).toContainEqual({ $ref: '#/components/schemas/PingMerchantResult' });
    expect(Object.keys(result.examples)).toEqual(
      // pingMerchant: its request example's pair (x-example-pairs).
      expect.arrayContaining(['pingMerchantApproved', 'pingMerchantRefused', 'pingMerchant']),
    );
    // The recipe table of the introduction names it among the merchant recipe's users.
    expect(doc.info.description).toMatch(/\| merchant \|.*pingMerchant/);
    expect(await read('generated/types.ts')).toMatch(/PingMerchantResult: \{/);
    expect(await read('generated/operations.ts')).toContain('"operationId": "pingMerchant"');
    expect(await read('generated/handlers.ts')).toMatch(/pingMerchant/);
    expect(await read('generated/docs/index.html')).toContain('Ping the merchant account');
  });

  it('passes the checks a new method used to trip: generated/ fresh, lint, the version gate, layers, README tables', async () => {
    // The copy's own check modules, whose paths are the copy's (each takes them from where it is): the
    // checks of test/contract/generated.test.ts, document.test.ts, test/versioning/gate.test.ts,
    // test/architecture/layers.test.ts and test/client/retry.test.ts's table, run here in-process.
    const checks = async <T>(file: string): Promise<T> => import(path.join(copy, file));
    const generated = await checks<typeof import('../contract/generated-checks.ts')>(
      'test/contract/generated-checks.ts',
    );
    const document = await checks<typeof import('../contract/document-checks.ts')>('test/contract/document-checks.ts');
    const gate = await checks<typeof import('../versioning/gate-checks.ts')>('test/versioning/gate-checks.ts');
    const layers = await checks<typeof import('./layer-checks.ts')>('test/architecture/layer-checks.ts');
    const retry = await checks<typeof import('../client/retry-checks.ts')>('test/client/retry-checks.ts');
    const [lint, generatedProblems] = await Promise.all([document.lintProblems(), generated.generatedProblems()]);
    const tables = await retry.retryTables();
    expect({
      generated: generatedProblems,
      lint,
      swagger: await document.swaggerProblems(),
      unversioned: await document.unversionedOperations(),
      unrecorded: await gate.unrecordedChanges(),
      changelogVersion: await gate.changelogVersionProblems(),
      layers: layers.layerProblems(),
      unmarkedMoneyMovers: retry.unmarkedMoneyMovers(),
      retryTable: tables.documented,
    }).toEqual({
      generated: [],
      lint: [],
      swagger: [],
      unversioned: [],
      unrecorded: [],
      changelogVersion: [],
      layers: [],
      unmarkedMoneyMovers: [],
      retryTable: tables.marked,
    });
  });

  it('is routed, validated and handled by the stubs, and called through the client', async () => {
    const stubs = await import(path.join(copy, 'server-stubs/index.ts'));
    const { createGatewayClient } = await import(path.join(copy, 'generated/client.ts'));
    const sandbox = doc(await read('generated/openapi.json')).info['x-sandbox'];
    const merchant = {
      kind: 'merchant',
      id: sandbox.merchantUUID,
      apiKey: sandbox.apiKey,
      passphrase: sandbox.passphrase,
    };
    const calls: unknown[] = [];
    const gateway = stubs.createGateway({
      handlers: {
        pingMerchant: (input: { body: unknown }) => {
          calls.push(input.body);
          return { responseCode: '0', responseMessage: 'Operation successful', echo: 'hello' };
        },
      },
      accounts: {
        find: (kind: string, id: string) => (kind === 'merchant' && id === merchant.id ? merchant : undefined),
        findByAccessToken: () => undefined,
      },
    });
    const fetchThroughGateway = async (request: Request) => {
      const url = new URL(request.url);
      const headers: Record<string, string> = {};
      request.headers.forEach((value, name) => {
        headers[name] = value;
      });
      const answer = await gateway.handle({
        verb: request.method,
        url: url.pathname + url.search,
        headers,
        body: await request.text(),
      });
      return new Response(answer.body, { status: answer.status, headers: answer.headers });
    };
    const client = createGatewayClient({
      baseUrl: 'http://gateway.test',
      merchantUUID: merchant.id,
      apiKey: merchant.apiKey,
      passphrase: merchant.passphrase,
      fetch: fetchThroughGateway,
    });

    expect(await client.pingMerchant({ note: 'hello' })).toEqual({
      responseCode: '0',
      responseMessage: 'Operation successful',
      echo: 'hello',
    });
    // The client signed it by the method's recipe, and the stubs checked the hash before the handler.
    expect(calls).toEqual([
      {
        method: 'pingMerchant',
        merchantUUID: merchant.id,
        apiKey: merchant.apiKey,
        note: 'hello',
        hash: '6ad00a0ad4b4cc71a3be7fd2d477d00b',
      },
    ]);
    // The validator knows the new branch: a body without its required field is refused, unhandled.
    expect(await client.pingMerchant({} as never)).toMatchObject({
      responseCode: '-3',
      responseMessage: expect.stringContaining("'note'"),
    });
    expect(calls).toHaveLength(1);
  });
});

const doc = (text: string): Record<string, any> => JSON.parse(text);
