// Adds the try-it console to the built docs page: the console (console.ts) with the runtime's signer
// and @noble/hashes, bundled for the browser by esbuild, and the data it reads (data.ts), both inline
// so that the page still opens from disk and loads nothing from elsewhere.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import type { Doc } from '../../lib/contract.ts';
import type { TableEntry } from '../operations.ts';
import { DATA_ELEMENT_ID } from './console.ts';
import { tryItData } from './data.ts';

const HERE = path.dirname(fileURLToPath(import.meta.url));

/** The console for the browser: one script, minified, the same bytes for the same sources. */
async function consoleScript(): Promise<string> {
  const result = await build({
    stdin: { contents: "import { start } from './console.ts';\nstart();\n", resolveDir: HERE, loader: 'ts' },
    bundle: true,
    write: false,
    format: 'iife',
    platform: 'browser',
    target: 'es2022',
    minify: true,
    legalComments: 'none',
    logLevel: 'silent',
  });
  return result.outputFiles[0]!.text;
}

/** Text put inside a <script> element: nothing in it may close the element. */
const scriptSafe = (text: string) => text.replace(/<\/(script)/gi, '<\\/$1').replace(/<!--/g, '<\\!--');

/** The page with the console's data and script added before the end of its body. */
export async function withTryIt(html: string, doc: Doc, entries: TableEntry[]): Promise<string> {
  const data = JSON.stringify(tryItData(doc, entries)).replace(/</g, '\\u003c');
  const script = scriptSafe(await consoleScript());
  const at = html.lastIndexOf('</body>');
  if (at < 0) throw new Error('The docs page has no </body>: the try-it console cannot be added');
  const added = `<script type="application/json" id="${DATA_ELEMENT_ID}">${data}</script>\n<script>${script}</script>\n`;
  return `${html.slice(0, at)}${added}${html.slice(at)}`;
}
