// The package is publishable: `npm pack` ships the spec, the generated artifacts and the compiled
// runtime and nothing a consumer does not need, and a consumer can import every export from it.
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inputsHash, STAMP } from '../../scripts/build.ts';
import { ROOT } from '../support/contract.ts';
import { packed } from '../support/packed.ts';

describe('npm pack', () => {
  let tmp: string;
  let files: string[];
  let tarball: string;
  beforeAll(async () => {
    tmp = await mkdtemp(path.join(os.tmpdir(), 'pgw-pack-'));
    ({ files, tarball } = await packed());
  }, 300_000);
  afterAll(() => rm(tmp, { recursive: true, force: true }));

  it('ships the spec, the generated artifacts and the compiled runtime', () => {
    for (const f of [
      'spec/openapi.yaml',
      'spec/hash-recipes.yaml',
      'generated/openapi.json',
      'generated/openapi.yaml',
      'generated/validators/requests.cjs',
      'generated/validators/results.cjs',
      // Each validator's own module, which the index requires on first use.
      ...['requests', 'results'].flatMap((kind) =>
        readdirSync(path.join(ROOT, 'generated/validators', kind)).map((f) => `generated/validators/${kind}/${f}`),
      ),
      'dist/generated/types.d.ts',
      'dist/generated/methods.d.ts',
      'dist/generated/client.js',
      'dist/runtime/signing.js',
      'dist/notifications/index.js',
      'dist/server-stubs/index.js',
      // The server entry bundled into one module (scripts/build-server-bundle.ts): package.json's "./server".
      'dist/server.js',
      'dist/generated/hash-recipes.js',
      'package.json',
    ]) {
      expect(files).toContain(f);
    }
  });

  it("packs a dist/ built from the sources as they are now (prepack's build skips only an unchanged one)", async () => {
    // scripts/build.ts stamps dist/ with the hash of what it read once a build has ended well; a build
    // it skipped kept the stamp of the one before. Either way the stamp's first line must name today's inputs.
    expect((await readFile(path.join(ROOT, STAMP), 'utf8')).split('\n')[0]).toBe(inputsHash(ROOT));
  });

  it('ships nothing a consumer does not need', () => {
    const unwanted = files.filter((f) =>
      /^(test|scripts|bench|examples|node_modules|\.ci)\/|^(vitest\.config|tsconfig|redocly)|\.test\.|^generated\/.*\.ts$|\.tsbuildinfo$|^dist\/build-inputs\.sha256$/.test(
        f,
      ),
    );
    expect(unwanted).toEqual([]);
  });

  it('every export resolves and runs from node_modules', async () => {
    const app = path.join(tmp, 'app');
    const pkgDir = path.join(app, 'node_modules', 'payment-gateway-contract');
    await mkdir(pkgDir, { recursive: true });
    execFileSync('tar', ['-xzf', tarball, '-C', pkgDir, '--strip-components=1']);
    // The package's dependencies, as npm would install them beside it.
    const dependencies = Object.keys(JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8')).dependencies);
    for (const dep of dependencies) {
      await mkdir(path.dirname(path.join(app, 'node_modules', dep)), { recursive: true });
      await symlink(path.join(ROOT, 'node_modules', dep), path.join(app, 'node_modules', dep));
    }
    const script = `
      import { computeHash } from 'payment-gateway-contract/signing';
      import { hashRecipes } from 'payment-gateway-contract/hash-recipes';
      import { createRequire } from 'node:module';
      const require = createRequire(import.meta.url);
      const spec = require('payment-gateway-contract/openapi.json');
      const ex = spec['x-hash-recipes'].transaction.example;
      const { createGatewayClient, isApproved } = await import('payment-gateway-contract/client');
      const { readSettlement } = await import('payment-gateway-contract/client/settlement');
      const { signTestNotification, verifyNotification } = await import('payment-gateway-contract/notifications');
      const note = signTestNotification({ event: 'batchNotify', batchUUID: 'b1', status: 'completed', transactions: [] }, { passphrase: 'p' });
      const { createGateway, createNodeServer, operations } = await import('payment-gateway-contract/server');
      const server = createNodeServer(createGateway({ handlers: {}, accounts: { find: () => undefined, findByAccessToken: () => undefined } }));
      console.log(JSON.stringify({
        ok: computeHash(hashRecipes.transaction, ex.passphrase, ex.fields) === ex.hash,
        version: spec.info.version,
        client: typeof createGatewayClient({ baseUrl: 'http://x', merchantUUID: 'm', apiKey: 'k', passphrase: 'p' }).processCapture,
        helpers: [typeof isApproved, typeof readSettlement],
        notification: verifyNotification(note.body, note.headers, { passphrase: 'p' }).notification.batchUUID,
        server: [typeof server.listen, operations.length > 50],
      }));`;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: app, encoding: 'utf8' });
    expect(JSON.parse(out)).toEqual({
      ok: true,
      version: '2.0',
      client: 'function',
      helpers: ['function', 'function'],
      notification: 'b1',
      server: ['function', true],
    });
  });
});
