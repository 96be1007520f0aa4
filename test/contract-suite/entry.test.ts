// The suite's program (contract/run.ts, payment-gateway-contract-test) reads its arguments before it
// loads the suite: --help and a mistake in the arguments answer without the operation table, the
// checks or the server stubs (a --help took 0.27 s of CPU with them, 0.06 s without; help-lists-options
// runs it and `payment-gateway contract --help` some ten times a run). Each run records the package's
// modules it loaded (module.registerHooks, preloaded), so that a run that loads the suite is seen to,
// and each Node process it started. `payment-gateway contract` answers --help, --version and a mistake
// in the same process, as the program does (contract/usage.ts), instead of starting the program's.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../support/contract.ts';

const dir = mkdtempSync(path.join(os.tmpdir(), 'pgw-entry-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const recorder = path.join(dir, 'record-modules.mjs');
writeFileSync(
  recorder,
  `import { appendFileSync } from 'node:fs';
import { registerHooks } from 'node:module';
appendFileSync(process.env.PGW_RECORD_MODULES, 'process ' + process.pid + '\\n');
registerHooks({
  load(url, context, next) {
    appendFileSync(process.env.PGW_RECORD_MODULES, url + '\\n');
    return next(url, context);
  },
});
`,
);

let runs = 0;
/** The program run with `args`: its exit code, what it printed, the package's own files it loaded, the Node processes it took. */
function program(
  args: string[],
  entry = 'contract/run.ts',
): Promise<{ code: number; out: string; err: string; loaded: string[]; processes: number }> {
  const record = path.join(dir, `run-${++runs}.txt`);
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [entry, ...args],
      // Preloaded by it and by any Node process it starts.
      {
        cwd: ROOT,
        env: {
          ...process.env,
          PGW_RECORD_MODULES: record,
          NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import=${pathToFileURL(recorder).href}`,
        },
      },
      (error, stdout, stderr) => {
        const lines = readFileSync(record, 'utf8').split('\n');
        const processes = new Set(lines.filter((line) => line.startsWith('process '))).size;
        const loaded = lines
          .filter((url) => url.startsWith('file:'))
          .map((url) => path.relative(ROOT, fileURLToPath(url)))
          .filter((file) => !file.startsWith('..') && !file.startsWith('node_modules'));
        resolve({ code: (error as { code?: number } | null)?.code ?? 0, out: stdout, err: stderr, loaded, processes });
      },
    );
  });
}

/** What a --help or a refused argument may load: the entry and the one-line writer of its messages (which masks card numbers). */
const ENTRY = ['contract/run.ts', 'contract/usage.ts', 'runtime/log-line.ts', 'runtime/card-numbers.ts'];

describe('payment-gateway-contract-test reads its arguments before it loads the suite', () => {
  it('--help prints the usage, loading no more than its entry', async () => {
    const run = await program(['--help']);
    expect(run.code).toBe(0);
    expect(run.out).toMatch(/^Usage: payment-gateway-contract-test /);
    expect(run.loaded.filter((file) => !ENTRY.includes(file))).toEqual([]);
  });

  it('an unknown option is refused in one line, loading no more than its entry', async () => {
    const run = await program(['--bogus']);
    expect(run.code).toBe(2);
    expect(run.err).toBe("payment-gateway-contract-test: Unknown option '--bogus' (see --help)\n");
    expect(run.loaded.filter((file) => !ENTRY.includes(file))).toEqual([]);
  });

  it('a run loads the suite (the record sees it)', async () => {
    const run = await program(['--base-url', 'http://127.0.0.1:9', '--only', 'processCaptur']);
    expect(run.code).toBe(2);
    expect(run.loaded).toEqual(expect.arrayContaining(['generated/operations.ts', 'contract/checks.ts']));
  });
});

describe('payment-gateway contract answers --help, --version and a mistake itself, as the program does', () => {
  it("--help: the program's usage, then the --notifications mode's, from one process", async () => {
    const [run, own] = await Promise.all([program(['contract', '--help'], 'cli/main.ts'), program(['--help'])]);
    expect([run.code, run.err, run.processes]).toEqual([0, '', 1]);
    expect(
      run.out.startsWith(
        `${own.out}\nWith --notifications URL, it checks a merchant's notification endpoint instead:\n\nUsage: payment-gateway contract --notifications`,
      ),
    ).toBe(true);
  });

  it('--version and an unknown option: what the program prints, from one process', async () => {
    const version = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')).version;
    expect(await program(['contract', '--version'], 'cli/main.ts')).toMatchObject({
      code: 0,
      out: `${version}\n`,
      err: '',
      processes: 1,
    });
    expect(await program(['contract', '--bogus'], 'cli/main.ts')).toMatchObject({
      code: 2,
      out: '',
      err: "payment-gateway-contract-test: Unknown option '--bogus' (see --help)\n",
      processes: 1,
    });
  });
});
