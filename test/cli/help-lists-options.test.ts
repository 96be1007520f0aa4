// Every command's --help lists every option the command takes. No list of today's options: the
// commands are those the package declares (its bins, and the commands `payment-gateway --help`
// names), and the options are those their parsers are given. Each command runs as a user runs it,
// with node:util's parseArgs recorded (test/support/record-parse-args.mjs): `--help` shows which
// parser reads the command's arguments, and each option in turn (`cmd --OPTION --help`) which parser
// that option leads to (`contract --notifications` reaches another one). Each parser's options must be
// in the help `cmd --help` prints, and each option the help names must be taken (`cmd --OPTION
// --help` prints help, not "Unknown option").
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../support/contract.ts';

const pkg = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8'));
/** The bins as the checkout runs them (their sources beside dist/'s compiled files). */
const SOURCES: Record<string, string> = Object.fromEntries(
  Object.entries<string>(pkg.bin).map(([name, file]) => [name, file.replace(/^dist\//, '').replace(/\.js$/, '.ts')]),
);

type Table = Record<string, { type: 'string' | 'boolean'; short: string | null }>;

// Made before the commands are listed (at collection, before any hook runs).
const dir = await mkdtemp(path.join(os.tmpdir(), 'pgw-help-'));
let runs = 0;

/** Runs a command with its parsers recorded: what it printed, its exit code, the option tables its parsers were given. */
async function recorded(bin: string, args: string[]) {
  const file = path.join(dir, `run-${++runs}.jsonl`);
  const result = await promisify(execFile)(process.execPath, [path.join(ROOT, SOURCES[bin]!), ...args], {
    cwd: ROOT,
    env: {
      ...process.env,
      NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import=${path.join(ROOT, 'test/support/record-parse-args.mjs')}`,
      PGW_RECORD_PARSE_ARGS: file,
    },
    timeout: 60_000,
  }).then(
    ({ stdout, stderr }) => ({ code: 0, out: stdout, err: stderr }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, out: e.stdout, err: e.stderr }),
  );
  const tables = (await readFile(file, 'utf8').catch(() => ''))
    .split('\n')
    .filter(Boolean)
    .map((line) => (JSON.parse(line) as { options: Table }).options);
  return { ...result, tables };
}
type Recorded = Awaited<ReturnType<typeof recorded>>;

/**
 * `cmd --help`, run once: listing the commands runs each command's --help, and its test reads the same
 * run (its output, exit code and parsers) instead of starting the command again.
 */
const helpRuns = new Map<string, Promise<Recorded>>();
function helpRun(bin: string, prefix: string[]): Promise<Recorded> {
  const key = JSON.stringify([bin, ...prefix]);
  let run = helpRuns.get(key);
  if (!run) {
    run = recorded(bin, [...prefix, '--help']);
    helpRuns.set(key, run);
  }
  return run;
}

/** The options a help text names: each --name in it. */
const named = (help: string) => new Set([...help.matchAll(/(?<![\w-])--([a-z][a-z0-9-]*)/g)].map((m) => m[1]!));
/**
 * The options the help offers as this command's own: its usage line and its option list. Prose may
 * name another command's option (`as listen --chaos`), which this command need not take.
 */
const offered = (help: string) =>
  named(
    help
      .split('\n')
      .filter((line) => line.startsWith('Usage:') || /^\s+(-\w, )?--[a-z]/.test(line))
      .join('\n'),
  );

interface Explored {
  help: string;
  /** Every option of every parser the command's arguments reached, and how it was reached. */
  taken: Map<string, string>;
  /** Options the help names that no argument form gets past the parser. */
  refused: string[];
}

/**
 * The options a program's entry looks for itself, outside any parser (`'--notifications'` in
 * cli/main.ts sends `contract` to another parser): each is tried, to find the parser it leads to.
 */
async function ownLiterals(bin: string): Promise<Set<string>> {
  const source = await readFile(path.join(ROOT, SOURCES[bin]!), 'utf8');
  return new Set([...source.matchAll(/['"`]--([a-z][a-z0-9-]*)/g)].map((m) => m[1]!));
}

/**
 * A command's --help, and every parser its arguments reach: the one `--help` reaches, and the one each
 * option leads to that the help names but that parser lacks, or that the program's entry looks for itself.
 */
async function explore(bin: string, prefix: string[]): Promise<Explored> {
  const first = await helpRun(bin, prefix);
  expect(first.code, first.err).toBe(0);
  const help = first.out;
  const taken = new Map<string, string>();
  const record = (tables: Table[], via: string) => {
    for (const t of tables) for (const name of Object.keys(t)) if (!taken.has(name)) taken.set(name, via);
  };
  record(first.tables, '--help');
  const routes = await ownLiterals(bin);
  const refused: string[] = [];
  const tried = new Set(['help', 'version']);
  for (const name of [...named(help), ...routes]) {
    if (tried.has(name) || (taken.has(name) && !routes.has(name))) continue;
    tried.add(name);
    // With a value (a string option's), then without (a flag's).
    let run = await recorded(bin, [...prefix, `--${name}=x`, '--help']);
    if (run.code !== 0) run = await recorded(bin, [...prefix, `--${name}`, '--help']);
    if (run.code === 0) record(run.tables, `--${name}`);
    else if (!taken.has(name) && offered(help).has(name)) refused.push(`--${name}: ${run.err.trim()}`);
  }
  return { help, taken, refused };
}

/** The commands a help lists under `Commands:`, each on a line of its own: two spaces, the name, its text. */
const listedCommands = (help: string): string[] => {
  const at = help.indexOf('\nCommands:\n');
  if (at < 0) return [];
  const listed = help.slice(at + 1).split('\n\n')[0]!;
  return [...listed.matchAll(/^ {2}([a-z][\w-]*) /gm)].map((m) => m[1]!);
};

/**
 * Every command of the package: each bin, each command `payment-gateway --help` names, and each
 * command the help of one of those names in turn (`payment-gateway sandbox accounts add`).
 */
async function commands(): Promise<[string, string, string[]][]> {
  const out: [string, string, string[]][] = [];
  const visit = async (label: string, bin: string, prefix: string[]) => {
    out.push([label, bin, prefix]);
    const text = (await helpRun(bin, prefix)).out;
    for (const command of listedCommands(text)) await visit(`${label} ${command}`, bin, [...prefix, command]);
  };
  for (const bin of Object.keys(SOURCES)) {
    // payment-gateway's own list is of its commands, each run as payment-gateway COMMAND.
    if (bin === 'payment-gateway') {
      out.push([bin, bin, []]);
      const help = (await helpRun(bin, [])).out;
      for (const command of listedCommands(help)) await visit(`${bin} ${command}`, bin, [command]);
    } else await visit(bin, bin, []);
  }
  return out;
}

afterAll(() => rm(dir, { recursive: true, force: true }));

describe('every --help lists every option its command takes', async () => {
  const all = await commands();

  it('finds the package bins and the commands of payment-gateway --help', () => {
    expect(all.length).toBeGreaterThan(Object.keys(SOURCES).length + 3);
  });

  // Side by side (vitest runs five at a time): a command's processes are its own, their records files of their own.
  it.concurrent.each(all)(
    '%s',
    async (_label, bin, prefix) => {
      const { help, taken, refused } = await explore(bin, prefix);
      const listed = named(help);
      const missing = [...taken]
        .filter(([name]) => !listed.has(name))
        .map(([name, via]) => `--${name} (reached by ${via})`);
      expect(missing, `options the parsers take that --help does not list:\n${help}`).toEqual([]);
      expect(refused, 'options --help lists that no parser takes').toEqual([]);
    },
    300_000,
  );
});
