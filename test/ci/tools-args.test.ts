// `npm run tools` with a mistyped option says so in one line and its usage, exit 2: it printed node's
// stack trace (ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL) for `npm run tools -- specmatic`.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { expect, it } from 'vitest';
import { ROOT } from '../support/contract.ts';

const tools = (...args: string[]) =>
  spawnSync(process.execPath, [path.join(ROOT, 'scripts/tools/run.ts'), ...args], { cwd: ROOT, encoding: 'utf8' });

it.each([
  [['specmatic'], "tools: Unexpected argument 'specmatic'. This command does not take positional arguments"],
  [['--onyl', 'specmatic'], "tools: Unknown option '--onyl'"],
])('refuses %j in one line and the usage', (args, first) => {
  const r = tools(...args);
  expect(r.status).toBe(2);
  expect(r.stdout).toBe('');
  const lines = r.stderr.trimEnd().split('\n');
  expect(lines[0]).toContain(first);
  expect(lines).toEqual([lines[0], 'usage: npm run tools -- [--only TOOL]... [--save]']);
});
