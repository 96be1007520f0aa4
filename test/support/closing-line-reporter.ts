import type { Reporter, SerializedError, TestModule } from 'vitest/node';

/**
 * Ends a run with one plain line, `vitest: N passed, N failed, N skipped`, after vitest's own summary.
 * CI logs are read by tools that know the generic "N passed, N failed" closing line but not vitest's
 * boxed `Tests  1402 passed (1402)` summary; without this line such a tool may take a green run for
 * one that executed no test.
 */
export default class ClosingLineReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<SerializedError> = []): void {
    const counts = { passed: 0, failed: 0, skipped: 0 };
    for (const module of testModules) {
      let failedHere = 0;
      for (const test of module.children.allTests()) {
        const { state } = test.result();
        if (state === 'passed') counts.passed += 1;
        else if (state === 'skipped') counts.skipped += 1;
        else {
          // failed, or still pending when the run ended
          counts.failed += 1;
          failedHere += 1;
        }
      }
      // A file that failed outside its tests (it could not be collected, or a beforeAll threw and its
      // tests were skipped) failed the run although no test of it did: it counts as one failure.
      if (failedHere === 0 && module.state() === 'failed') counts.failed += 1;
    }
    // An error thrown outside any test (a timer or a promise left behind) fails the run with every test
    // green: each counts as one failure, so the line never reads green on a red exit.
    counts.failed += unhandledErrors.length;
    process.stdout.write(`\nvitest: ${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped\n`);
  }
}
