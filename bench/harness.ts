// Starting a benchmark server in its own process and checking that it answers the whole mix as the
// contract says, before any load: shared by npm run bench and by the test that keeps the servers
// honest, so that no server is measured while refusing quickly.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { mix as floorMix } from './floor.ts';

const HERE = path.dirname(fileURLToPath(import.meta.url));

/** The same mix for every server (bench/floor.ts), as autocannon sends it. */
export const mix = floorMix.map((m) => ({
  op: m.op,
  request: { method: m.verb as 'GET' | 'POST' | 'PUT' | 'PATCH', path: m.url, headers: m.headers, body: m.text },
}));

export interface Started {
  child: ChildProcess;
  port: number;
  startedAt: number;
  readyAt: number;
  /** What the server has written to stderr so far (also passed on to ours): a library's warnings show here. */
  stderr: () => string;
}

/** Launches bench/<script> on a free port; resolves when it prints `ready <port>`. */
export function start(script: string, env: Record<string, string> = {}): Promise<Started> {
  const startedAt = performance.now();
  const child = spawn(process.execPath, [path.join(HERE, script), '0'], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, NODE_ENV: 'production', ...env },
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
    process.stderr.write(chunk);
  });
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      const m = /ready (\d+)/.exec(chunk.toString());
      if (m) resolve({ child, port: Number(m[1]), startedAt, readyAt: performance.now(), stderr: () => stderr });
    });
    child.on('exit', (code) => reject(new Error(`${script} exited with ${code}`)));
  });
}

/** Sends every request of the mix once: each must get its operation's status and a result, not a refusal. */
export async function check(port: number): Promise<{ ok: number; total: number; failures: string[] }> {
  const failures: string[] = [];
  for (const { op, request } of mix) {
    const response = await fetch(`http://127.0.0.1:${port}${request.path}`, {
      method: request.method,
      headers: request.headers,
      body: request.body ?? null,
    });
    const body = await response.text();
    if (response.status !== op.status || !body.includes('"responseCode"') || /"responseCode":"?-/.test(body))
      failures.push(`${op.operationId}: ${response.status} ${body.slice(0, 120)}`);
  }
  return { ok: mix.length - failures.length, total: mix.length, failures };
}
