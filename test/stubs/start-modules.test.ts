// What a server's start loads: the package's server entry imported in a process of its own, every module
// it loads recorded. Two libraries a server does not need stay out, because each was a measured part of
// the cold start (npm run bench): @noble/hashes, the portable digests of clients and browsers (the
// server hashes with node:crypto; about 6 ms), and undici, which an ES import of node:http pulls in
// (runtime/node-http.ts; about 30 ms). A change that brings either back fails here, not only in a figure.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/contract.ts';

/** Imports a module of the checkout in a child and prints the URLs of the modules it loaded and Node's internal ones. */
const recorder = (module: string) => `
import { registerHooks } from 'node:module';
const loaded = [];
registerHooks({ load(url, context, next) { loaded.push(url); return next(url, context); } });
await import(${JSON.stringify(path.join(ROOT, module))});
process.stdout.write(JSON.stringify({ loaded, internal: process.moduleLoadList }));
`;

async function modulesOf(module: string): Promise<{ loaded: string[]; internal: string[] }> {
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', recorder(module)], {
    cwd: ROOT,
  });
  return JSON.parse(stdout) as { loaded: string[]; internal: string[] };
}

describe("a server's start", () => {
  it('loads neither @noble/hashes nor undici', async () => {
    const { loaded, internal } = await modulesOf('server-stubs/index.ts');
    // The recorder sees the server's own modules: it is no empty list that passes by saying nothing.
    expect(loaded.some((url) => url.endsWith('/server-stubs/core/gateway.ts'))).toBe(true);
    expect(loaded.filter((url) => url.includes('/@noble/'))).toEqual([]);
    expect(internal.filter((name) => name.includes('undici'))).toEqual([]);
  });

  // The sandbox compiles a few validators at run time (a control request's, a batch file's lines', a
  // triggered notification's overrides'), each on its first use: Ajv's compiler, ajv-formats and yaml
  // (the control API's document), some 160 modules, load then (sandbox/ajv.ts), not at every start.
  it("sandbox/index.ts loads neither Ajv's compiler, ajv-formats nor yaml", async () => {
    const { loaded } = await modulesOf('sandbox/index.ts');
    expect(loaded.some((url) => url.endsWith('/sandbox/control.ts'))).toBe(true);
    expect(loaded.some((url) => url.endsWith('/sandbox/batch-line.ts'))).toBe(true);
    expect(loaded.some((url) => url.endsWith('/sandbox/notification-overrides.ts'))).toBe(true);
    // Ajv's code generator (runtime/schema-keywords.ts's keywords are written with it) is three small modules.
    const libraries = loaded.filter(
      (url) => /\/node_modules\/(ajv|ajv-formats|yaml)\//.test(url) && !url.includes('/ajv/dist/compile/codegen/'),
    );
    expect(libraries).toEqual([]);
  });

  // Every program of the package starts many times a day (a test run starts the sandbox and the CLI
  // hundreds of times): the sandbox, the mock's front and its Prism client, the docs server take
  // node:http from runtime/node-http.ts too. An ES import of it cost 60 to 80 ms of CPU per start here.
  it.each(['sandbox/main.ts', 'sandbox/index.ts', 'mock/front.ts', 'mock/prism-client.ts', 'cli/docs.ts'])(
    '%s loads no undici',
    async (module) => {
      const { loaded, internal } = await modulesOf(module);
      expect(loaded.some((url) => url.endsWith(`/${module}`))).toBe(true);
      expect(internal.filter((name) => name.includes('undici'))).toEqual([]);
    },
  );
});
