// The installed `payment-gateway-contract/server` is one module (dist/server.js, esbuild's bundle of
// tsc's output; scripts/build-server-bundle.ts): a server's cold start pays Node's module loaders for
// one file of the package, not for the ~37 of dist/ it was built from (docs/BENCHMARKS.md, the cold
// start). Counted, not timed: the files of the package a process loads as it imports the entry, seen
// by a module.registerHooks load hook (it sees import and require alike). And the bundle serves: the
// bench's cold-start server (bench/servers/cold-start.js), run from the install, answers a signed
// request and refuses a bad one in the gateway's own terms.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildRequest, operation, requestExamples, sandbox } from '../../contract/index.ts';
import { ended } from '../support/children.ts';
import { ROOT } from '../support/contract.ts';
import { packed } from '../support/packed.ts';

let tmp: string;
let app: string;
let pkgDir: string;
const started: ChildProcess[] = [];

beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'pgw-server-bundle-'));
  app = path.join(tmp, 'app');
  pkgDir = path.join(app, 'node_modules', 'payment-gateway-contract');
  await mkdir(pkgDir, { recursive: true });
  // The run's one tarball (test/support/packed.ts), unpacked as npm would, its dependencies beside it.
  const { tarball } = await packed();
  execFileSync('tar', ['-xzf', tarball, '-C', pkgDir, '--strip-components=1']);
  const dependencies = Object.keys(JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8')).dependencies);
  for (const dep of dependencies) {
    await mkdir(path.dirname(path.join(app, 'node_modules', dep)), { recursive: true });
    await symlink(path.join(ROOT, 'node_modules', dep), path.join(app, 'node_modules', dep));
  }
  await writeFile(
    path.join(app, 'package.json'),
    JSON.stringify({ name: 'server-app', private: true, type: 'module' }),
  );
  await copyFile(path.join(ROOT, 'bench/servers/cold-start.js'), path.join(app, 'cold-start.js'));
  // Records every module the process loads (ESM and CommonJS), then imports the entry as a user does;
  // prints the list, and with `serve` (after the port) goes on to run the cold-start server.
  await writeFile(
    path.join(app, 'probe.js'),
    `import { registerHooks } from 'node:module';
const loaded = [];
registerHooks({ load(url, context, nextLoad) { loaded.push(url); return nextLoad(url, context); } });
await import('payment-gateway-contract/server');
console.log('loaded ' + JSON.stringify(loaded));
console.log('undici ' + JSON.stringify(process.moduleLoadList.filter((name) => name.includes('undici'))));
// cold-start.js listens on the port process.argv[2] names.
if (process.argv[3] === 'serve') {
  await import('./cold-start.js');
  console.log('served ' + JSON.stringify(loaded));
}
`,
  );
}, 300_000);

afterAll(async () => {
  await Promise.all(started.map((child) => ended(child)));
  await rm(tmp, { recursive: true, force: true });
});

/** The files of the installed package among the modules a process loaded, relative to it, in load order. */
function packageFiles(urls: string[]): string[] {
  return urls
    .filter((url) => url.startsWith('file:'))
    .map((url) => fileURLToPath(url))
    .filter((file) => file.startsWith(pkgDir + path.sep))
    .map((file) => path.relative(pkgDir, file).split(path.sep).join('/'));
}

/** Starts probe.js serving the cold-start server; resolves with what it loaded and its port once ready. */
function serve(
  env: Record<string, string> = {},
): Promise<{ loaded: string[]; undici: string[]; served: string[]; port: number }> {
  const child = spawn(process.execPath, ['probe.js', '0', 'serve'], {
    cwd: app,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, NODE_ENV: 'production', ...env },
  });
  started.push(child);
  let out = '';
  let err = '';
  child.stderr!.on('data', (c: Buffer) => (err += c));
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (c: Buffer) => {
      out += c;
      const list = /^loaded (.*)$/m.exec(out);
      const undici = /^undici (.*)$/m.exec(out);
      const ready = /^ready (\d+)$/m.exec(out);
      const served = /^served (.*)$/m.exec(out);
      if (list && undici && ready && served)
        resolve({
          loaded: JSON.parse(list[1]!),
          undici: JSON.parse(undici[1]!),
          served: JSON.parse(served[1]!),
          port: Number(ready[1]),
        });
    });
    child.on('exit', (code) => reject(new Error(`probe.js exited with ${code}: ${out}${err}`)));
  });
}

describe('the installed payment-gateway-contract/server', () => {
  let server: { loaded: string[]; undici: string[]; served: string[]; port: number };
  beforeAll(async () => {
    server = await serve();
  }, 60_000);

  it('is one module of the package: dist/server.js, and only the validators it requires beside it', () => {
    const files = packageFiles(server.loaded);
    // Before the bundle: dist/server-stubs/index.js and 36 more files of dist/ (runtime, server-stubs, generated).
    expect(files.filter((f) => f.startsWith('dist/'))).toEqual(['dist/server.js']);
    // The precompiled validators (CommonJS, generated/validators/): their two indexes and the helper
    // they share, each schema's own module required on first use, not at the import.
    expect(files.filter((f) => !f.startsWith('dist/')).sort()).toEqual([
      'generated/validators/lazy.cjs',
      'generated/validators/requests.cjs',
      'generated/validators/results.cjs',
    ]);
  });

  it('loads no undici: the bundle takes node:http by require, as the sources do (start-modules.test.ts)', () => {
    expect(server.undici).toEqual([]);
  });

  it('holds no document inline: no JSON or YAML of the package is loaded as a module', () => {
    expect(packageFiles(server.loaded).filter((f) => !/\.(js|cjs)$/.test(f))).toEqual([]);
  });

  it('carries the generated tables as JSON texts, not literals to compile (test/stubs/bundle-tables.test.ts)', async () => {
    const bundle = await readFile(path.join(pkgDir, 'dist/server.js'), 'utf8');
    for (const table of ['operations', 'hashRecipes', 'refusalCatalogue'])
      expect(bundle, table).toMatch(new RegExp(`^var ${table} = /\\* @__PURE__ \\*/ JSON\\.parse\\(`, 'm'));
  });

  const op = operation('getSurcharge');
  const send = async (change: Record<string, unknown> = {}) => {
    const r = buildRequest(op, { body: { ...(requestExamples(op)[0]!.value as object), ...change } });
    const response = await fetch(`http://127.0.0.1:${server.port}${r.url}`, {
      method: r.verb,
      headers: r.headers as Record<string, string>,
      body: (r.body as string | undefined) ?? null,
    });
    return { status: response.status, body: JSON.parse(await response.text()) as Record<string, unknown> };
  };

  // The bench launches the cold-start server with its account (PGW_BENCH_ACCOUNT, bench/harness.ts
  // coldStartEnv), as a deployed server has its accounts: the launch it times reads no 900 KB spec. Run
  // alone, it reads it.
  it('the bench cold start, given its account, reads no document of the package; alone, it reads the spec', async () => {
    expect(packageFiles(server.served)).toContain('generated/openapi.json');
    const { merchantUUID, apiKey, passphrase } = sandbox;
    const given = await serve({ PGW_BENCH_ACCOUNT: JSON.stringify({ merchantUUID, apiKey, passphrase }) });
    expect(packageFiles(given.served)).toContain('dist/server.js');
    expect(packageFiles(given.served).filter((f) => !/\.(js|cjs)$/.test(f))).toEqual([]);
    const r = buildRequest(op, { body: requestExamples(op)[0]!.value });
    const response = await fetch(`http://127.0.0.1:${given.port}${r.url}`, {
      method: r.verb,
      headers: r.headers as Record<string, string>,
      body: r.body as string,
    });
    expect(response.status).toBe(op.status);
    expect(JSON.parse(await response.text())).toMatchObject({ responseCode: '0' });
  });

  it('answers a signed request (the bench cold start, run from the install)', async () => {
    const { status, body } = await send();
    expect(status).toBe(op.status);
    expect(body).toMatchObject({ responseCode: '0', surchargeAmount: '0.00' });
  });

  it('refuses a bad field in the gateway terms: one refusal naming it and its rule, a negative responseCode', async () => {
    const { status, body } = await send({ transactionAmount: 'ten dollars' });
    // The gateway answers a refusal of the body's values with its HTTP status for them, never a 5xx.
    expect(status).toBeLessThan(500);
    expect(body.responseCode).toBe('-2');
    expect(String(body.responseMessage)).toMatch(/^Field 'transactionAmount' is invalid: must be /);
  });
});
