// Vitest's global set-up: one temporary folder for the whole run, handed to every test file
// (inject('runFolder')) so that work several files need (the packed tarball, test/support/packed.ts)
// is done once per run and shared, then removed when the run ends.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A folder that lives as long as the test run, shared by every file. */
    runFolder: string;
  }
}

export default function setup(project: TestProject): () => void {
  const folder = mkdtempSync(path.join(os.tmpdir(), 'pgw-run-'));
  project.provide('runFolder', folder);
  return () => rmSync(folder, { recursive: true, force: true });
}
