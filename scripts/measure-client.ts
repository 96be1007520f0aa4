// npm run size: the typed client as a browser bundle would carry it, minified and gzipped,
// openapi-fetch excluded (it is the client's own dependency, shared with any other openapi-fetch use).
import { gzipSync } from 'node:zlib';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export async function bundleSize(entry: string): Promise<{ minified: number; gzipped: number }> {
  const result = await build({
    entryPoints: [path.join(ROOT, entry)],
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    external: ['openapi-fetch'],
    write: false,
    logLevel: 'silent',
  });
  const code = result.outputFiles[0]!.contents;
  return { minified: code.byteLength, gzipped: gzipSync(code, { level: 9 }).byteLength };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const entry of ['generated/client.ts', 'runtime/settlement.ts', 'notifications/index.ts']) {
    const { minified, gzipped } = await bundleSize(entry);
    console.log(
      `${entry.padEnd(24)} ${(minified / 1024).toFixed(1)} kB minified, ${(gzipped / 1024).toFixed(1)} kB minified + gzip`,
    );
  }
}
