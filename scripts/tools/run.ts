// `npm run tools`: the compatibility matrix (docs/TOOLS.md). Every scripts/tools/<tool>.ts whose
// default export is a ToolRunner is run on generated/openapi.* against a fresh sandbox of its own
// (in-memory store, a port the system picks), and the matrix is printed. A tool that is not
// installed is reported as not run, with the reason; a runner that fails is reported as failed to
// run and makes the command fail, so that CI shows it. `--save` writes the dated result
// (scripts/tools/saved/matrix.json) and the blocks of docs/TOOLS.md rendered from it.
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import {
  MATRIX_FILE,
  MATRIX_HEADER,
  type MatrixRow,
  matrixRows,
  type SavedMatrix,
  TOOLS_PAGE,
  withMatrix,
} from './lib/matrix.ts';
import { startSandbox } from './lib/sandbox.ts';
import { secondsSince, ToolNotInstalled } from './lib/tool.ts';
import type { ToolContext, ToolRunner } from './report.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const TOOLS_DIR = import.meta.dirname;
const NOT_RUNNERS = new Set(['run.ts', 'report.ts']);

const USAGE = 'usage: npm run tools -- [--only TOOL]... [--save]';
const { values } = (() => {
  try {
    return parseArgs({
      options: {
        save: { type: 'boolean', default: false },
        only: { type: 'string', multiple: true },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
  } catch (error) {
    // A mistyped option is one line and exit 2, not node's stack trace.
    console.error(`tools: ${(error as Error).message}\n${USAGE}`);
    process.exit(2);
  }
})();
if (values.help) {
  console.log(`${USAGE}
  Runs each scripts/tools/<tool>.ts on generated/openapi.* against a fresh sandbox and prints the matrix.
  --only TOOL  run this tool only (its file name without .ts; repeatable)
  --save       write ${MATRIX_FILE} and the matrix blocks of ${TOOLS_PAGE}
  PGW_TOOLS_KEEP=1 keeps each tool's scratch folder (its configuration, collection, generated code, output)`);
  process.exit(0);
}

const files = (await readdir(TOOLS_DIR))
  .filter((f) => f.endsWith('.ts') && !NOT_RUNNERS.has(f))
  .filter((f) => !values.only?.length || values.only.includes(f.slice(0, -3)))
  .sort();
if (!files.length) {
  console.error(`tools: no runner matches ${values.only?.join(', ')}`);
  process.exit(2);
}

async function runOne(file: string): Promise<MatrixRow> {
  const name = file.slice(0, -3);
  const start = performance.now();
  const workDir = await mkdtemp(path.join(os.tmpdir(), `pgw-tool-${name}-`));
  let sandbox: Awaited<ReturnType<typeof startSandbox>> | undefined;
  try {
    const runner: unknown = (await import(path.join(TOOLS_DIR, file))).default;
    if (typeof runner !== 'function') throw new Error(`${file} has no default-exported ToolRunner`);
    sandbox = await startSandbox();
    const ctx: ToolContext = {
      documentJson: path.join(ROOT, 'generated/openapi.json'),
      documentYaml: path.join(ROOT, 'generated/openapi.yaml'),
      baseUrl: sandbox.baseUrl,
      workDir,
      toolsDir: TOOLS_DIR,
    };
    return await (runner as ToolRunner)(ctx);
  } catch (error) {
    const notInstalled = error instanceof ToolNotInstalled;
    const reason = error instanceof Error ? error.message : String(error);
    return { tool: name, notRun: reason, crashed: !notInstalled, seconds: secondsSince(start) };
  } finally {
    await sandbox?.stop();
    if (!process.env.PGW_TOOLS_KEEP) await rm(workDir, { recursive: true, force: true });
  }
}

const rows: MatrixRow[] = [];
for (const file of files) {
  process.stdout.write(`tools: ${file.slice(0, -3)} … `);
  const row = await runOne(file);
  console.log('notRun' in row ? `${row.crashed ? 'FAILED TO RUN' : 'not run'}: ${row.notRun}` : `${row.seconds} s`);
  rows.push(row);
}

// A plain table: the CI log is read as text.
const table = [MATRIX_HEADER, ...matrixRows(rows)];
const widths = MATRIX_HEADER.map((_, i) => Math.max(...table.map((r) => r[i]!.length)));
console.log('');
for (const r of table) console.log(r.map((c, i) => c.padEnd(widths[i]!)).join('  '));
for (const r of rows) {
  if ('notRun' in r) continue;
  for (const l of r.limits.filter((limit) => !limit.outsideDocument)) console.log(`${r.tool}: ${l.what} (${l.why})`);
}

if (values.save) {
  const saved: SavedMatrix = { date: new Date().toISOString(), node: process.versions.node, rows };
  await mkdir(path.dirname(path.join(ROOT, MATRIX_FILE)), { recursive: true });
  await writeFile(path.join(ROOT, MATRIX_FILE), `${JSON.stringify(saved, null, 2)}\n`);
  const page = path.join(ROOT, TOOLS_PAGE);
  await writeFile(page, withMatrix(await readFile(page, 'utf8'), saved));
  console.log(`\nsaved ${MATRIX_FILE} and the matrix of ${TOOLS_PAGE}`);
}

const crashed = rows.filter((r) => 'notRun' in r && r.crashed);
if (crashed.length) {
  console.error(`tools: ${crashed.length} runner(s) failed to run: ${crashed.map((r) => r.tool).join(', ')}`);
  process.exitCode = 1;
}
