// A benchmark's options as its users meet them: --help prints the script's own opening comment (its
// usage, written once, where the script is read), and a mistake is one line on stderr and exit 2,
// never a stack trace.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs, type ParseArgsConfig } from 'node:util';

/** The opening `//` comment of a script, as its usage. */
export function usageOf(scriptUrl: string): string {
  const lines = readFileSync(fileURLToPath(scriptUrl), 'utf8').split('\n');
  const comment: string[] = [];
  for (const line of lines) {
    if (!line.startsWith('//')) break;
    comment.push(line.replace(/^\/\/ ?/, ''));
  }
  return comment.join('\n');
}

/** parseArgs for a benchmark script (`import.meta.url`): --help and mistakes handled as the CLI handles them. */
export function benchArgs<T extends ParseArgsConfig>(scriptUrl: string, config: T): ReturnType<typeof parseArgs<T>> {
  const argv = config.args ?? process.argv.slice(2);
  if (argv.includes('--help') || argv.includes('-h')) {
    console.log(usageOf(scriptUrl));
    process.exit(0);
  }
  try {
    return parseArgs(config);
  } catch (error) {
    const name = fileURLToPath(scriptUrl).replace(/^.*\/bench\//, 'bench/');
    console.error(`${name}: ${(error as Error).message} (--help says what it takes)`);
    process.exit(2);
  }
}
