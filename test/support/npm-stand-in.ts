// `npm run` for the guide walks (test/support/guide-walk.ts) at a fraction of npm's CPU. The guides'
// blocks run npm scripts some fifty times (`npm run -s cli -- …`, `npm start`); each npm start cost
// 0.25 to 0.35 s of CPU (npm itself, on the machine's Node) before the 0.07 s of the command it ran.
// A walk's session gets a shell function `npm` (npm-stand-in.sh) that runs each script through the
// real npm the first time this test file runs it, proving that the script exists and works under
// npm, and every later run of it as npm runs it: the script's command line from package.json under
// `sh -c` with the arguments after `--` appended, in the package's folder, with the PATH and the npm_*
// variables npm gives a script (read once from npm itself, `npm run env`), npm's banner unless `-s`,
// and the script's exit code. Anything else is the real npm: a form other than `npm start` or
// `npm run [-s] NAME [-- ARGS…]` (arguments without `--`, which npm may read as its own options), a
// name that is no script (npm's refusal), a script with a pre or post script, every other npm command.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

/** Bash's $'…' quoting: any text, as one word. */
export const bashWord = (text: string): string =>
  `$'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'").replace(/\n/g, '\\n')}'`;

export interface NpmScriptEnv {
  /** The variables npm sets or changes for a script (npm_*, NODE, COLOR, …), but the per-run ones. */
  vars: Record<string, string>;
  /** What npm puts before the caller's PATH (the package's node_modules/.bin and its ancestors'). */
  pathBefore: string;
}

/** What npm gives a script run in `root` from `env`, as npm's own `npm run env` shows it. */
export async function npmScriptEnv(root: string, env: NodeJS.ProcessEnv): Promise<NpmScriptEnv> {
  const { stdout } = await promisify(execFile)('npm', ['run', '-s', 'env', '--', '-0'], {
    cwd: root,
    env,
    encoding: 'utf8',
  });
  // Set per run; npm_config_loglevel is `-s`'s (the stand-in sets it for `-s`, else passes on the caller's).
  const perRun = new Set([
    '_',
    'PWD',
    'INIT_CWD',
    'npm_lifecycle_event',
    'npm_lifecycle_script',
    'npm_config_loglevel',
  ]);
  const vars: Record<string, string> = {};
  let pathBefore: string | undefined;
  for (const entry of stdout.split('\0').filter(Boolean)) {
    const at = entry.indexOf('=');
    const [name, value] = [entry.slice(0, at), entry.slice(at + 1)];
    if (perRun.has(name)) continue;
    if (name === 'PATH') {
      const caller = env.PATH ?? '';
      if (!value.endsWith(caller)) throw new Error(`npm's PATH does not end with the caller's: ${value}`);
      pathBefore = value.slice(0, value.length - caller.length);
    } else if (env[name] !== value) vars[name] = value;
  }
  if (pathBefore === undefined) throw new Error(`npm run env printed no PATH:\n${stdout}`);
  return { vars, pathBefore };
}

const FUNCTION = readFileSync(path.join(import.meta.dirname, 'npm-stand-in.sh'), 'utf8');

/**
 * The bash text that defines the `npm` function: `root` the package, `once` the folder where the
 * first run of each script leaves its mark (one per test file, shared by its walks).
 */
export function npmStandIn(root: string, once: string, npmEnv: NpmScriptEnv): string {
  const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as {
    name: string;
    version: string;
    scripts?: Record<string, string>;
  };
  const table = Object.entries(pkg.scripts ?? {})
    .map(([name, line]) => `[${bashWord(name)}]=${bashWord(line)}`)
    .join(' ');
  const vars = Object.entries(npmEnv.vars).map(([name, value]) => bashWord(`${name}=${value}`));
  return [
    `declare -A PGW_NPM_SCRIPTS=(${table})`,
    `PGW_NPM_VARS=(${vars.join(' ')})`,
    `PGW_NPM_ROOT=${bashWord(root)} PGW_NPM_ONCE=${bashWord(once)} PGW_NPM_ID=${bashWord(`${pkg.name}@${pkg.version}`)}`,
    `PGW_NPM_PATH_BEFORE=${bashWord(npmEnv.pathBefore)}`,
    FUNCTION,
  ].join('\n');
}
