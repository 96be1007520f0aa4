// ARCHITECTURE.md's "how to add a method", done whole on a copy of the package: one new method file
// (test/fixtures/methods/post/pingMerchant.yaml: a request with a body hash, a result of its own,
// examples) and the changelog line the diff prints for it, nothing else. `npm run generate` runs over
// the copy; the method then exists in the bundled document, the generated types, the operation
// table, the docs page, and the validating stubs (routed, validated, handled) through the client;
// and the checks that a new method used to trip (generated/ fresh, the spec's lint, the version gate,
// the layers, the README's tables) pass on the copy with no other file touched.
//
// Then a method whose answer holds a list (listRefunds.yaml), with its handler in the sandbox
// (listRefunds.handler, one entry of sandbox/handlers/card-payments.ts) and its changelog line: it
// reaches green with those three files, nothing else (the walk of issue 38 needed six on main: the
// XML writer and the suite's reader could not carry a list). The copy's sandbox answers it in both
// wire formats, the list as <refunds><refund>…</refund></refunds> in the form/XML mode, and its
// examples round-trip through both protocols (test/protocols/compliance-checks.ts).
import { cp, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { changelogSections, diffDocs, lastRelease, load, workingTree } from '../../scripts/diff/index.ts';
import { withExactSchemas } from '../../runtime/exact-requests.ts';
import { bundleSpec, generate } from '../../scripts/generate.ts';
import { withExactRequests } from '../../scripts/generators/tolerant-requests.ts';
import { ROOT } from '../support/contract.ts';
import { changedFiles, copyPackage, typeCheckCopy } from '../support/package-copy.ts';

const FIXTURE = path.join(ROOT, 'test/fixtures/methods/post/pingMerchant.yaml');
const LIST_FIXTURE = path.join(ROOT, 'test/fixtures/methods/post/listRefunds.yaml');
const LIST_HANDLER = path.join(ROOT, 'test/fixtures/methods/post/listRefunds.handler');
const HANDLERS = 'sandbox/handlers/card-payments.ts';
/**
 * A copy of the package (node_modules linked), with the method file added and the changelog line the
 * diff prints for it; then the copy's `npm run generate`. The spec is bundled once, for the diff and
 * for the generation (as scripts/generate.ts bundles it once for every file it writes): the bundle
 * reads spec/ alone, which the changelog line and a handler do not touch.
 */
async function copyWithMethod(
  prefix: string,
  fixture: string,
  name: string,
  change: (copy: string) => Promise<void> = async () => undefined,
): Promise<string> {
  const copy = await copyPackage(prefix);
  // The change: the method file, then the changelog line `npm run diff -- --format changelog` prints.
  await cp(fixture, path.join(copy, `spec/methods/post/${name}.yaml`));
  const release = await lastRelease();
  const bundled = await bundleSpec(copy);
  const report = await diffDocs(await load(path.join(ROOT, release!)), {
    label: 'copy',
    doc: structuredClone(bundled),
  });
  const changelog = await readFile(path.join(copy, 'CHANGELOG.md'), 'utf8');
  await writeFile(
    path.join(copy, 'CHANGELOG.md'),
    changelog.replace('## [Unreleased]\n', `## [Unreleased]\n\n${changelogSections(report)}`),
  );
  await change(copy);
  await generate(path.join(copy, 'generated'), undefined, copy, bundled);
  return copy;
}

/** The checks a new method used to trip, run on the copy by the copy's own check modules. */
async function checksOf(copy: string) {
  // The copy's own check modules, whose paths are the copy's (each takes them from where it is): the
  // checks of test/contract/generated.test.ts, document.test.ts, test/versioning/gate.test.ts,
  // test/architecture/layers.test.ts and test/client/retry.test.ts's table, run here in-process.
  const checks = async <T>(file: string): Promise<T> => import(path.join(copy, file));
  const generated = await checks<typeof import('../contract/generated-checks.ts')>('test/contract/generated-checks.ts');
  const document = await checks<typeof import('../contract/document-checks.ts')>('test/contract/document-checks.ts');
  const gate = await checks<typeof import('../versioning/gate-checks.ts')>('test/versioning/gate-checks.ts');
  const layers = await checks<typeof import('./layer-checks.ts')>('test/architecture/layer-checks.ts');
  const retry = await checks<typeof import('../client/retry-checks.ts')>('test/client/retry-checks.ts');
  const [lint, generatedProblems] = await Promise.all([document.lintProblems(), generated.generatedProblems()]);
  const tables = await retry.retryTables();
  return {
    actual: {
      generated: generatedProblems,
      lint,
      swagger: await document.swaggerProblems(),
      unversioned: await document.unversionedOperations(),
      unrecorded: await gate.unrecordedChanges(),
      changelogVersion: await gate.changelogVersionProblems(),
      layers: layers.layerProblems(),
      unmarkedMoneyMovers: retry.unmarkedMoneyMovers(),
      retryTable: tables.documented,
    },
    expected: {
      generated: [],
      lint: [],
      swagger: [],
      unversioned: [],
      unrecorded: [],
      changelogVersion: [],
      layers: [],
      unmarkedMoneyMovers: [],
      retryTable: tables.marked,
    },
  };
}

describe('adding a method is one file in spec/methods/ and its changelog line', () => {
  let copy: string;
  const read = (file: string) => readFile(path.join(copy, file), 'utf8');

  beforeAll(async () => {
    copy = await copyWithMethod('pgw-add-method-', FIXTURE, 'pingMerchant');
  }, 120_000);
  afterAll(() => rm(copy, { recursive: true, force: true }));

  it('touches no other file by hand: spec/ gains the file, CHANGELOG.md the line, and nothing else changes', async () => {
    expect(await changedFiles(copy)).toEqual(['CHANGELOG.md', 'spec/methods/post/pingMerchant.yaml']);
    expect(await read('CHANGELOG.md')).toContain('`minor: method-added pingMerchant`');
    // The working tree itself is untouched by the copy's change.
    expect((await workingTree()).doc.paths['/post'].post['x-methods'].pingMerchant).toBeUndefined();
  });

  it('reaches the bundled document, the types, the operation table and the docs page', async () => {
    // Read as the package reads it: the exact request schemas among the components (runtime/exact-requests.ts).
    const doc = withExactSchemas(JSON.parse(await read('generated/openapi.json')));
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
    const { actual, expected } = await checksOf(copy);
    expect(actual).toEqual(expected);
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

describe('adding a method whose answer holds a list is its file, its handler and its changelog line', () => {
  let copy: string;
  // tsc over the copy, started as soon as the copy is generated: it runs beside the checks below
  // instead of after them, and the test that needs it waits for its output.
  let tscOutput: Promise<string>;

  beforeAll(async () => {
    copy = await copyWithMethod('pgw-add-list-method-', LIST_FIXTURE, 'listRefunds', async (copy) => {
      // Its handler: one entry of the sandbox's card payments handlers.
      const handlers = await readFile(path.join(copy, HANDLERS), 'utf8');
      const end = '  } satisfies Partial<H>;\n';
      expect(handlers.split(end)).toHaveLength(2);
      await writeFile(
        path.join(copy, HANDLERS),
        handlers.replace(end, `\n${await readFile(LIST_HANDLER, 'utf8')}${end}`),
      );
    });
    tscOutput = typeCheckCopy(copy, 'add-list-method');
  }, 120_000);
  afterAll(async () => {
    await tscOutput; // never rejects: the copy is removed once tsc is done with it
    if (copy) await rm(copy, { recursive: true, force: true });
  }, 180_000);

  it('touches the method file, its handler and CHANGELOG.md, nothing else', async () => {
    expect(await changedFiles(copy)).toEqual(['CHANGELOG.md', HANDLERS, 'spec/methods/post/listRefunds.yaml']);
    expect(await readFile(path.join(copy, 'CHANGELOG.md'), 'utf8')).toContain('`minor: method-added listRefunds`');
  });

  it('passes the checks a new method used to trip, and the handler type-checks against its list result', async () => {
    const { actual, expected } = await checksOf(copy);
    expect(actual).toEqual(expected);
    expect(await tscOutput).toBe('');
  }, 180_000);

  it('round-trips its examples through both protocols (the compliance checks of the copy)', async () => {
    const compliance = (await import(
      path.join(copy, 'test/protocols/compliance-checks.ts')
    )) as typeof import('../protocols/compliance-checks.ts');
    const cases = compliance.complianceCases(['listRefunds']);
    expect(cases.map((c) => c.protocol.id)).toEqual(['json', 'form']);
    for (const c of cases) expect(await compliance.complianceProblems(c)).toEqual([]);
  });

  it('is answered by the sandbox in both wire formats, the list as nested elements in XML', async () => {
    const support = (await import(
      path.join(copy, 'test/hardening/support.ts')
    )) as typeof import('../hardening/support.ts');
    const { protocols } = (await import(
      path.join(copy, 'generated/protocols.ts')
    )) as typeof import('../../generated/protocols.ts');
    const sb = await support.hardeningSandbox();
    try {
      const paid = await support.send(sb, support.signed('processCard', support.purchase()));
      const transactionID = paid.json.transactionID as string;
      for (const amount of ['2.00', '3.50']) {
        const refund = { transactionID, refundAmount: amount, transactionAmount: amount, transactionCurrency: 'AUD' };
        const refunded = await support.send(
          sb,
          support.signed('refundCard', { method: 'refundCard', ...support.merchant, ...refund }),
        );
        expect(refunded.json.responseCode).toBe('0');
      }
      const body = { method: 'listRefunds', ...support.merchant, transactionID };
      // Both refunds are made within a second: their order is the store's, so they are compared as a set.
      const amounts = (refunds: { refundAmount: string }[]) => refunds.map((r) => r.refundAmount).sort();
      const json = await support.send(sb, support.signed('listRefunds', body));
      expect(json.json).toMatchObject({ responseCode: '0', transactionID });
      expect(amounts(json.json.refunds)).toEqual(['2.00', '3.50']);
      const form = await sb.gateway.handle(support.signed('listRefunds', body, { wire: 'form' }));
      expect(form.headers['content-type']).toBe('application/xml');
      const text = String(form.body);
      expect(text).toMatch(
        /<refunds>(<refund><refundID>[^<]+<\/refundID><refundAmount>(2\.00|3\.50)<\/refundAmount><\/refund>){2}<\/refunds>/,
      );
      const op = (await import(path.join(copy, 'contract/index.ts'))).operation('listRefunds');
      const read = protocols.byId('form')!.readAnswer(text, op.shapes.result);
      expect(read).toMatchObject({ ok: { responseCode: '0', transactionID } });
      expect(amounts((read as { ok: { refunds: { refundAmount: string }[] } }).ok.refunds)).toEqual(['2.00', '3.50']);
    } finally {
      await sb.close();
    }
  });
});

const doc = (text: string): Record<string, any> => JSON.parse(text);
