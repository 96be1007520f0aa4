import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import type { Plugin } from 'vite';

// Every Node process of a run (vitest's workers, one per file, and the sandboxes, CLIs and servers the
// tests start, hundreds of them) keeps the code it compiles in Node's on-disk compile cache and reads
// it back at its next start, instead of compiling the same modules again (Node 22.1+; older ones
// ignore it; Node validates each entry against the source). Importing the sandbox and the contract
// suite took 0.44 s of CPU without it, 0.20 s with it. A cache the caller chose is kept; this is
// Node's own default folder for module.enableCompileCache(), which tsc uses too.
process.env.NODE_COMPILE_CACHE ??= path.join(os.tmpdir(), 'node-compile-cache');

const checkout = path.dirname(fileURLToPath(import.meta.url)) + path.sep;

/**
 * Vitest's on-disk cache of the modules it transforms is kept for this checkout's files only. The
 * architecture tests import whole copies of the package from temporary folders (test/support/package-copy.ts):
 * their modules, cached, would be new entries on every run, never read again.
 */
const cacheThisCheckoutOnly: Plugin = {
  name: 'pgw-cache-this-checkout-only',
  configureVitest({ experimental_defineCacheKeyGenerator }) {
    experimental_defineCacheKeyGenerator(({ id }) => (id.startsWith(checkout) ? undefined : false));
  },
};

export default defineConfig({
  plugins: [cacheThisCheckoutOnly],
  test: {
    // A run's TypeScript is transformed once and kept in node_modules/.experimental-vitest-cache, keyed
    // by each file's path and content (and Vitest's version and this configuration), so the next run of
    // an unchanged file reads it back: the contributor's loop runs the same files again and again. In
    // the files of test/stubs and test/protocols, the second run spent 1.5 s of CPU less than the first
    // (7.7 against 9.2 s, 0.6 s of transforms against 2.4). Vitest clears it when the lockfile changes;
    // `npx vitest --clearCache` clears it by hand.
    experimental: { fsModuleCache: true },
    include: ['test/**/*.test.ts'],
    // Three test files at a time on the 2-core machine this was measured on. Many files wait on servers,
    // browsers, child processes and PostgreSQL more than they compute, and a waiting file holds its
    // worker: idle, the whole run took 258.7 s with two workers and 228.5 s with three, for the same CPU
    // (354.8 and 354.5 s; npm run test:times, one run each). Every file is safe beside any other (its
    // own PostgreSQL database, ports from 0, temp folders of its own, test-results/ files of its own;
    // shared work in test/support/once-per-run.ts).
    maxWorkers: 3,
    // A worker runs file after file in one process (each test file is still evaluated afresh): the
    // modules, the JIT's work and the worker's start-up are paid once per worker, not once per file.
    // Isolated, the files of test/sandbox, test/stubs and test/hardening took 149.7 s of CPU; shared,
    // 98.0 s. A file that changes state of a module shared by later files puts it back when it ends
    // (test/sandbox/support.ts onPostgres); one that mocks a module loads what uses it afresh
    // (test/hardening/ids.test.ts).
    isolate: false,
    // Lint, tsc and npm pack start real tools; none of them is timed by the tests.
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // One folder for the run, where work several files need is done once (test/support/once-per-run.ts);
    // servers several files use (Prism, Chromium, the TypeScript compiler of test/support/tsc-server.ts),
    // started once per run when a file first asks.
    globalSetup: ['./test/support/run-folder.global.ts', './test/support/shared-servers.global.ts'],
    // Each file's CPU, for npm run test:times (scripts/test-times.ts).
    setupFiles: ['./test/support/cpu-meter.ts'],
    // Vitest's summary, then one plain closing line that log readers recognise. Reporters run side by
    // side, so a reporter that prints later (the JSON one announces its file) would push that line up.
    reporters: ['default', './test/support/closing-line-reporter.ts'],
  },
});
