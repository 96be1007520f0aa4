// The package is publishable: `npm pack` ships the spec, the generated artifacts and the compiled
// runtime and nothing a consumer does not need, and a consumer can import every export from it.
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../support/contract.ts';

const npm = (args: string[], cwd = ROOT) => execFileSync('npm', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

describe('npm pack', () => {
  let tmp: string;
  let files: string[];
  let tarball: string;
  beforeAll(async () => {
    tmp = await mkdtemp(path.join(os.tmpdir(), 'pgw-pack-'));
    const [info] = JSON.parse(npm(['pack', '--json', '--pack-destination', tmp]));
    files = info.files.map((f: { path: string }) => f.path);
    tarball = path.join(tmp, info.filename);
  });
  afterAll(() => rm(tmp, { recursive: true, force: true }));

  it('ships the spec, the generated artifacts and the compiled runtime', () => {
    for (const f of ['spec/openapi.yaml', 'spec/hash-recipes.yaml', 'generated/openapi.json', 'generated/openapi.yaml', 'dist/generated/types.d.ts', 'dist/generated/methods.d.ts', 'dist/runtime/signing.js', 'dist/generated/hash-recipes.js', 'package.json']) {
      expect(files).toContain(f);
    }
  });

  it('ships nothing a consumer does not need', () => {
    const unwanted = files.filter((f) => /^(test|scripts|node_modules|\.ci)\/|^(vitest\.config|tsconfig|redocly)|\.test\.|^generated\/.*\.ts$/.test(f));
    expect(unwanted).toEqual([]);
  });

  it('every export resolves and runs from node_modules', async () => {
    const app = path.join(tmp, 'app');
    const pkgDir = path.join(app, 'node_modules', 'payment-gateway-contract');
    await mkdir(pkgDir, { recursive: true });
    execFileSync('tar', ['-xzf', tarball, '-C', pkgDir, '--strip-components=1']);
    await mkdir(path.join(app, 'node_modules', '@noble'), { recursive: true });
    await symlink(path.join(ROOT, 'node_modules/@noble/hashes'), path.join(app, 'node_modules/@noble/hashes'));
    const script = `
      import { computeHash } from 'payment-gateway-contract/signing';
      import { hashRecipes } from 'payment-gateway-contract/hash-recipes';
      import { createRequire } from 'node:module';
      const require = createRequire(import.meta.url);
      const spec = require('payment-gateway-contract/openapi.json');
      const ex = spec['x-hash-recipes'].transaction.example;
      console.log(JSON.stringify({ ok: computeHash(hashRecipes.transaction, ex.passphrase, ex.fields) === ex.hash, version: spec.info.version }));`;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: app, encoding: 'utf8' });
    expect(JSON.parse(out)).toEqual({ ok: true, version: '2.0' });
  });
});
