import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Lint, tsc and npm pack start real tools; none of them is timed by the tests.
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // One folder for the run, where work several files need is done once (test/support/once-per-run.ts).
    globalSetup: ['./test/support/run-folder.global.ts'],
    // Vitest's summary, then one plain closing line that log readers recognise. Reporters run side by
    // side, so a reporter that prints later (the JSON one announces its file) would push that line up.
    reporters: ['default', './test/support/closing-line-reporter.ts'],
  },
});
