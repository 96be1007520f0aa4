// The compatibility matrix as docs/TOOLS.md shows it: rendered from a saved run
// (scripts/tools/saved/matrix.json, written by `npm run tools -- --save`), never typed by hand, the
// way bench/figures.ts puts the benchmark's figures into docs/BENCHMARKS.md. Two blocks sit between
// markers in the page (the table, and each tool's details); `--save` rewrites both, and
// test/tools/matrix.test.ts fails when the page and the saved run disagree.
import { blockIn as markedBlockIn, withBlock as withMarkedBlock } from '../../marked-block.ts';
import type { ToolReport } from '../report.ts';

/** A tool the matrix could not run: not installed, or its runner failed (the reason says which). */
export interface NotRun {
  tool: string;
  notRun: string;
  /** True when the runner itself failed (a crash is a failure of the run; a missing tool is not). */
  crashed: boolean;
  seconds: number;
}

export type MatrixRow = ToolReport | NotRun;

export interface SavedMatrix {
  date: string;
  node: string;
  /** Each tool's row, in the order the runners were run (their file names, sorted). */
  rows: MatrixRow[];
}

export const MATRIX_FILE = 'scripts/tools/saved/matrix.json';
export const TOOLS_PAGE = 'docs/TOOLS.md';
const BLOCKS = { table: 'tools:matrix', details: 'tools:details' } as const;
type Block = keyof typeof BLOCKS;

export const wasRun = (row: MatrixRow): row is ToolReport => !('notRun' in row);

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
const checksOf = (r: ToolReport) =>
  r.checks ? `${r.checks.passed} passed, ${r.checks.failed} failed, ${r.checks.skipped} skipped` : '–';
const operationsOf = (r: ToolReport) =>
  r.operationsSucceeded ? `${r.operationsSucceeded.succeeded} of ${r.operationsSucceeded.total}` : '–';

/** The matrix's columns, as the terminal and the page both show them. */
export function matrixRows(rows: MatrixRow[]): string[][] {
  return rows.map((r) =>
    wasRun(r)
      ? [r.tool, r.version, r.role, r.loadsStrict ? 'yes' : 'no', checksOf(r), operationsOf(r), r.seconds.toFixed(1)]
      : [r.tool, '–', r.crashed ? 'FAILED TO RUN' : 'not run', '–', '–', '–', r.seconds.toFixed(1)],
  );
}
export const MATRIX_HEADER = ['tool', 'version', 'role', 'loads strict', 'checks', 'operations succeeded', 'seconds'];

/** The table block: when and on what the run was made, then one row per tool. */
export function matrixTable(saved: SavedMatrix): string {
  const when = `${saved.date.slice(0, 10)} ${saved.date.slice(11, 16)} UTC`;
  return [
    `\`npm run tools\` of ${when} (Node ${saved.node}, each tool against a fresh sandbox), saved in \`${MATRIX_FILE}\`:`,
    '',
    `| ${MATRIX_HEADER.join(' | ')} |`,
    `|${MATRIX_HEADER.map((_, i) => (i >= 4 ? '---:' : '---')).join('|')}|`,
    ...matrixRows(saved.rows).map((cells) => `| ${cells.map(cell).join(' | ')} |`),
  ].join('\n');
}

/** The details block: per tool, what works, what does not and why, and the workaround. */
export function matrixDetails(saved: SavedMatrix): string {
  const out: string[] = [];
  for (const r of saved.rows) {
    out.push(`### ${r.tool}`, '');
    if (!wasRun(r)) {
      out.push(`Not run: ${r.notRun}`, '');
      continue;
    }
    out.push('Works:', '', ...r.works.map((w) => `- ${w}`), '');
    if (r.limits.length) {
      out.push('| does not work | why | workaround | cause |', '|---|---|---|---|');
      for (const l of r.limits)
        out.push(
          `| ${cell(l.what)} | ${cell(l.why)} | ${cell(l.workaround)} | ${l.outsideDocument ? 'the tool' : 'our document'} |`,
        );
      out.push('');
    }
  }
  return out.join('\n').trim();
}

/** `page` with a block replaced by `text`; throws when the page has no such block. */
export const withBlock = (page: string, block: Block, text: string): string =>
  withMarkedBlock(page, BLOCKS[block], text, TOOLS_PAGE);

/** A block as the page holds it now. */
export const blockIn = (page: string, block: Block): string | undefined => markedBlockIn(page, BLOCKS[block]);

/** The page with both blocks rendered from `saved`. */
export const withMatrix = (page: string, saved: SavedMatrix) =>
  withBlock(withBlock(page, 'table', matrixTable(saved)), 'details', matrixDetails(saved));
