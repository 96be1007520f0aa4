// Options as every command of the package reads them: node:util parseArgs (strict) under one table
// per command that also writes its --help, so that an option, its environment variable and its
// default are written once. A user's mistake ends in one line on stderr and exit 2, never a stack.
import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';
import { logSafeLines } from '../runtime/log-line.ts';

export interface OptionSpec {
  type: 'string' | 'boolean';
  /** What it does, for --help. */
  help: string;
  short?: string;
  multiple?: boolean;
  /** The value's placeholder in --help, e.g. PORT. */
  value?: string;
  /** The environment variable read when the option is not given. */
  env?: string;
  /** Shown in --help; applied by the command (an environment variable comes before it). */
  default?: string;
  /**
   * A string option's value when it is given bare (last, or before another option): `--chaos` is
   * `--chaos=all`. --help shows the value as optional: `--chaos [KINDS]`.
   */
  bareValue?: string;
}

export interface CommandSpec {
  /** As the user typed it: payment-gateway sandbox, payment-gateway-sandbox... */
  name: string;
  usage: string;
  summary: string;
  options: Record<string, OptionSpec>;
  /** Environment variables read beside the options' own. */
  env?: Record<string, string>;
  /** Further lines at the end of --help (examples). */
  notes?: string[];
  positionals?: boolean;
}

/** A mistake of the user's: printed as one line with the command's name, exit 2. */
/**
 * A table's entry for a name a person typed: its own entries only, so that `constructor`, `__proto__`
 * or `toString` is no entry rather than something every object inherits.
 */
export const ownEntry = <T>(table: Record<string, T>, name: string): T | undefined =>
  Object.hasOwn(table, name) ? table[name] : undefined;

export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export function version(): string {
  // The package's own name resolves from its source and from an install alike.
  return createRequire(import.meta.url)('payment-gateway-contract/package.json').version;
}

const COMMON: Record<string, OptionSpec> = {
  help: { type: 'boolean', short: 'h', help: 'print this help and exit' },
  version: { type: 'boolean', short: 'V', help: 'print the version and exit' },
};

export function helpText(spec: CommandSpec): string {
  const all = { ...spec.options, ...COMMON };
  const left = (name: string, o: OptionSpec) =>
    `${o.short ? `-${o.short}, ` : '    '}--${name}${o.type === 'string' ? (o.bareValue !== undefined ? ` [${o.value ?? 'VALUE'}]` : ` ${o.value ?? 'VALUE'}`) : ''}`;
  const width = Math.max(...Object.entries(all).map(([n, o]) => left(n, o).length)) + 2;
  const lines = [`Usage: ${spec.name} ${spec.usage}`, '', spec.summary, '', 'Options:'];
  for (const [name, o] of Object.entries(all)) {
    const extra = [o.env && `env ${o.env}`, o.default !== undefined && `default ${o.default}`]
      .filter(Boolean)
      .join('; ');
    lines.push(`  ${left(name, o).padEnd(width)}${o.help}${extra ? ` (${extra})` : ''}`);
  }
  if (spec.env && Object.keys(spec.env).length) {
    lines.push('', 'Environment:');
    const w = Math.max(...Object.keys(spec.env).map((k) => k.length)) + 2;
    for (const [name, text] of Object.entries(spec.env)) lines.push(`  ${name.padEnd(w)}${text}`);
  }
  if (spec.notes?.length) lines.push('', ...spec.notes);
  return lines.join('\n');
}

export type Parsed = { values: Record<string, string | boolean | string[] | undefined>; positionals: string[] };

/**
 * Parses argv for a command. --help and --version are answered here (printed, then `exit` is
 * returned); any other mistake throws a UsageError naming the option and the fix.
 */
export function parse(spec: CommandSpec, argv: string[], print: (text: string) => void = console.log): Parsed | 'exit' {
  const options = Object.fromEntries(
    Object.entries({ ...spec.options, ...COMMON }).map(([name, o]) => [
      name,
      { type: o.type, ...(o.short ? { short: o.short } : {}), ...(o.multiple ? { multiple: true } : {}) },
    ]),
  );
  // An option with a bare value, given bare: its value written in (parseArgs knows no optional values).
  const args = argv.map((arg, i) => {
    const name = arg.startsWith('--') ? arg.slice(2) : undefined;
    const o = name !== undefined && Object.hasOwn(spec.options, name) ? spec.options[name] : undefined;
    const next = argv[i + 1];
    return o?.bareValue !== undefined && (next === undefined || next.startsWith('-')) ? `${arg}=${o.bareValue}` : arg;
  });
  let parsed: Parsed;
  try {
    parsed = parseArgs({ args, options, strict: true, allowPositionals: Boolean(spec.positionals) }) as Parsed;
  } catch (error) {
    const message =
      error instanceof Error
        ? error.message
            .replace(/\. To specify a positional argument.*$/s, '')
            .replace(/\s*\n\s*/g, ' ') // one line, as every mistake is (parseArgs words some on three)
            .replace(/\.$/, '')
        : String(error);
    throw new UsageError(`${message} (see ${spec.name} --help)`);
  }
  if (parsed.values.help) {
    print(helpText(spec));
    return 'exit';
  }
  if (parsed.values.version) {
    print(version());
    return 'exit';
  }
  return parsed;
}

/**
 * parse() for a command that answers with its exit code: 0 once --help or --version is printed, 2
 * after a mistake printed as one line on stderr; else what was parsed.
 */
export function parseOrExitCode(
  spec: CommandSpec,
  argv: string[],
  print: (text: string) => void = console.log,
  printError: (line: string) => void = console.error,
): Parsed | number {
  try {
    const parsed = parse(spec, argv, print);
    return parsed === 'exit' ? 0 : parsed;
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    printError(`${spec.name}: ${error.message}`);
    return 2;
  }
}

/** Where a command writes: what it prints and its one-line mistakes (the console unless a caller, a test, gives its own). */
export interface CommandOutput {
  print?: (line: string) => void;
  printError?: (line: string) => void;
}

/**
 * The start every command's run() shares: its output, and its argv parsed, or the exit code to return
 * at once (--help and --version answered: 0; a usage mistake printed: 2).
 */
export function startCommand(
  spec: CommandSpec,
  argv: string[],
  options: CommandOutput = {},
): { print: (line: string) => void; printError: (line: string) => void; parsed: Parsed | number } {
  // What a command prints holds others' text (an endpoint's answer, a sandbox's record, a server's
  // refusal): each line goes through the one log writer's rules, its own line ends kept, so no escape
  // sequence reaches the terminal raw, no line is forged, no card number is shown.
  const out = options.print ?? ((line: string) => console.log(line));
  const err = options.printError ?? ((line: string) => console.error(line));
  const print = (line: string) => out(logSafeLines(line));
  const printError = (line: string) => err(logSafeLines(line));
  return { print, printError, parsed: parseOrExitCode(spec, argv, print, printError) };
}

/**
 * A mistake found after parsing (a missing argument, an unknown event): one line on stderr naming the
 * command and where its help is, as parse() words its own; the exit code 2 to return.
 */
export function usageMistake(
  spec: CommandSpec,
  message: string,
  printError: (line: string) => void = console.error,
): 2 {
  printError(`${spec.name}: ${message} (see ${spec.name} --help)`);
  return 2;
}

/** A port from an option or the environment: an integer 0-65535 (0: any free port). */
export function portOf(value: string | undefined, source: string, fallback: number): number {
  if (value === undefined || value.trim() === '') return fallback;
  if (!/^\d+$/.test(value.trim()) || Number(value) > 65535)
    throw new UsageError(`${source} must be a port number from 0 to 65535 (0 picks a free one), not '${value}'`);
  return Number(value);
}

/** A positive integer option. */
export function countOf(value: string | undefined, source: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (!/^[1-9]\d*$/.test(value)) throw new UsageError(`${source} must be a whole number above 0, not '${value}'`);
  return Number(value);
}

/**
 * Runs a command's body and turns what it throws into one line on stderr: exit 2 for the user's
 * mistakes (UsageError), 1 for anything else (its stack only with DEBUG set).
 */
export async function runCommand(name: string, body: () => Promise<void> | void): Promise<void> {
  try {
    await body();
  } catch (error) {
    const usage = error instanceof UsageError;
    const message = error instanceof Error ? error.message : String(error);
    console.error(`${name}: ${message}`);
    if (!usage && process.env.DEBUG && error instanceof Error) console.error(error.stack);
    process.exitCode = usage ? 2 : 1;
  }
}

/** Whether this module is the program node started (directly, or through a bin's symlink). */
export function isMain(moduleUrl: string): boolean {
  if (!process.argv[1]) return false;
  try {
    const { realpathSync } = process.getBuiltinModule('node:fs');
    const { fileURLToPath } = process.getBuiltinModule('node:url');
    return realpathSync(process.argv[1]) === fileURLToPath(moduleUrl);
  } catch {
    return false;
  }
}
