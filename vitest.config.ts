import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Lint, tsc and npm pack start real tools; none of them is timed by the tests.
    testTimeout: 120_000,
    hookTimeout: 120_000,
    reporters: ['default', ['json', { outputFile: 'test-results/vitest.json' }]],
  },
});
