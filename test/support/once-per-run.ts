// Work that several test files need, done once per test run: the first file to ask does it, under a
// lock (mkdir is atomic across the workers' processes), and leaves its answer in the run's folder
// (test/support/run-folder.global.ts); the others read that answer, or the failure, instead of
// doing it again.
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { inject } from 'vitest';
import { until } from './until.ts';

/** The answer of `work` (JSON), made once per run under `name`; `timeoutMs` bounds the wait for another file's. */
export async function oncePerRun<T>(
  name: string,
  work: (folder: string) => Promise<T>,
  timeoutMs = 300_000,
): Promise<T> {
  const folder = path.join(inject('runFolder'), name);
  const answer = path.join(folder, 'answer.json');
  const failure = path.join(folder, 'failure.txt');
  let mine = true;
  try {
    mkdirSync(folder);
  } catch {
    mine = false;
  }
  if (mine) {
    try {
      const value = await work(folder);
      writeFileSync(`${answer}.part`, JSON.stringify(value));
      renameSync(`${answer}.part`, answer);
      return value;
    } catch (error) {
      writeFileSync(failure, String((error as Error).stack ?? error));
      throw error;
    }
  }
  if (!(await until(() => existsSync(answer) || existsSync(failure), timeoutMs, 100)))
    throw new Error(`${name}: another test file started it and gave no answer within ${timeoutMs} ms`);
  if (existsSync(failure)) throw new Error(`${name} failed in another test file:\n${readFileSync(failure, 'utf8')}`);
  return JSON.parse(readFileSync(answer, 'utf8')) as T;
}
