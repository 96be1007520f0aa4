// tsc for the tests, incremental: what a run learns (which file has which errors, and each file's
// hash) is kept in node_modules/.cache/pgw-tsc/NAME.tsbuildinfo, so that the next run re-checks only
// the files that changed and those that depend on them. tsc itself decides what to re-check from the
// hashes of every file of the program (node_modules' declarations and TypeScript's own libraries
// included) and from the options: a file edited since, a new file, or another version of TypeScript
// is seen as such, never answered from the cache.
//
// A copy of the package (test/support/package-copy.ts) starts from its own last state, or else from
// the package's (the type tests' program): tsc's build info names each file by its path relative to
// the build info file, so the package's paths are moved to the copy's before tsc reads them; the files
// the copy did not change keep their hash and are not re-checked, those it changed and their
// dependents are.
//
// A project in a folder of its own that is another each run (the client app of
// test/package/install.test.ts, which installs the package) is kept the same way, every file of that
// folder (its node_modules included: the installed package is what it checks) named as under a fixed
// place in the cache, and moved to the run's folder before tsc reads it.
//
// The checks are made by the run's one compiler (test/support/tsc-server.ts, started on demand by
// test/support/shared-servers.global.ts), which answers as the tsc command would with the same
// arguments, and parses node_modules' declarations and TypeScript's libraries once per run rather than
// once per check.
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { sharedTsc } from './shared-servers.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
/** Where the build info lives between runs: node_modules is neither copied nor committed, and `npm ci` starts it afresh. */
export const TSC_CACHE = path.join(ROOT, 'node_modules/.cache/pgw-tsc');

/** The build info kept under `name`. */
export const buildInfo = (name: string) => path.join(TSC_CACHE, `${name}.tsbuildinfo`);

export interface TscRun {
  /** tsc's project (a tsconfig.json). */
  project: string;
  /** The name its build info is kept under (a word: types, add-list-method …). */
  cache: string;
  /**
   * For a copy of the package: its folder, and the cache of the package's own program to start from
   * when the copy has none yet. The copy's build info is kept with its files named as the package's
   * (the copy's folder is another each run), and moved to the next copy before tsc reads it.
   */
  copy?: { folder: string; seed: string };
  /**
   * For a project whose folder is another each run (an app that installs the package): that folder.
   * Its build info is kept with every file under it, node_modules included, named as under a fixed
   * place (TSC_CACHE/NAME.folder), and moved to the run's folder before tsc reads it.
   */
  folder?: string;
  /** More arguments for tsc (--pretty false, --noEmit …). */
  args?: string[];
  cwd?: string;
}

/**
 * Runs tsc --incremental over `project`; resolves with its output (empty when it found no error),
 * never rejects. Each run works on a private copy of the build info and puts it in place by rename
 * once tsc has written it, so two runs at once (two workers, two test runs in one checkout) never
 * read a half-written one; the last to finish wins, and either is a true state.
 */
export async function tsc(run: TscRun): Promise<string> {
  mkdirSync(TSC_CACHE, { recursive: true });
  const kept = buildInfo(run.cache);
  const mine = path.join(TSC_CACHE, `${run.cache}.${process.pid}.${Date.now()}.tsbuildinfo`);
  const place = path.join(TSC_CACHE, `${run.cache}.folder`);
  const start = run.copy
    ? (moved(kept, ROOT, run.copy.folder) ?? moved(buildInfo(run.copy.seed), ROOT, run.copy.folder))
    : run.folder
      ? moved(kept, place, run.folder, { modules: true })
      : readable(kept);
  if (start !== undefined) writeFileSync(mine, start);
  try {
    const output = await check(
      ['-p', run.project, '--incremental', '--tsBuildInfoFile', mine, ...(run.args ?? [])],
      run.cwd ?? ROOT,
    ).catch((failure: Error) => `tsc-server: ${failure.message}`);
    const end = run.copy
      ? moved(mine, run.copy.folder, ROOT)
      : run.folder
        ? moved(mine, run.folder, place, { modules: true })
        : readable(mine);
    if (end !== undefined) {
      writeFileSync(mine, end);
      renameSync(mine, kept);
    }
    return output;
  } finally {
    rmSync(mine, { force: true });
  }
}

/** What `tsc ARGS` run in `cwd` writes, as the run's compiler answers it. */
async function check(args: string[], cwd: string): Promise<string> {
  const { socket } = await sharedTsc();
  return new Promise((resolve, reject) => {
    const request = http.request({ socketPath: socket, method: 'POST', path: '/' }, (answer) => {
      const parts: Buffer[] = [];
      answer.on('data', (part: Buffer) => parts.push(part));
      answer.on('end', () => resolve((JSON.parse(Buffer.concat(parts).toString('utf8')) as { output: string }).output));
      answer.on('error', reject);
    });
    request.on('error', reject);
    request.end(JSON.stringify({ args, cwd }));
  });
}

function readable(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

/**
 * The build info `file` (in TSC_CACHE) with each file under `from` (its node_modules aside, unless
 * `modules`) named by its place under `to`; every other file (node_modules, which a copy links,
 * TypeScript's libraries) stays where it is. Undefined when there is none, or it is not a build info
 * this knows.
 */
function moved(file: string, from: string, to: string, { modules = false } = {}): string | undefined {
  const text = readable(file);
  if (text === undefined) return undefined;
  let info: { fileNames?: unknown };
  try {
    info = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!Array.isArray(info.fileNames)) return undefined;
  const ownModules = path.join(from, 'node_modules') + path.sep;
  info.fileNames = info.fileNames.map((name: string) => {
    const absolute = path.resolve(TSC_CACHE, name);
    if (!absolute.startsWith(from + path.sep) || (!modules && absolute.startsWith(ownModules))) return name;
    return path.relative(TSC_CACHE, path.join(to, path.relative(from, absolute)));
  });
  return JSON.stringify(info);
}
