// CI's log must end with a line that log readers recognise ("N passed, N failed, N skipped"), or a
// green run can be taken for one that executed no test. This runs vitest itself, with the project's
// reporters, over a fixture of one passing, one failing and one skipped test.
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { ROOT } from '../support/contract.ts';

let dir: string | undefined;
afterAll(() => dir && rm(dir, { recursive: true, force: true }));

it('the run ends with one plain closing line that counts passed, failed and skipped tests', async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'pgw-closing-line-'));
  await writeFile(
    path.join(dir, 'fixture.test.ts'),
    `import { expect, test } from 'vitest';
test('passes', () => expect(1).toBe(1));
test('fails', () => expect(1).toBe(2));
test.skip('is skipped', () => {});
`,
  );
  await writeFile(
    path.join(dir, 'hook.test.ts'),
    `import { beforeAll, expect, test } from 'vitest';
beforeAll(() => { throw new Error('the server did not start'); });
test('needs the server', () => expect(1).toBe(1));
`,
  );
  await writeFile(
    path.join(dir, 'late.test.ts'),
    `import { expect, test } from 'vitest';
test('passes, but leaves a timer that throws', async () => {
  setTimeout(() => { throw new Error('thrown after the test'); }, 0);
  await new Promise((resolve) => setTimeout(resolve, 20));
  expect(1).toBe(1);
});
`,
  );
  const config = path.join(dir, 'vitest.config.ts');
  const reporter = path.join(ROOT, 'test/support/closing-line-reporter.ts');
  const ours = (await import(path.join(ROOT, 'vitest.config.ts'))).default.test.reporters;
  await writeFile(
    config,
    `export default { test: { include: ['fixture.test.ts', 'hook.test.ts', 'late.test.ts'], reporters: ${JSON.stringify(ours.map((r: unknown) => (r === './test/support/closing-line-reporter.ts' ? reporter : r)))} } };\n`,
  );
  const run = spawnSync(path.join(ROOT, 'node_modules/.bin/vitest'), ['run', '--config', config, '--root', dir], {
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1' },
  });
  const lines = run.stdout.trimEnd().split('\n');
  expect(run.status).toBe(1);
  // hook.test.ts: its beforeAll failed, so its one test is skipped and the file counts as one failure;
  // late.test.ts: its test passed, but the error it left behind fails the run and counts as one.
  expect(lines.at(-1)).toBe('vitest: 2 passed, 3 failed, 2 skipped');
});
