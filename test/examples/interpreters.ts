// The interpreters the examples in examples/<lang>/ run on, and whether this machine has them with
// the libraries the examples use. scripts/setup/interpreters.sh installs them from Debian's packages
// (.ci/run calls it before the tests); where they are missing, the tests of that language skip and
// say why rather than fail on a machine that cannot have them.
import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import { ROOT } from '../support/contract.ts';

export type Language = 'php' | 'python' | 'ruby';

interface Interpreter {
  command: string;
  /** Exits 0 when the interpreter has what the example needs. */
  check: string[];
  /** The Debian packages that bring it (what scripts/setup/interpreters.sh installs). */
  packages: string;
  extension: string;
  /** The hash recipes its example signs with, in the form the public clients of its language compute them. */
  signsWith: string[];
}

export const interpreters: Record<Language, Interpreter> = {
  php: {
    command: 'php',
    check: ['-r', 'exit(function_exists("curl_init") && class_exists("SimpleXMLElement") ? 0 : 1);'],
    packages: 'php-cli php-curl php-xml',
    extension: 'php',
    signsWith: ['transaction current', 'query current', 'settlement current'],
  },
  python: {
    command: 'python3',
    check: ['-c', 'import urllib.request, xml.etree.ElementTree, hashlib'],
    packages: 'python3',
    extension: 'py',
    signsWith: ['transaction legacy', 'query legacy', 'settlement current'],
  },
  ruby: {
    command: 'ruby',
    check: ['-e', 'require "net/http"; require "rexml/document"; require "digest/md5"'],
    packages: 'ruby',
    extension: 'rb',
    signsWith: ['transaction legacy', 'query legacy', 'settlement current'],
  },
};

export const LANGUAGES = Object.keys(interpreters) as Language[];

/** Why a language's examples cannot run here, or undefined when they can. */
export function missing(language: Language): string | undefined {
  const { command, check, packages } = interpreters[language];
  const run = spawnSync(command, check, { encoding: 'utf8' });
  if (run.error)
    return `${command} is not installed (run scripts/setup/interpreters.sh, or apt-get install ${packages})`;
  if (run.status !== 0)
    return `${command} lacks what examples/${language} needs (apt-get install ${packages}): ${run.stderr.trim()}`;
  return undefined;
}

/** Runs examples/<language>/<script> with arguments, input on stdin and environment; answers its parsed JSON output. */
export function runExample(
  language: Language,
  script: string,
  args: string[],
  options: { input?: string; env?: Record<string, string>; timeoutMs?: number } = {},
): Promise<unknown> {
  // A liveness guard, not a timing check: a server that holds the connection fails the test
  // with what the client printed, instead of each client waiting out its own HTTP timeout.
  const timeoutMs = options.timeoutMs ?? 20_000;
  const { command, extension } = interpreters[language];
  const file = path.join(ROOT, 'examples', language, `${script}.${extension}`);
  return new Promise((resolve, reject) => {
    // Asynchronous: the gateway the example calls may run in this very process.
    const child = spawn(command, [file, ...args], { env: { ...process.env, ...options.env } });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const guard = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${language} ${script} ${args.join(' ')} had no answer within ${timeoutMs} ms:\n${err}${out}`));
    }, timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(guard);
      if (code !== 0) return reject(new Error(`${language} ${script} ${args.join(' ')} exited ${code}:\n${err}${out}`));
      try {
        resolve(JSON.parse(out));
      } catch {
        reject(new Error(`${language} ${script} printed no JSON:\n${out}${err}`));
      }
    });
    child.stdin.end(options.input ?? '');
  });
}
