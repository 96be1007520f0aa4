// A command's run() as a test reads it: its exit code, the lines it printed and its one-line mistakes.
import type { CommandOutput } from '../../cli-kit/index.ts';

export async function captured(
  command: (argv: string[], options: CommandOutput) => Promise<number>,
  args: string[],
): Promise<{ code: number; out: string[]; err: string[] }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await command(args, { print: (l) => out.push(l), printError: (l) => err.push(l) });
  return { code, out, err };
}
