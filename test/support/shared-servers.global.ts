// Vitest's global set-up: servers several test files use (Prism serving the plain mock, a headless
// Chromium), started once per run, on demand, by this process (vitest's own), and stopped when the
// run ends. A test file asks for one by name (test/support/shared-servers.ts) over a Unix socket in
// the run's folder; the first file to ask starts it, the others get the same one. The servers are
// this process's children: their CPU is the run's (npm run test:times counts it outside the files,
// and reads each one's process tree before it is stopped, Chromium's renderers included, which the
// run's own figure misses: nobody waits for them), and none outlives the run. A run that needs none
// starts none.
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { mkdtempSync } from 'node:fs';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The Unix socket test/support/shared-servers.ts asks for a shared server on. */
    sharedServers: string;
  }
}

/** A shared server: what a file needs to reach it (JSON), how it is stopped, and its process. */
interface Started {
  value: unknown;
  stop: () => unknown;
  /** The server's process id, whose tree's CPU is read before it is stopped (processTreeCpu). */
  pid: number | undefined;
}

// Each kind loads what it runs when it is first asked for, not when vitest loads this file: a run that
// starts no Chromium does not load playwright-core into vitest's process (about 1 s of its CPU, with
// the module test/support/browser.ts took the checkout's root from, which compiles the whole document's
// schemas with ajv).
/** How a child server is stopped: killed and waited for, so that its CPU counts in the run's (npm run test:times). */
function waitedFor(child: ChildProcess): Pick<Started, 'stop' | 'pid'> {
  const exited = once(child, 'exit');
  return {
    stop: () => {
      child.kill();
      return exited;
    },
    pid: child.pid,
  };
}

const kinds: Record<string, (folder: string) => Promise<Started>> = {
  /** Prism serving the whole contract, as `npm run mock` starts it, without the front: each file puts its own before it. */
  prism: async () => {
    const { startPrism } = await import('../../mock/run.ts');
    const { prism, port } = await startPrism();
    return { value: { port }, ...waitedFor(prism) };
  },
  /** Headless Chromium (test/support/browser.ts's flags, loopback only), for playwright's connect. */
  chromium: async () => {
    const { chromiumServer } = await import('./browser.ts');
    const server = await chromiumServer();
    return { value: { wsEndpoint: server.wsEndpoint() }, stop: () => server.close(), pid: server.process().pid };
  },
  /** One TypeScript compiler for every tsc check of the run (test/support/tsc-server.ts), on a socket of its own. */
  tsc: async (folder: string) => {
    const socket = path.join(folder, 'tsc.sock');
    const server = spawn(process.execPath, [path.join(import.meta.dirname, 'tsc-server.ts'), socket], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let said = '';
    server.stderr!.on('data', (c: Buffer) => (said += c));
    // Ready when it says it listens; a server that ends first tells why.
    const ready = new Promise<void>((resolve) =>
      server.stdout!.on('data', (c: Buffer) => {
        said += c;
        if (said.includes('listening\n')) resolve();
      }),
    );
    const ended = once(server, 'exit').then(([code]) => {
      throw new Error(`tsc-server ended (${code}) before it listened:\n${said}`);
    });
    await Promise.race([ready, ended]);
    ended.catch(() => undefined);
    return { value: { socket }, ...waitedFor(server) };
  },
};

/** User + system ticks of /proc/PID/stat: the process's own (utime, stime) and its waited-for children's (cutime, cstime). */
function statOf(pid: string): { ppid: string; ticks: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces, closed by the last ')'): ppid is field 4, utime 14.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return {
      ppid: fields[1]!,
      ticks: Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]),
    };
  } catch {
    return undefined;
  }
}

/**
 * CPU seconds (user + system) of a process and every descendant of it (Linux /proc): each live one's own
 * and its ended, waited-for children's. Chromium's renderers and Prism's workers are the server's too.
 * Undefined without /proc.
 */
function processTreeCpu(root: number): number | undefined {
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return undefined;
  }
  const stats = new Map<string, { ppid: string; ticks: number }>();
  for (const pid of pids) {
    const stat = statOf(pid);
    if (stat) stats.set(pid, stat);
  }
  const inTree = (pid: string): boolean => {
    for (let at: string | undefined = pid; at && at !== '0'; at = stats.get(at)?.ppid)
      if (at === String(root)) return true;
    return false;
  };
  if (!stats.has(String(root))) return undefined;
  let ticks = 0;
  for (const [pid, stat] of stats) if (inTree(pid)) ticks += stat.ticks;
  return ticks / 100;
}

/**
 * Where the CPU counted outside the files went, for npm run test:times (test-results/shared-servers-cpu.json):
 * each shared server's process tree, read just before it is stopped, and vitest's own process (without
 * its children: the workers and these servers).
 */
function writeCpu(root: string, servers: Record<string, number | null>): void {
  const { user, system } = process.cpuUsage();
  const file = path.join(root, 'test-results', 'shared-servers-cpu.json');
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify({ vitest: (user + system) / 1e6, servers }, null, 2)}\n`);
}

export default function setup(project: TestProject): () => Promise<void> {
  const folder = mkdtempSync(path.join(os.tmpdir(), 'pgw-shared-'));
  const socket = path.join(folder, 'servers.sock');
  const started = new Map<string, Promise<Started>>();
  const server = http.createServer((req, res) => {
    const name = (req.url ?? '/').slice(1);
    const start = kinds[name];
    if (!start) return void res.writeHead(404).end(`no shared server named '${name}'`);
    let running = started.get(name);
    if (!running) {
      running = start(folder);
      started.set(name, running);
    }
    running.then(
      (s) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(s.value)),
      (error: unknown) => res.writeHead(500).end(String((error as Error).stack ?? error)),
    );
  });
  server.listen(socket);
  project.provide('sharedServers', socket);
  return async () => {
    server.close();
    // null where no figure could be read (a start that failed): JSON keeps it, the report prints '?'.
    const servers: Record<string, number | null> = {};
    for (const [name, running] of started) {
      const pid = await running.then(
        (s) => s.pid,
        () => undefined,
      );
      // A server whose process is gone by now (it died during the run) has no figure either.
      servers[name] = (pid === undefined ? undefined : processTreeCpu(pid)) ?? null;
    }
    writeCpu(project.config.root, servers);
    await Promise.all(
      [...started.values()].map((running) =>
        running.then(
          (s) => s.stop(),
          () => undefined,
        ),
      ),
    );
    rmSync(folder, { recursive: true, force: true });
  };
}
