// Each wait's words are written once, in sandbox/waits.ts (WAIT_WORDS): `sandbox --help` prints them
// and docs/DEPLOY.md's Waits table (the block between `<!-- sandbox:waits -->` markers) is what
// waitsTable writes from them now, never typed. `PGW_UPDATE_SAMPLES=1 npx vitest run THIS FILE`
// rewrites the block (as the guides' samples are written).
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { blockIn, withBlock } from '../../scripts/marked-block.ts';
import { DEFAULT_WAITS, WAIT_ENV, WAIT_WORDS, waitsTable } from '../../sandbox/waits.ts';
import { ROOT } from '../support/contract.ts';

const PAGE = path.join(ROOT, 'docs/DEPLOY.md');
const NAME = 'sandbox:waits';
const keys = Object.keys(WAIT_ENV) as (keyof typeof WAIT_ENV)[];

describe("the waits' words, written once in sandbox/waits.ts", () => {
  it("are docs/DEPLOY.md's Waits table", () => {
    const page = readFileSync(PAGE, 'utf8');
    const now = waitsTable();
    if (process.env.PGW_UPDATE_SAMPLES === '1' && blockIn(page, NAME) !== now)
      writeFileSync(PAGE, withBlock(page, NAME, now, 'docs/DEPLOY.md'));
    expect(blockIn(readFileSync(PAGE, 'utf8'), NAME)).toBe(now);
  });

  it('are what sandbox --help says of each variable, with its default', () => {
    const help = spawnSync(process.execPath, [path.join(ROOT, 'sandbox/main.ts'), '--help'], { encoding: 'utf8' });
    expect(help.status).toBe(0);
    const lines = help.stdout.split('\n').map((l) => l.trim());
    for (const key of keys) {
      const line = lines.find((l) => l.startsWith(`${WAIT_ENV[key]} `)) ?? '';
      expect(line.slice(WAIT_ENV[key].length).trim(), WAIT_ENV[key]).toBe(
        `${WAIT_WORDS[key].what}, in ms (default ${DEFAULT_WAITS[key]}; docs/DEPLOY.md, Waits)`,
      );
    }
  });

  it('the table names every wait once, with its default, and the help prints no Markdown', () => {
    const table = waitsTable();
    for (const key of keys) {
      expect(table.split(`| \`${WAIT_ENV[key]}\` | ${DEFAULT_WAITS[key]} |`)).toHaveLength(2);
      expect(WAIT_WORDS[key].what, key).not.toMatch(/[`*|]/);
    }
  });
});
