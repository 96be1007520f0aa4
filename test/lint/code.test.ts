// Biome's linter and formatter over the code (biome.json: every .ts and .js outside generated/, dist/,
// releases/, test-results/, node_modules/), enforced by `npm test`: a lint error or warning fails it
// (infos do not), and so does a file the formatter would change (`npm run format` writes it). The tree
// is read once, by `biome check` (the linter and the formatter over each file in one pass: 4.8-5.3 s of CPU
// where `biome lint` and `biome format` one after the other took 5.4-5.8, three runs each), and each test reads its part.
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/contract.ts';

const BIOME = path.join(ROOT, 'node_modules/.bin/biome');

interface Report {
  summary: { errors: number; warnings: number };
  diagnostics: { severity: string; category: string; location: { path: string; start: { line: number } } }[];
}

function lint(cwd = ROOT): Report {
  const r = spawnSync(BIOME, ['lint', '--reporter=json', '--max-diagnostics=none'], { cwd, encoding: 'utf8' });
  return JSON.parse(r.stdout) as Report;
}

/** `biome check` over the tree, run by the first test that asks: the formatter's findings are those of category `format`. */
let checked: { report: Report; status: number | null } | undefined;
function checkTree() {
  if (!checked) {
    const r = spawnSync(BIOME, ['check', '--reporter=json', '--max-diagnostics=none'], { cwd: ROOT, encoding: 'utf8' });
    checked = { report: JSON.parse(r.stdout) as Report, status: r.status };
  }
  return checked;
}

describe('biome lint', () => {
  it('finds no error or warning in the tree', () => {
    const findings = checkTree().report.diagnostics.filter(
      (d) => d.category !== 'format' && (d.severity === 'error' || d.severity === 'warning'),
    );
    expect(findings.map((d) => `${d.location.path}:${d.location.start.line} ${d.category}`)).toEqual([]);
  });

  it('finds every file formatted as biome.json says', () => {
    const { report, status } = checkTree();
    expect(
      report.diagnostics.filter((d) => d.category === 'format').map((d) => `${d.location.path} ${d.category}`),
    ).toEqual([]);
    // The check's own status: no error of either kind.
    expect(status).toBe(0);
  });

  it('is configured to find what it should: a comma operator and an assignment in an expression', () => {
    // The project's biome.json beside a file with both mistakes, in a folder of its own.
    const dir = mkdtempSync(path.join(os.tmpdir(), 'pgw-biome-'));
    copyFileSync(path.join(ROOT, 'biome.json'), path.join(dir, 'biome.json'));
    writeFileSync(
      path.join(dir, 'probe.ts'),
      'let a = 0;\nlet b = 0;\nexport const f = () => ((a = 1), b++);\nexport const g = (x: number) => (a = x) > 0;\n',
    );
    const report = lint(dir);
    rmSync(dir, { recursive: true, force: true });
    expect(report.diagnostics.map((d) => d.category).sort()).toEqual([
      'lint/complexity/noCommaOperator',
      'lint/suspicious/noAssignInExpressions',
      'lint/suspicious/noAssignInExpressions',
    ]);
  });
});
