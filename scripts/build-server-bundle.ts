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
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import { build, type Plugin } from 'esbuild';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** tsc's output of server-stubs/index.ts, and the bundle package.json's exports["./server"] names. */
export const SERVER_BUNDLE = { entry: 'dist/server-stubs/index.js', out: 'dist/server.js' } as const;

/** A table's JSON from this many characters on is parsed at run time (JSON.parse), not compiled as a literal. */
const AS_JSON_FROM = 1024;

/**
 * A generated module that holds only data (it imports nothing, and each export is a value JSON
 * carries whole: JSON.parse(JSON.stringify(v)) is deep-equal to v), as module text where each large
 * table is a JSON text given to JSON.parse; undefined for any other module, which stays as it is.
 *
 * Why: V8 compiles a large object literal token by token (the operation table is 177 KB of literal
 * in the bundle), where it scans a string literal at once, and JSON.parse then builds the same
 * objects at about the cost of running the literal. Measured in CPU profiles of the import (10
 * launches each, medians): compiling dist/server.js took 13.5 ms, 10.6 ms with the tables as JSON.
 * `\/* @__PURE__ *\/` lets esbuild still drop a table nothing imports.
 */
export function dataModuleAsJson(source: string, exports: Record<string, unknown>): string | undefined {
  if (/^\s*import\b/m.test(source)) return undefined;
  const lines: string[] = [];
  // JSON.parse makes a copy of each object wherever it appears: a table whose parts share an object
  // (scenarios.ts writes a list once for the operations that share it), or two tables sharing one,
  // would no longer share it.
  const seen = new Set<object>();
  for (const [name, value] of Object.entries(exports)) {
    if (sharesAnObject(value, seen)) return undefined;
    let json: string | undefined;
    try {
      json = JSON.stringify(value);
    } catch {
      return undefined; // a BigInt, a cycle
    }
    if (json === undefined || !isDeepStrictEqual(JSON.parse(json), value)) return undefined;
    lines.push(
      `export const ${name} = ${
        json.length >= AS_JSON_FROM && typeof value === 'object'
          ? `/* @__PURE__ */ JSON.parse(${JSON.stringify(json)})`
          : json
      };`,
    );
  }
  return `${lines.join('\n')}\n`;
}

/** Whether an object or array is reached twice from `value` (shared, or a cycle). */
function sharesAnObject(value: unknown, seen = new Set<object>()): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (seen.has(value)) return true;
  seen.add(value);
  return Object.values(value).some((v) => sharesAnObject(v, seen));
}

/**
 * A generated module's text and its exports as that very text gives them: imported under a query
 * naming the text's digest, so that a build run twice in one process, the file changed between,
 * does not bundle the values Node's module cache kept from the first.
 */
export async function moduleAsItReads(file: string): Promise<{ source: string; exports: Record<string, unknown> }> {
  const source = await readFile(file, 'utf8');
  const digest = createHash('sha256').update(source).digest('hex');
  return { source, exports: await import(`${pathToFileURL(file).href}?text=${digest}`) };
}

/** dist/generated's data modules as JSON (dataModuleAsJson); the others as tsc wrote them. */
const generatedDataAsJson: Plugin = {
  name: 'generated-data-as-json',
  setup(b) {
    b.onLoad({ filter: /[\\/]dist[\\/]generated[\\/][^\\/]+\.js$/ }, async ({ path: file }) => {
      const { source, exports } = await moduleAsItReads(file);
      const contents = dataModuleAsJson(source, exports);
      return contents === undefined ? undefined : { contents, loader: 'js' };
    });
  },
};

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
    plugins: [generatedDataAsJson],
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

if (import.meta.main) await buildServerBundle();
