// Adds the page's own scripts to the built docs page: the try-it console (console.ts) with the
// runtime's signer and @noble/hashes, and the view that shows the samples of the media type the reader
// picks (../sample-modes/view.ts), bundled for the browser by esbuild, and the data each reads
// (data.ts, ../sample-modes/data.ts), all inline so that the page still opens from disk and loads
// nothing from elsewhere.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import type { Doc, Operation } from '../../lib/contract.ts';
import type { TableEntry } from '../operations.ts';
import { DATA_ELEMENT_ID } from './console.ts';
import { tryItData } from './data.ts';
import { sampleModesData } from '../sample-modes/data.ts';
import { MODES_ELEMENT_ID } from '../sample-modes/view.ts';

const HERE = path.dirname(fileURLToPath(import.meta.url));

/** The console for the browser: one script, minified, the same bytes for the same sources. */
async function consoleScript(): Promise<string> {
  const result = await build({
    stdin: {
      contents:
        "import { start } from './console.ts';\nimport { start as modes } from '../sample-modes/view.ts';\nstart();\nmodes();\n",
      resolveDir: HERE,
      loader: 'ts',
    },
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

/** Data put inside a <script type="application/json"> element. */
const scriptJson = (value: unknown) => JSON.stringify(value).replace(/</g, '\\u003c');

/** The page with the console's and the sample view's data and script added before the end of its body. */
export async function withTryIt(html: string, doc: Doc, entries: TableEntry[], ops: Operation[]): Promise<string> {
  const data = scriptJson(tryItData(doc, entries));
  const modes = scriptJson(sampleModesData(doc, ops));
  const script = scriptSafe(await consoleScript());
  const at = html.lastIndexOf('</body>');
  if (at < 0) throw new Error('The docs page has no </body>: the try-it console cannot be added');
  const added = `<script type="application/json" id="${DATA_ELEMENT_ID}">${data}</script>\n<script type="application/json" id="${MODES_ELEMENT_ID}">${modes}</script>\n<script>${script}</script>\n`;
  return `${html.slice(0, at)}${added}${html.slice(at)}`;
}
