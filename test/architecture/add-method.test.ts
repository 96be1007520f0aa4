// ARCHITECTURE.md's "how to add a method", done: a copy of the package gets one new method file
// (test/fixtures/methods/post/pingMerchant.yaml) and nothing else; `npm run generate`'s two steps run
// over the copy; the method then exists in the shared path, the bundled document, the generated types,
// the operation table, the validating stubs (routed, validated, handled), the client and the docs.
import { cp, mkdtemp, readFile, rm, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generate, writeMethodIndex } from '../../scripts/generate.ts';
import { ROOT } from '../support/contract.ts';

const FIXTURE = path.join(ROOT, 'test/fixtures/methods/post/pingMerchant.yaml');
// What generation reads (spec/, the lint plugin redocly.yaml loads, the control API, the quick start, package.json, redocly.yaml) and the
// folders that read generated/ at run time (server-stubs/, runtime/).
const COPIED = [
  'spec',
  'lint',
  'sandbox/control.openapi.yaml',
  'examples',
  'package.json',
  'redocly.yaml',
  'server-stubs',
  'runtime',
];

describe('adding a method is one file in spec/methods/', () => {
  let copy: string;
  const read = (file: string) => readFile(path.join(copy, file), 'utf8');

  beforeAll(async () => {
    copy = await mkdtemp(path.join(os.tmpdir(), 'pgw-add-method-'));
    for (const item of COPIED) await cp(path.join(ROOT, item), path.join(copy, item), { recursive: true });
    await symlink(path.join(ROOT, 'node_modules'), path.join(copy, 'node_modules'));
    await cp(FIXTURE, path.join(copy, 'spec/methods/post/pingMerchant.yaml'));
    expect(await writeMethodIndex(copy)).toEqual(['spec/paths/post.yaml']);
    await generate(path.join(copy, 'generated'), undefined, copy);
  }, 120_000);
  afterAll(() => rm(copy, { recursive: true, force: true }));

  it('the shared path lists it six times, each entry written from the one file', async () => {
    const post = await read('spec/paths/post.yaml');
    const lines = post.split('\n').filter((l) => l.includes('pingMerchant'));
    expect(lines).toEqual([
      "    pingMerchant: {$ref: '../methods/post/pingMerchant.yaml#/x-method'}",
      "            - $ref: '../methods/post/pingMerchant.yaml#/PingMerchantRequest'",
      "              pingMerchant: '../methods/post/pingMerchant.yaml#/PingMerchantRequest'",
      "          pingMerchant: {$ref: '../methods/post/pingMerchant.yaml#/examples/pingMerchant'}",
      "            pingMerchantApproved: {$ref: '../methods/post/pingMerchant.yaml#/examples/pingMerchantApproved'}",
      "            pingMerchantRefused: {$ref: '../methods/post/pingMerchant.yaml#/examples/pingMerchantRefused'}",
    ]);
    // Nothing else in the path file moved: the old text is the new one without those lines.
    const original = await readFile(path.join(ROOT, 'spec/paths/post.yaml'), 'utf8');
    expect(
      post
        .split('\n')
        .filter((l) => !l.includes('pingMerchant'))
        .join('\n'),
    ).toBe(original);
  });

  it('reaches the bundled document, the types, the operation table and the docs', async () => {
    const doc = JSON.parse(await read('generated/openapi.json'));
    expect(doc.paths['/post'].post['x-methods'].pingMerchant.operationId).toBe('pingMerchant');
    expect(doc.components.schemas.PingMerchantRequest.required).toContain('note');
    expect(await read('generated/types.ts')).toMatch(/PingMerchantRequest: \{/);
    expect(await read('generated/operations.ts')).toContain('"operationId": "pingMerchant"');
    expect(await read('generated/handlers.ts')).toMatch(/pingMerchant/);
    expect(await read('generated/docs/index.html')).toContain('Ping the merchant account');
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
          return { responseCode: '0', responseMessage: 'Operation successful' };
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
    });
    expect(calls).toEqual([
      { method: 'pingMerchant', merchantUUID: merchant.id, apiKey: merchant.apiKey, note: 'hello' },
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
