import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { defineConfig } from 'vitest/config';

const TESTS = 'test/**/*.test.ts';
/**
 * The test files that replace a module or a global for their own run (vi.mock and kin): each runs in a
 * fresh process of its own. Every other file shares its worker's loaded modules with the files run
 * before it (isolate: false), so the spec, the validators and the generated tables load once per
 * worker instead of once per file; none of them keeps state between files.
 */
const REPLACES_MODULES = /\bvi\.(mock|doMock|stubGlobal|stubEnv|useFakeTimers)\(/;
const isolated = readdirSync('test', { recursive: true, withFileTypes: true })
  .filter((e) => e.isFile() && e.name.endsWith('.test.ts'))
  .map((e) => path.join(e.parentPath, e.name))
  .filter((file) => REPLACES_MODULES.test(readFileSync(file, 'utf8')));

export default defineConfig({
  test: {
    // Lint, tsc and npm pack start real tools; none of them is timed by the tests.
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // One folder for the run, where work several files need is done once (test/support/once-per-run.ts).
    globalSetup: ['./test/support/run-folder.global.ts'],
    // Vitest's summary, then one plain closing line that log readers recognise. Reporters run side by
    // side, so a reporter that prints later (the JSON one announces its file) would push that line up.
    reporters: ['default', './test/support/closing-line-reporter.ts'],
    projects: [
      { extends: true, test: { name: 'shared', include: [TESTS], exclude: isolated, isolate: false } },
      { extends: true, test: { name: 'isolated', include: isolated.length ? isolated : ['none'], isolate: true } },
    ],
  },
});
