// The compatibility matrix in docs/TOOLS.md is a saved run's, rendered, never typed by hand: the
// blocks between the markers are what scripts/tools/lib/matrix.ts makes of
// scripts/tools/saved/matrix.json (`npm run tools -- --save` writes both). The tools themselves run
// in `npm run tools` (CI), not here.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  blockIn,
  MATRIX_FILE,
  matrixDetails,
  matrixTable,
  type SavedMatrix,
  TOOLS_PAGE,
  wasRun,
  withBlock,
} from '../../scripts/tools/lib/matrix.ts';
import { installedVersion, ToolNotInstalled } from '../../scripts/tools/lib/tool.ts';
import { ROOT } from '../support/contract.ts';

const page = readFileSync(path.join(ROOT, TOOLS_PAGE), 'utf8');
const saved: SavedMatrix = JSON.parse(readFileSync(path.join(ROOT, MATRIX_FILE), 'utf8'));

describe('the compatibility matrix', () => {
  it('is the saved run, rendered (npm run tools -- --save writes both)', () => {
    expect(blockIn(page, 'table')).toBe(matrixTable(saved));
    expect(blockIn(page, 'details')).toBe(matrixDetails(saved));
  });

  it('says when and on what Node the run was made, and holds a row per tool', () => {
    expect(saved.date).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(matrixTable(saved)).toContain(`of ${saved.date.slice(0, 10)} `);
    for (const row of saved.rows) expect(matrixTable(saved)).toContain(`| ${row.tool} |`);
  });

  it('a changed figure in the page is caught', () => {
    const row = saved.rows.find(wasRun)!;
    const edited = withBlock(
      page,
      'table',
      matrixTable({ ...saved, rows: saved.rows.map((r) => (r === row ? { ...row, seconds: row.seconds + 1 } : r)) }),
    );
    expect(blockIn(edited, 'table')).not.toBe(matrixTable(saved));
  });

  it('a tool that is not installed is said so, with how to install it', () => {
    const ctx = {
      documentJson: '',
      documentYaml: '',
      baseUrl: '',
      workDir: '',
      toolsDir: path.join(ROOT, 'scripts/tools'),
    };
    expect(() => installedVersion(ctx, 'no-such-tool')).toThrow(ToolNotInstalled);
    expect(() => installedVersion(ctx, 'no-such-tool')).toThrow(/scripts\/setup\/tools\.sh/);
  });
});
