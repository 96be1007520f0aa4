// The CI log is read by its closing lines: .ci/run must end, on stdout, with the plain
// `N passed, N failed, N skipped` line, with nothing after it on stdout or stderr, and exit with the
// tests' status. This runs the real .ci/run in a scratch copy of the repo layout, with npm, curl and
// the pinned node replaced by stand-ins that behave like the real ones at their worst: warnings on
// stderr after the summary, and npm's own error lines after a failing `npm test`.
import { spawnSync } from 'node:child_process';
import { chmod, copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { ROOT } from '../support/contract.ts';

const dirs: string[] = [];
afterAll(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))));

async function executable(file: string, body: string): Promise<void> {
  await writeFile(file, `#!/usr/bin/env bash\n${body}\n`);
  await chmod(file, 0o755);
}

async function runCi(testStatus: number, failedTests = testStatus === 0 ? 0 : 2, toolsStatus = 0) {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'pgw-ci-run-'));
  dirs.push(dir);
  await mkdir(path.join(dir, '.ci'));
  await copyFile(path.join(ROOT, '.ci/run'), path.join(dir, '.ci/run'));
  await mkdir(path.join(dir, 'scripts/setup'), { recursive: true });
  await executable(path.join(dir, 'scripts/setup/chromium.sh'), 'echo "Chromium ready"');
  await executable(path.join(dir, 'scripts/setup/interpreters.sh'), 'echo "php: ok"');
  await executable(path.join(dir, 'scripts/setup/faketime.sh'), 'echo "faketime: ok"');
  await executable(path.join(dir, 'scripts/setup/tools.sh'), 'echo "tools: ready"');
  // scripts/postgres/ensure.sh stand-in: progress on stderr, the URL on stdout (as the real one).
  await mkdir(path.join(dir, 'scripts/postgres'), { recursive: true });
  await executable(
    path.join(dir, 'scripts/postgres/ensure.sh'),
    `echo 'ensure-postgres: starting' >&2\necho 'postgres://postgres@127.0.0.1:5999/pgw_test'`,
  );
  await mkdir(path.join(dir, 'bin'));
  await mkdir(path.join(dir, 'node_modules/.bin'), { recursive: true });
  await executable(path.join(dir, 'node_modules/.bin/node'), 'exec sleep 30');
  await executable(path.join(dir, 'bin/curl'), 'exit 0');
  await executable(
    path.join(dir, 'bin/npm'),
    `case "$1" in
  test)
    echo "npm test sees PGW_TEST_DATABASE_URL=$PGW_TEST_DATABASE_URL"
    echo ' Test Files  3 passed (3)'
    echo
    echo 'vitest: 7 passed, ${failedTests} failed, 1 skipped'
    echo 'a late warning from a tool' >&2
    ${testStatus === 0 ? '' : `echo 'npm error Lifecycle script "test" failed with error:' >&2; exit ${testStatus}`}
    ;;
  run) echo "npm $*"; ${toolsStatus === 0 ? '' : `if [ "$3" = tools ]; then echo 'tools: 1 runner(s) failed to run: dredd' >&2; exit ${toolsStatus}; fi`} ;;
  *) echo "npm $*"; echo 'npm warn something' >&2 ;;
esac`,
  );
  return spawnSync('bash', ['.ci/run'], {
    cwd: dir,
    encoding: 'utf8',
    env: { ...process.env, PATH: `${path.join(dir, 'bin')}:${process.env.PATH}`, CI: 'true' },
    timeout: 60_000,
  });
}

it('a green run ends with the plain closing line on stdout, nothing on stderr, exit 0', async () => {
  const run = await runCi(0);
  expect(run.stderr).toBe('');
  expect(run.stdout.trimEnd().split('\n').at(-1)).toBe('7 passed, 0 failed, 1 skipped');
  expect(run.status).toBe(0);
});

it("npm test runs with PGW_TEST_DATABASE_URL from scripts/postgres/ensure.sh's stdout", async () => {
  const run = await runCi(0);
  expect(run.stdout).toContain('npm test sees PGW_TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5999/pgw_test\n');
});

it("a red run still ends with the closing line, after npm's error lines, and fails", async () => {
  const run = await runCi(1);
  expect(run.stderr).toBe('');
  const lines = run.stdout.trimEnd().split('\n');
  expect(lines.at(-1)).toBe('7 passed, 2 failed, 1 skipped');
  expect(lines.some((line) => line.startsWith('npm error'))).toBe(true);
  expect(run.status).toBe(1);
});

it('a run that exits red with every counted test green ends with one failure, not a green line', async () => {
  const run = await runCi(1, 0);
  expect(run.stdout.trimEnd().split('\n').at(-1)).toBe('7 passed, 1 failed, 1 skipped');
  expect(run.status).toBe(1);
});

// `npm ci` is CI's first step and a fresh machine's: it refuses a lock that lacks an entry package.json's
// tree needs (an optional platform package the registry does not serve at the pinned version, say),
// which `npm install` on a machine that already has node_modules never shows.
it('package-lock.json installs as it is: npm ci (dry run) accepts it', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'pgw-lock-'));
  dirs.push(dir);
  await copyFile(path.join(ROOT, 'package.json'), path.join(dir, 'package.json'));
  await copyFile(path.join(ROOT, 'package-lock.json'), path.join(dir, 'package-lock.json'));
  const run = spawnSync('npm', ['ci', '--dry-run', '--ignore-scripts', '--no-audit', '--no-fund'], {
    cwd: dir,
    encoding: 'utf8',
    timeout: 120_000,
  });
  expect(
    run.stderr
      .split('\n')
      .filter((line) => /npm error/.test(line))
      .slice(0, 5),
  ).toEqual([]);
  expect(run.status).toBe(0);
}, 150_000);

it('a matrix runner that fails does not stop npm test, and the run ends red with one failure more', async () => {
  const run = await runCi(0, 0, 1);
  expect(run.stderr).toBe('');
  expect(run.stdout).toContain('npm test sees PGW_TEST_DATABASE_URL=');
  expect(run.stdout.trimEnd().split('\n').at(-1)).toBe('7 passed, 1 failed, 1 skipped');
  expect(run.status).toBe(1);
});
