// How the docs' samples of each language are run: the interpreter (or compiler) from Debian's packages
// that scripts/setup/interpreters.sh installs, whether this machine has it, and a runner that runs
// every sample of the language against a base URL, one after another in the operations' order (an
// operation may read what an earlier one made), each sample's output kept apart in <file>.out.
// PHP, Python and Ruby run all their samples in one interpreter process by a driver (a start costs
// more than a sample; a PHP sample declares closures, no function, so they can share one); C# is
// compiled once, every sample in one mcs call, and all run in one `mono` process by a small launcher
// (each sample is a program of its own in the docs, with a Main of its own).
import { execFile, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { csharpClass } from '../../scripts/generators/samples/csharp.ts';
import type { SampleLanguage } from '../../scripts/generators/samples/index.ts';
import { interpreters } from '../examples/interpreters.ts';

const run = promisify(execFile);

/** Runs the sample files in order, leaving each one's standard output in <file>.out and a failure in <file>.err. */
type RunAll = (files: string[], env: NodeJS.ProcessEnv) => Promise<void>;

interface Runner {
  /** Packages that bring it (scripts/setup/interpreters.sh). */
  packages: string;
  check: [string, string[]];
  extension: string;
  /** Readies the written files (C# compiles them). */
  prepare(dir: string, files: string[]): Promise<RunAll>;
}

// A liveness guard, not a timing check: a sample that hangs fails with what it printed.
const GUARD_MS = 120_000;

/** One interpreter process for every file, by a driver program given the files as arguments. */
function allInOneProcess(command: string, flags: string[], driver: string): RunAll {
  return async (files, env) => {
    await run(command, [...flags, driver, ...files], { env, timeout: GUARD_MS, maxBuffer: 1 << 24 });
  };
}

// Each sample as if run alone (`php file.php`): its own variables (a sample declares no function),
// what it echoes to <file>.out.
const PHP_DRIVER = `<?php
foreach (array_slice($argv, 1) as $path) {
    ob_start();
    try {
        (function () use ($path) {
            include $path;
        })();
    } catch (Throwable $e) {
        file_put_contents("$path.err", (string) $e);
    }
    file_put_contents("$path.out", ob_get_clean());
}
`;

// Each sample as if run alone (`python3 file.py`): its own globals, its standard output to <file>.out.
const PYTHON_DRIVER = `import io, runpy, sys, traceback
for path in sys.argv[1:]:
    with open(path + ".out", "wb") as out:
        sys.stdout = io.TextIOWrapper(out, encoding="utf-8")
        try:
            runpy.run_path(path, run_name="__main__")
        except BaseException:
            with open(path + ".err", "w") as err:
                traceback.print_exc(file=err)
        finally:
            sys.stdout.flush()
            sys.stdout.detach()
            sys.stdout = sys.__stdout__
`;

// Each sample as if run alone (\`ruby file.rb\`): loaded wrapped in a module of its own (its constants
// and methods apart from the others'), its standard output to <file>.out.
const RUBY_DRIVER = `ARGV.each do |path|
  File.open("#{path}.out", 'wb') do |out|
    $stdout = out
    begin
      load(path, true)
    rescue Exception => e
      File.write("#{path}.err", "#{e.class}: #{e.message}\\n#{e.backtrace.join("\\n")}")
    ensure
      $stdout = STDOUT
    end
  end
end
`;

/** Each interpreter's executable, asked once per test file (the hash vectors and the samples both run it). */
const executables = new Map<'php' | 'python' | 'ruby', string>();

/** The interpreter's own executable: a version manager's shim (pyenv's is a shell script) costs each start. */
function executable(language: 'php' | 'python' | 'ruby'): string {
  let known = executables.get(language);
  if (known === undefined) {
    known = askExecutable(language);
    executables.set(language, known);
  }
  return known;
}

function askExecutable(language: 'php' | 'python' | 'ruby'): string {
  const ask: Record<typeof language, string[]> = {
    php: ['-r', 'echo PHP_BINARY;'],
    python: ['-c', 'import sys; print(sys.executable)'],
    ruby: ['-e', 'print RbConfig.ruby'],
  };
  const { command } = interpreters[language];
  return spawnSync(command, ask[language], { encoding: 'utf8' }).stdout?.trim() || command;
}

const interpreted = (language: 'php' | 'python' | 'ruby', driver: [string[], string]): Runner => ({
  packages: interpreters[language].packages,
  check: [interpreters[language].command, interpreters[language].check],
  extension: interpreters[language].extension,
  prepare: async (dir) => {
    const command = executable(language);
    const file = path.join(dir, `driver.${interpreters[language].extension}`);
    writeFileSync(file, driver[1]);
    return allInOneProcess(command, driver[0], file);
  },
});

// Runs the samples named on its command line (Class=file) one after another in this one process,
// each one's standard output (file descriptor 1, which a sample writes through
// Console.OpenStandardOutput()) pointed at <file>.out while it runs.
const LAUNCHER = `using System;
using System.IO;
using System.Reflection;
using System.Runtime.InteropServices;
class Launcher
{
    [DllImport("libc")] static extern int dup(int fd);
    [DllImport("libc")] static extern int dup2(int fd, int to);

    static void Main(string[] args)
    {
        var stdout = dup(1);
        foreach (var arg in args)
        {
            var named = arg.Split(new[] { '=' }, 2);
            using (var output = new FileStream(named[1] + ".out", FileMode.Create))
            {
                dup2((int)output.SafeFileHandle.DangerousGetHandle(), 1);
                try { Type.GetType(named[0]).GetMethod("Main", BindingFlags.Static | BindingFlags.NonPublic).Invoke(null, null); }
                catch (Exception e) { File.WriteAllText(named[1] + ".err", e.ToString()); }
                finally { dup2(stdout, 1); }
            }
        }
    }
}
`;

export const runners: Record<SampleLanguage, Runner> = {
  php: interpreted('php', [['-d', 'display_errors=stderr'], PHP_DRIVER]),
  // python3 -c DRIVER_TEXT would do; a file keeps the traceback's lines readable.
  python: interpreted('python', [['-B'], PYTHON_DRIVER]),
  ruby: interpreted('ruby', [['-W0'], RUBY_DRIVER]),
  csharp: {
    packages: 'mono-mcs',
    check: ['mcs', ['--version']],
    extension: 'cs',
    prepare: async (dir, files) => {
      const launcher = path.join(dir, 'Launcher.cs');
      writeFileSync(launcher, LAUNCHER);
      const exe = path.join(dir, 'samples.exe');
      await run('mcs', ['-nologo', '-main:Launcher', `-out:${exe}`, launcher, ...files], { maxBuffer: 1 << 24 });
      return async (all, env) => {
        const named = all.map((file) => `${csharpClass(path.basename(file, '.cs'))}=${file}`);
        await run('mono', [exe, ...named], { env, timeout: GUARD_MS, maxBuffer: 1 << 24 });
      };
    },
  },
};

/** Why a language's samples cannot run here, or undefined when they can. */
export function missingRunner(language: SampleLanguage): string | undefined {
  const { check, packages } = runners[language];
  const probe = spawnSync(check[0], check[1], { encoding: 'utf8' });
  if (probe.error)
    return `${check[0]} is not installed (run scripts/setup/interpreters.sh, or apt-get install ${packages})`;
  if (probe.status !== 0)
    return `${check[0]} lacks what the samples need (apt-get install ${packages}): ${probe.stderr.trim()}`;
  return undefined;
}

/** What one sample printed (its answer), or how it failed. */
export interface SampleRun {
  out: Buffer;
  error?: string;
}

/** Writes each sample (file name: operationId) and runs them one after another against baseUrl. */
export async function runSamples(
  language: SampleLanguage,
  samples: { operationId: string; source: string }[],
  baseUrl: string,
): Promise<Map<string, SampleRun>> {
  const runner = runners[language];
  const dir = mkdtempSync(path.join(tmpdir(), `samples-${language}-`));
  const files = samples.map((s) => {
    const file = path.join(dir, `${s.operationId}.${runner.extension}`);
    writeFileSync(file, s.source);
    return file;
  });
  const runAll = await runner.prepare(dir, files);
  await runAll(files, { ...process.env, GATEWAY_URL: baseUrl });
  return new Map(
    samples.map((s, i) => {
      const file = files[i]!;
      const out = existsSync(`${file}.out`) ? readFileSync(`${file}.out`) : Buffer.alloc(0);
      const error = existsSync(`${file}.err`) ? readFileSync(`${file}.err`, 'utf8') || 'failed' : undefined;
      return [s.operationId, error === undefined ? { out } : { out, error }];
    }),
  );
}

/** Writes a program and runs it once, answering what it printed. */
export async function runProgram(language: SampleLanguage, source: string, name: string): Promise<string> {
  const runner = runners[language];
  const dir = mkdtempSync(path.join(tmpdir(), `vectors-${language}-`));
  const file = path.join(dir, `${name}.${runner.extension}`);
  writeFileSync(file, source);
  if (language === 'csharp') {
    const exe = path.join(dir, `${name}.exe`);
    await run('mcs', ['-nologo', `-out:${exe}`, file]);
    return (await run('mono', [exe])).stdout;
  }
  return (await run(executable(language as 'php' | 'python' | 'ruby'), [file])).stdout;
}
