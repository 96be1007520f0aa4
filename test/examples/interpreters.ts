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

/**
 * Runs an example's script once for each argument list given to it, in one interpreter started once:
 * a start of Python or Ruby costs more than the operation it runs (about 0.15 s of CPU each, some 80
 * of them in test/examples/clients.test.ts). The script is run anew each time, as its own program
 * (Python's runpy as __main__, Ruby's load), with sys.argv / ARGV set, what it prints captured, and
 * its exit (sys.exit, abort) and any error told; the modules it imports are loaded once. PHP starts in
 * a hundredth of a second: it runs each time in a process of its own, as runExample runs it.
 */
const DRIVERS: Partial<Record<Language, string[]>> = {
  python: [
    '-c',
    `import contextlib, io, json, os, runpy, sys, traceback
script = sys.argv[1]
sys.path.insert(0, os.path.dirname(script))
answers = sys.stdout
for line in sys.stdin:
    sys.argv = [script] + json.loads(line)
    out, err, status = io.StringIO(), io.StringIO(), 0
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            runpy.run_path(script, run_name='__main__')
    except SystemExit as e:
        if e.code not in (None, 0):
            status = e.code if isinstance(e.code, int) else 1
            if not isinstance(e.code, int):
                err.write(str(e.code))
    except BaseException:
        status = 1
        err.write(traceback.format_exc())
    answers.write(json.dumps({'status': status, 'out': out.getvalue(), 'err': err.getvalue()}) + '\\n')
    answers.flush()`,
  ],
  ruby: [
    '-e',
    `require 'json'
require 'stringio'
script = ARGV.shift
answers = STDOUT
answers.sync = true
STDIN.each_line do |line|
  ARGV.replace(JSON.parse(line))
  out = StringIO.new
  err = StringIO.new
  status = 0
  begin
    $stdout = out
    $stderr = err
    load script
  rescue SystemExit => e
    status = e.status
  rescue Exception => e
    status = 1
    err.puts(e.full_message(highlight: false))
  ensure
    $stdout = STDOUT
    $stderr = STDERR
  end
  answers.puts(JSON.generate({ status: status, out: out.string, err: err.string }))
end`,
  ],
};

export interface ExampleSession {
  /** One run of the script with these arguments: its parsed JSON output, as runExample answers it. */
  run(args: string[], timeoutMs?: number): Promise<unknown>;
  close(): Promise<void>;
}

export function exampleSession(language: Language, script: string, env: Record<string, string>): ExampleSession {
  const driver = DRIVERS[language];
  if (!driver)
    return {
      run: (args, timeoutMs) => runExample(language, script, args, { env, ...(timeoutMs ? { timeoutMs } : {}) }),
      close: async () => {},
    };
  const { command, extension } = interpreters[language];
  const file = path.join(ROOT, 'examples', language, `${script}.${extension}`);
  const child = spawn(command, [...driver, file], { env: { ...process.env, ...env } });
  const waiting: ((answer: { status: number; out: string; err: string } | Error) => void)[] = [];
  let buffered = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => {
    buffered += d.toString();
    for (let end = buffered.indexOf('\n'); end >= 0; end = buffered.indexOf('\n')) {
      const line = buffered.slice(0, end);
      buffered = buffered.slice(end + 1);
      waiting.shift()?.(JSON.parse(line));
    }
  });
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  child.on('close', (code) => {
    for (const answer of waiting.splice(0))
      answer(new Error(`the ${language} driver of ${script} ended (${code}):\n${stderr}${buffered}`));
  });
  child.stdin.on('error', () => {}); // a driver that ended is told by 'close'
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  return {
    run: (args, timeoutMs = 20_000) =>
      new Promise((resolve, reject) => {
        const what = `${language} ${script} ${args.join(' ')}`;
        // A liveness guard, not a timing check (as runExample's): the session is ended with it.
        const guard = setTimeout(() => {
          child.kill('SIGKILL');
          reject(new Error(`${what} had no answer within ${timeoutMs} ms:\n${stderr}`));
        }, timeoutMs);
        waiting.push((answer) => {
          clearTimeout(guard);
          if (answer instanceof Error) return reject(answer);
          if (answer.status !== 0)
            return reject(new Error(`${what} exited ${answer.status}:\n${answer.err}${answer.out}`));
          try {
            resolve(JSON.parse(answer.out));
          } catch {
            reject(new Error(`${what} printed no JSON:\n${answer.out}${answer.err}`));
          }
        });
        child.stdin.write(`${JSON.stringify(args)}\n`);
      }),
    // Ended and waited for, so that its CPU is counted with the file's (test:times).
    close: () => {
      child.stdin.end();
      return exited;
    },
  };
}
