// Runs a guide's shell blocks as a reader would type them, one bash session per guide, from the
// checkout, on the machine's own Node (node_modules/.bin is taken off PATH: only npm scripts get the
// Node that npm ci installs, as for a reader on Node 20).
//
// What a guide's Markdown says to this runner (the conventions are in docs/CHANGING.md):
//   ```sh          run in the session, in order (variables and functions carry over); it must exit 0
//   ```sh serve    a program that keeps running (a server, listen): started on its own, in the
//                  background; the walk goes on once it has printed a URL
//   ```sh norun    not run (npm ci, npm test, the benchmarks): the npm scripts and CLI commands it
//                  names must exist
//   # → text       after a command: what it prints (`# →` alone: an empty line). A block with such lines must print exactly
//                  those lines, in order; `…` stands for any text.
// npm in the session is a shell function (test/support/npm-stand-in.ts): each npm script runs through
// the real npm the first time the test file runs it, and then as npm runs it, without npm's own start.
// The well-known ports of the guides (4010 the sandbox, 4011 the mock, 4020 the example server, 3000
// the example app) are moved to free ones, and the sandbox gets a database of its own, so that a walk
// runs beside anything else on the machine.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { ended, groupEnded } from './children.ts';
import { ROOT } from './contract.ts';
import { type NpmScriptEnv, npmScriptEnv, npmStandIn } from './npm-stand-in.ts';

export interface Block {
  kind: 'run' | 'serve' | 'norun';
  code: string;
  /** The block's first line in the file (1-based), for messages. */
  line: number;
  /** The `# → ` lines: what the block prints. */
  expected: string[];
}

export function shellBlocks(markdown: string): Block[] {
  const blocks: Block[] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = /^```sh(?:\s+(serve|norun))?\s*$/.exec(lines[i]!);
    if (!open) continue;
    const start = i + 1;
    const body: string[] = [];
    for (i++; i < lines.length && lines[i] !== '```'; i++) body.push(lines[i]!);
    blocks.push({
      kind: open[1] === 'serve' ? 'serve' : open[1] === 'norun' ? 'norun' : 'run',
      code: body.join('\n'),
      line: start,
      // `# →` alone: an empty line of output.
      expected: body.flatMap((l) => /^# →(?: (.*))?$/.exec(l)?.[1] ?? (l === '# →' ? [''] : [])),
    });
  }
  return blocks;
}

/** Whether `out` is what the block says it prints: `…` any text; a line that is only `…`, any lines. */
export function printsAsShown(out: string, expected: string[]): boolean {
  const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const pattern = expected
    .map((line) => (line === '…' ? '(?:[^\\n]*\\n)*' : `${line.split('…').map(literal).join('[^\\n]*')}\\n`))
    .join('');
  return new RegExp(`^${pattern}$`).test(`${out.replace(/\n+$/, '')}\n`);
}

/** The npm scripts and payment-gateway subcommands a block names (for norun blocks). */
export function namedCommands(code: string): { scripts: string[]; subcommands: string[] } {
  const scripts = [...code.matchAll(/\bnpm run(?: -s)? ([\w:-]+)/g)].map((m) => m[1]!);
  const subcommands = [...code.matchAll(/\b(?:npm run(?: -s)? cli --|payment-gateway) ([a-z]+)/g)].map((m) => m[1]!);
  return { scripts, subcommands };
}

const PORTS = [4010, 4011, 4020, 3000];

/**
 * The ports of the walks under way in this process: walks run side by side (test/docs/guides.test.ts),
 * and a port one walk picked is free until its server binds it, seconds later; another walk must not
 * pick it meanwhile.
 */
const held = new Set<number>();

/**
 * A port free now, for a guide's server that starts later in the walk. Chosen below the ephemeral
 * range (Linux 32768-60999, macOS 49152-65535), where the kernel picks the ports of every `listen(0)`
 * and outgoing connection: a port picked by listen(0) and released here could be handed to another
 * test file's server in the seconds before the guide's server binds it, and the guide would then
 * fail to start, or talk to that other server. Held (`held`) until the walk ends.
 */
async function freePort(): Promise<number> {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    if (held.has(port)) continue;
    held.add(port);
    const server = net.createServer();
    const bound = await new Promise<boolean>((resolve) => {
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => resolve(true));
    });
    if (!bound) {
      held.delete(port);
      continue;
    }
    await new Promise((r) => server.close(r));
    return port;
  }
}

export interface Step {
  block: Block;
  ms: number;
  out: string;
}

/** What npm gives a script, read from npm once per test file (the walks' environments differ only in what npm passes on). */
let npmEnv: Promise<NpmScriptEnv> | undefined;

/**
 * Walks a guide: every `sh` and `sh serve` block in order. Resolves with each step's output and
 * time; rejects naming the block that failed, with what it printed. `npmOnce` is the folder, one per
 * test file, where each npm script leaves its mark the first time it runs through the real npm; the
 * later runs are npm's work without npm (test/support/npm-stand-in.ts).
 */
export async function walkGuide(file: string, npmOnce: string): Promise<Step[]> {
  const blocks = shellBlocks(readFileSync(path.join(ROOT, file), 'utf8')).filter((b) => b.kind !== 'norun');
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'pgw-walk-'));
  const moved = new Map<number, number>();
  for (const port of PORTS) moved.set(port, await freePort());
  const relocate = (code: string) =>
    code.replace(
      /(:|PORT=|--port )(4010|4011|4020|3000)\b/g,
      (_, before, port) => `${before}${moved.get(Number(port))}`,
    );
  const env = {
    ...process.env,
    PATH: readersPath(),
    PORT: String(moved.get(4010)),
    PGW_DB: path.join(tmp, 'sandbox.db'),
    // Where the CLI and the examples find the sandbox when no URL is written (default port 4010).
    PGW_SANDBOX_URL: `http://127.0.0.1:${moved.get(4010)}`,
    GATEWAY_URL: `http://127.0.0.1:${moved.get(4010)}`,
    NODE_ENV: '',
    FORCE_COLOR: '0',
  };
  const npm = path.join(tmp, 'npm.sh');
  const servers: ChildProcess[] = [];
  const steps: Step[] = [];
  // One session for the `sh` blocks: each is written to a file and sourced, so state carries over.
  const session = spawn('bash', ['--norc', '--noprofile'], { cwd: ROOT, env, stdio: ['pipe', 'pipe', 'pipe'] });
  let sessionOut = '';
  session.stdout.on('data', (c: Buffer) => (sessionOut += c));
  session.stderr.on('data', (c: Buffer) => (sessionOut += c));
  try {
    npmEnv ??= npmScriptEnv(ROOT, env);
    writeFileSync(npm, npmStandIn(ROOT, npmOnce, await npmEnv));
    session.stdin.write(`set -o pipefail\nsource ${npm}\n`);
    for (const [n, block] of blocks.entries()) {
      const started = performance.now();
      const script = path.join(tmp, `block-${n}.sh`);
      const code = relocate(block.code);
      const expected = shellBlocks(`\`\`\`sh\n${code}\n\`\`\``)[0]!.expected;
      const where = `${file}:${block.line}`;
      if (block.kind === 'serve') {
        writeFileSync(script, `source ${npm}\n${code}`);
        const child = spawn('bash', ['--norc', '--noprofile', script], { cwd: ROOT, env, detached: true });
        servers.push(child);
        let out = '';
        child.stdout!.on('data', (c: Buffer) => (out += c));
        child.stderr!.on('data', (c: Buffer) => (out += c));
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`${where}: printed no URL in 60 s:\n${out}`)), 60_000);
          const check = () => {
            if (/https?:\/\/\S+/.test(out)) {
              clearTimeout(timer);
              resolve();
            }
          };
          child.stdout!.on('data', check);
          child.stderr!.on('data', check);
          child.on('exit', (code) => reject(new Error(`${where}: exited with ${code}:\n${out}`)));
        });
        steps.push({ block, ms: performance.now() - started, out });
        continue;
      }
      const outFile = path.join(tmp, `block-${n}.out`);
      sessionOut = '';
      // set -e inside the block: a command that fails ends the session, and the walk with it.
      writeFileSync(script, `set -e\n${code}\nset +e\n`);
      session.stdin.write(`source ${script} > ${outFile} 2> ${outFile}.err; echo "@@done $?"\n`);
      const status = await new Promise<number>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`${where}: still running after 120 s`)), 120_000);
        const died = (code: number | null) =>
          reject(
            new Error(
              `${where}: a command failed (exit ${code}):\n${readFileSync(outFile, 'utf8')}\n${readFileSync(`${outFile}.err`, 'utf8')}`,
            ),
          );
        const check = () => {
          const m = /@@done (\d+)/.exec(sessionOut);
          if (m) {
            clearTimeout(timer);
            session.stdout.off('data', check);
            session.off('exit', died);
            resolve(Number(m[1]));
          }
        };
        session.stdout.on('data', check);
        session.once('exit', died);
      });
      const out = readFileSync(outFile, 'utf8');
      const err = readFileSync(`${outFile}.err`, 'utf8');
      if (status !== 0) throw new Error(`${where}: exit ${status}\n${out}\n${err}`);
      if (expected.length && !printsAsShown(out, expected))
        throw new Error(`${where}: printed\n${out}\nnot as the guide shows:\n${expected.join('\n')}`);
      steps.push({ block, ms: performance.now() - started, out });
    }
    return steps;
  } finally {
    session.stdin.end();
    await ended(session);
    await Promise.all(servers.map((child) => groupEnded(child)));
    for (const port of moved.values()) held.delete(port);
    rmSync(tmp, { recursive: true, force: true });
  }
}

/** PATH without node_modules/.bin: the shell of a reader, whose `node` is the machine's own. */
export function readersPath(): string {
  const bin = path.join(ROOT, 'node_modules', '.bin');
  return (process.env.PATH ?? '')
    .split(path.delimiter)
    .filter((p) => path.resolve(p) !== bin)
    .join(path.delimiter);
}

let readers: string | undefined;
/**
 * The machine's own node (what a reader's shell runs), as the walk sees it: asked once per test file
 * (each walk names it), for a start of the machine's Node costs about as much CPU as a command of a
 * guide.
 */
export const readersNode = (): string =>
  (readers ??= spawnSync('node', ['--version'], {
    env: { ...process.env, PATH: readersPath() },
    encoding: 'utf8',
  }).stdout.trim());
