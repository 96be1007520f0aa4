// The second step of `npm run build` (after tsc): the server entry (package.json's "./server") as one
// ES module, dist/server.js, bundled by esbuild from tsc's own output (dist/server-stubs/index.js and
// the ~37 files of dist/ it imports), so that the bundle runs the very code tsc emitted.
//
// Why: a server's cold start is launch → first answer, and Node loads each ES module on its own
// (resolve, read, compile, link). Loading the entry's files one by one was 46 % of the start's CPU
// (bench/cold-profile.ts). `npm run bench` prints the cold start beside a bare node:http server's.
//
// What stays outside: every package (`packages: 'external'`), so a user's install shares them, and
// the package's own self-references (`payment-gateway-contract/validators/...`, `/openapi.json`),
// which the code reaches at run time through createRequire(import.meta.url): from dist/server.js they
// resolve as they do from dist/server-stubs/, the package's scope being the same. dist/server-stubs/
// stays as tsc wrote it (the sandbox, the mock and the contract suite import it relatively).
//
//   node scripts/build-server-bundle.ts     (after tsc -p tsconfig.build.json)
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** tsc's output of server-stubs/index.ts, and the bundle package.json's exports["./server"] names. */
export const SERVER_BUNDLE = { entry: 'dist/server-stubs/index.js', out: 'dist/server.js' } as const;

/** Writes the bundle; returns the files it holds (relative to the checkout). */
export async function buildServerBundle(root = ROOT): Promise<string[]> {
  const result = await build({
    absWorkingDir: root,
    entryPoints: [SERVER_BUNDLE.entry],
    outfile: SERVER_BUNDLE.out,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node22.13',
    packages: 'external',
    // Readable as tsc wrote it (each file's code under a comment naming it): a stack trace still says where.
    minify: false,
    metafile: true,
    logLevel: 'warning',
    legalComments: 'none',
    banner: {
      js: '// payment-gateway-contract/server: dist/server-stubs/index.js and what it imports, bundled into one module (scripts/build-server-bundle.ts).',
    },
  });
  const inputs = Object.keys(result.metafile.inputs);
  // Only tsc's JavaScript goes in: a JSON or text import (the spec, generated/openapi.json) would
  // inline that whole document into the module every server loads.
  const foreign = inputs.filter((f) => !/^dist\/.*\.js$/.test(f));
  if (foreign.length)
    throw new Error(`${SERVER_BUNDLE.out} would hold files other than dist/'s JavaScript: ${foreign.join(', ')}`);
  return inputs;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await buildServerBundle();
