// What every tool's runner needs besides its tool: the tool's installed version (or a clear
// "not installed"), a child process run to its end with its output kept, and the clock.
import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { ToolContext } from '../report.ts';

/** Thrown by a runner whose tool is missing: the matrix reports the tool as not run, with the reason. */
export class ToolNotInstalled extends Error {}

/** The installed version of an npm package of scripts/tools, or ToolNotInstalled. */
export function installedVersion(ctx: ToolContext, pkg: string): string {
  const file = path.join(ctx.toolsDir, 'node_modules', pkg, 'package.json');
  if (!existsSync(file))
    throw new ToolNotInstalled(`${pkg} is not installed in scripts/tools (run: bash scripts/setup/tools.sh)`);
  return JSON.parse(readFileSync(file, 'utf8')).version;
}

/** A command of a tool's package (node_modules/.bin/<name>) in scripts/tools. */
export const toolBin = (ctx: ToolContext, name: string) => path.join(ctx.toolsDir, 'node_modules', '.bin', name);

export interface Finished {
  code: number | null;
  output: string;
}

let logs = 0;

/**
 * Runs a command to its end (or kills it after timeoutMs); stdout and stderr together. They go to a
 * file in `cwd`, not a pipe: a tool that calls process.exit() right after printing (Dredd) loses
 * what is still queued in a pipe, never what it wrote to a file.
 */
export async function runCommand(
  command: string,
  args: string[],
  options: { cwd: string; env?: Record<string, string>; timeoutMs?: number },
): Promise<Finished> {
  const log = path.join(options.cwd, `output-${++logs}.log`);
  const fd = openSync(log, 'w');
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0', ...options.env },
    stdio: ['ignore', fd, fd],
  });
  const code = await new Promise<number | null>((resolve, reject) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 300_000);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('close', (exit) => {
      clearTimeout(timer);
      resolve(exit);
    });
  }).finally(() => closeSync(fd));
  return { code, output: readFileSync(log, 'utf8') };
}

/** Seconds since `start` (performance.now()), one decimal. */
export const secondsSince = (start: number) => Math.round((performance.now() - start) / 100) / 10;
