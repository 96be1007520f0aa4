// Vitest's global set-up: servers several test files use (Prism serving the plain mock, a headless
// Chromium), started once per run, on demand, by this process (vitest's own), and stopped when the
// run ends. A test file asks for one by name (test/support/shared-servers.ts) over a Unix socket in
// the run's folder; the first file to ask starts it, the others get the same one. The servers are
// this process's children: their CPU is the run's (npm run test:times counts it outside the files),
// and none outlives the run. A run that needs none starts none.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { rmSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { mkdtempSync } from 'node:fs';
import type { TestProject } from 'vitest/node';
import { startPrism } from '../../mock/run.ts';
import { chromiumServer } from './browser.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The Unix socket test/support/shared-servers.ts asks for a shared server on. */
    sharedServers: string;
  }
}

/** A shared server: what a file needs to reach it (JSON), and how it is stopped. */
interface Started {
  value: unknown;
  stop: () => unknown;
}

const kinds: Record<string, (folder: string) => Promise<Started>> = {
  /** Prism serving the whole contract, as `npm run mock` starts it, without the front: each file puts its own before it. */
  prism: async () => {
    const { prism, port } = await startPrism();
    return { value: { port }, stop: () => prism.kill() };
  },
  /** Headless Chromium (test/support/browser.ts's flags, loopback only), for playwright's connect. */
  chromium: async () => {
    const server = await chromiumServer();
    return { value: { wsEndpoint: server.wsEndpoint() }, stop: () => server.close() };
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
    return { value: { socket }, stop: () => server.kill() };
  },
};

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
