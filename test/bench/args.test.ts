// A benchmark script a user runs answers --help with its usage and a mistake in one line, exit 2,
// never a stack trace (an operator's trial met TypeError [ERR_PARSE_ARGS_UNKNOWN_OPTION] from two).
// Every script reads its options through bench/args.ts; one of them is run to show what that gives.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';
import { ROOT } from '../support/contract.ts';

it('no benchmark script parses its options but through bench/args.ts', () => {
  const direct = readdirSync(path.join(ROOT, 'bench'))
    .filter((f) => f.endsWith('.ts') && f !== 'args.ts' && f !== 'run.ts')
    .filter((f) => /\bparseArgs\(/.test(readFileSync(path.join(ROOT, 'bench', f), 'utf8')));
  expect(direct).toEqual([]);
});

it('answers --help with its opening comment, and an unknown option in one line, exit 2', () => {
  const run = (arg: string) =>
    spawnSync(process.execPath, [path.join(ROOT, 'bench/in-process.ts'), arg], { encoding: 'utf8', timeout: 30_000 });
  const help = run('--help');
  expect(help.status).toBe(0);
  expect(help.stdout).toMatch(/^node bench\/in-process\.ts \[--seconds 5\]: the gateway core alone/);
  const wrong = run('--nope');
  expect(wrong.status).toBe(2);
  expect(wrong.stderr.trim().split('\n')).toEqual([
    "bench/in-process.ts: Unknown option '--nope' (--help says what it takes)",
  ]);
});
