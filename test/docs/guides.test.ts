// The README and every guide, walked as a reader would: each `sh` block run as written, in order, on
// the machine's own Node, with its servers started; each output a block shows is the output it
// prints. The conventions are test/support/guide-walk.ts's (and docs/CHANGING.md's).
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../support/contract.ts';
import {
  namedCommands,
  printsAsShown,
  readersNode,
  readersPath,
  shellBlocks,
  walkGuide,
} from '../support/guide-walk.ts';
import { npmScriptEnv, npmStandIn } from '../support/npm-stand-in.ts';

const GUIDES = [
  'README.md',
  'docs/CLIENT-TEAMS.md',
  'docs/SERVER-STUBS.md',
  'docs/DEPLOY.md',
  'docs/CHANGING.md',
  'docs/BENCHMARKS.md',
  'docs/WIRE-FORMATS.md',
];
const text = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');
const scripts = Object.keys(JSON.parse(text('package.json')).scripts);
const SUBCOMMANDS = [
  'sandbox',
  'mock',
  'contract',
  'sign',
  'docs',
  'listen',
  'trigger',
  'deliveries',
  'resend',
  'chaos',
  'logs',
];

describe('the README is a front door', () => {
  it('is under 250 lines and links every guide', () => {
    const readme = text('README.md');
    expect(readme.split('\n').length).toBeLessThan(250);
    for (const guide of GUIDES.slice(1)) expect(readme).toContain(`](${guide})`);
  });
});

describe('the walk runner', () => {
  it('compares output line by line, `…` standing for any text and a lone `…` for any lines', () => {
    expect(printsAsShown('a 12 b\n', ['a … b'])).toBe(true);
    expect(printsAsShown('a 12 b\nextra\n', ['a … b'])).toBe(false);
    expect(printsAsShown('head\n1\n2\ntail\n', ['head', '…', 'tail'])).toBe(true);
    expect(printsAsShown('head\ntail', ['head', '…', 'tail'])).toBe(true);
    expect(printsAsShown('head\nother\n', ['head', '…', 'tail'])).toBe(false);
  });

  it("runs an npm script through npm the first time, then as npm runs it: npm's output, exit code and environment", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'pgw-npm-stand-in-'));
    try {
      const pkg = path.join(dir, 'pkg');
      mkdirSync(pkg);
      mkdirSync(path.join(dir, 'once'));
      writeFileSync(
        path.join(pkg, 'package.json'),
        JSON.stringify({
          name: 'stand-in-check',
          version: '1.2.3',
          scripts: {
            show: `printf '[%s]\\n' "$0" "$@"; echo to-stderr >&2; env | sort; exit 3`,
            hook: 'true',
            prehook: 'true',
          },
        }),
      );
      // npm as the session finds it, logging each call that reaches it; with FAKE set it stops there.
      mkdirSync(path.join(dir, 'bin'));
      const realNpm = execFileSync('sh', ['-c', 'command -v npm'], { env: { ...process.env, PATH: readersPath() } })
        .toString()
        .trim();
      writeFileSync(
        path.join(dir, 'bin', 'npm'),
        `#!/bin/sh\necho "$*" >> '${dir}/log'\n[ -z "$FAKE" ] || exit 0\nexec '${realNpm}' "$@"\n`,
        { mode: 0o755 },
      );
      // Not silenced by the npm that may run this test (`npm run -s test:times`): the banner is shown.
      const env: NodeJS.ProcessEnv = { ...process.env, PATH: `${path.join(dir, 'bin')}:${readersPath()}` };
      delete env.npm_config_loglevel;
      writeFileSync(path.join(dir, 'npm.sh'), npmStandIn(pkg, path.join(dir, 'once'), await npmScriptEnv(pkg, env)));
      rmSync(path.join(dir, 'log'));
      const run = (name: string, command: string) =>
        `${command} > '${dir}/${name}.out' 2> '${dir}/${name}.err'; echo $? >> '${dir}/${name}.out'`;
      const args = `-- 'a b' "c'd" '' '$HOME'`;
      execFileSync(
        'bash',
        [
          '--norc',
          '--noprofile',
          '-c',
          [
            `source '${dir}/npm.sh'`,
            run('npm', `npm run -s show ${args}`),
            run('stand-in', `npm run -s show ${args}`),
            run('npm-banner', `command npm run show ${args}`),
            run('stand-in-banner', `npm run show ${args}`),
            'export FAKE=1',
            'npm run -s nosuch; npm run -s show a; npm run -s show --x; npm run -s hook; npm start; npm ci',
            `(cd .. && npm run -s show -- a)`,
          ].join('\n'),
        ],
        { cwd: pkg, env },
      );
      const read = (name: string) => readFileSync(path.join(dir, name), 'utf8');
      // `_` is the path of the last command bash ran (npm's, for npm), read by nothing.
      const out = (name: string) => read(`${name}.out`).replace(/^_=.*\n/m, '');
      expect(out('npm')).toMatch(/^\[sh\]\n(.*\n)*npm_lifecycle_event=show\n(.*\n)*3\n$/);
      expect(out('stand-in')).toBe(out('npm'));
      expect(read('stand-in.err')).toBe(read('npm.err'));
      expect(out('npm-banner')).toMatch(/^\n> stand-in-check@1.2.3 show\n> printf .* a b c'd {2}\$HOME\n\n\[sh\]/);
      expect(out('stand-in-banner')).toBe(out('npm-banner'));
      // What reached npm: the first run of `show`, then each form the stand-in leaves to npm.
      expect(read('log').split('\n')).toEqual([
        `run -s show -- a b c'd  $HOME`,
        `run show -- a b c'd  $HOME`,
        'run -s nosuch',
        'run -s show a',
        'run -s show --x',
        'run -s hook',
        'start',
        'ci',
        'run -s show -- a',
        '',
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/**
 * The guides are walked side by side, WALKS_AT_ONCE at a time: a walk mostly waits (on its servers'
 * starts, on npm, on the commands' own waits), and each has its own ports, database and temp folder
 * (guide-walk.ts), so one walk does not see another. One after another, the seven walks held this
 * file's worker for 126 s (38 s of CPU). Not more at once: the walks' contract runs and Prism starts
 * are CPU, not waits, and with three walks at once on a machine already busy (load 18 on 2 cores)
 * SERVER-STUBS's contract runs went past the 120 s a block may take. The longest walks start first
 * (walked alone: SERVER-STUBS 55 s, CLIENT-TEAMS 50 s, DEPLOY and WIRE-FORMATS 25 s); a guide not
 * named here, last.
 */
const WALKS_AT_ONCE = 2;
const LONGEST_FIRST = ['docs/SERVER-STUBS.md', 'docs/CLIENT-TEAMS.md', 'docs/DEPLOY.md', 'docs/WIRE-FORMATS.md'];
const walkOrder = [...GUIDES].sort(
  (a, b) => (LONGEST_FIRST.indexOf(a) + 1 || 99) - (LONGEST_FIRST.indexOf(b) + 1 || 99),
);
let walking = 0;
const waiting: (() => void)[] = [];
async function inTurn<T>(walk: () => Promise<T>): Promise<T> {
  if (walking >= WALKS_AT_ONCE) await new Promise<void>((resolve) => waiting.push(resolve));
  else walking++;
  try {
    return await walk();
  } finally {
    // The slot passes to the next walk waiting, or is given back.
    const next = waiting.shift();
    if (next) next();
    else walking--;
  }
}

/** Where each npm script leaves its mark when it first runs through npm (test/support/npm-stand-in.ts). */
const npmOnce = mkdtempSync(path.join(os.tmpdir(), 'pgw-npm-once-'));
afterAll(() => rmSync(npmOnce, { recursive: true, force: true }));

describe.concurrent.each(walkOrder)('%s', (file) => {
  const blocks = shellBlocks(text(file));

  it('tells no reader to run `node file.ts` (only npm scripts get the Node that npm ci installs)', () => {
    for (const block of blocks)
      expect(block.code, `${file}:${block.line}`).not.toMatch(/(^|[;&|(]\s*|=\S+\s+)node\s+\S+\.ts\b/m);
    expect(text(file)).not.toMatch(/`node [\w/.-]+\.ts/);
  });

  it('names only npm scripts and commands that exist, in the blocks it does not run', () => {
    for (const block of blocks.filter((b) => b.kind === 'norun')) {
      const named = namedCommands(block.code);
      for (const script of named.scripts) expect(scripts, `${file}:${block.line}`).toContain(script);
      for (const sub of named.subcommands) expect(SUBCOMMANDS, `${file}:${block.line}`).toContain(sub);
    }
  });

  it.runIf(blocks.some((b) => b.kind !== 'norun'))(
    "runs as written on the machine's own Node, printing what it shows",
    async () => {
      let started = 0;
      const steps = await inTurn(() => {
        started = performance.now();
        return walkGuide(file, npmOnce);
      });
      const seconds = ((performance.now() - started) / 1000).toFixed(1);
      // The walk's length and time, for the record (nothing is asserted on time).
      console.log(`${file}: ${steps.length} blocks walked in ${seconds} s on node ${readersNode()}`);
      expect(steps.length).toBe(blocks.filter((b) => b.kind !== 'norun').length);
    },
    600_000,
  );
});
