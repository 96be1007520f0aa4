// Starting a benchmark server in its own process and checking that it answers the whole mix as the
// contract says, before any load: shared by npm run bench and by the test that keeps the servers
// honest, so that no server is measured while refusing quickly.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildRequest, operation, requestExamples, sandbox } from '../contract/index.ts';
import { protocols } from '../generated/protocols.ts';
import { scenarios } from '../generated/scenarios.ts';
import { mix as floorMix } from './floor.ts';

const HERE = path.dirname(fileURLToPath(import.meta.url));

/** The same mix for every server (bench/floor.ts), as autocannon sends it. */
export const mix = floorMix.map((m) => ({
  op: m.op,
  request: { method: m.verb as 'GET' | 'POST' | 'PUT' | 'PATCH', path: m.url, headers: m.headers, body: m.text },
}));
export type Mix = typeof mix;

/**
 * The wire formats side by side (docs/WIRE-FORMATS.md), by protocol id: the operations served in
 * every protocol (the form/XML mode's paths), their example requests in the spec's own (as in the mix)
 * and the same bodies written in each other protocol.
 */
const multi = mix.filter((m) => m.op.protocols.length === protocols.all.length);
export const wireMixes: Record<string, Mix> = Object.fromEntries(
  protocols.all.map((protocol) => [
    protocol.id,
    protocol === protocols.canonical
      ? multi
      : multi.map(({ op }) =>
          entryOf(op, buildRequest(op, { body: requestExamples(op)[0]!.value, wire: protocol.id })),
        ),
  ]),
);

/** A built request as autocannon sends it. */
function entryOf(op: Mix[number]['op'], r: ReturnType<typeof buildRequest>): Mix[number] {
  return {
    op,
    request: {
      method: 'POST' as const,
      path: r.url,
      headers: r.headers as Record<string, string>,
      body: r.body as string,
    },
  };
}

/**
 * A request naming a scenario beside the same request naming none (x-sandbox-scenarios), on the
 * sandbox: a card purchase and a BIN query from their examples, signed; the scenario each names is
 * its own outcome (approved, ok), so that both do the same work but the scenario's.
 */
const SCENARIO_OPS = [
  ['processCard', 'approved'],
  ['queryBIN', 'ok'],
] as const;
const scenarioMix = (named: boolean): Mix =>
  SCENARIO_OPS.map(([id, outcome]) => {
    const op = operation(id);
    const r = buildRequest(op, {
      body: requestExamples(op)[0]!.value,
      signBody: true,
      ...(named ? { headers: { [scenarios.header]: outcome } } : {}),
    });
    return entryOf(op, r);
  });
export const scenarioMixes: Record<'plain' | 'named', Mix> = { plain: scenarioMix(false), named: scenarioMix(true) };

export interface Started {
  child: ChildProcess;
  port: number;
  startedAt: number;
  readyAt: number;
  /** What the server has written to stderr so far (also passed on to ours): a library's warnings show here. */
  stderr: () => string;
}

/**
 * What a cold-start server (servers/cold-start.js) is launched with: the account the mix is signed with,
 * as a deployed server has its accounts from its own store, so that the launch does not read the spec
 * for it (about 10 ms of its CPU, no part of what the package costs).
 */
export const coldStartEnv: Record<string, string> = {
  PGW_BENCH_ACCOUNT: JSON.stringify({
    merchantUUID: sandbox.merchantUUID,
    apiKey: sandbox.apiKey,
    passphrase: sandbox.passphrase,
  }),
};

/** Launches bench/<script> (or an absolute path) on a free port; resolves when it prints `ready <port>`. */
export function start(script: string, env: Record<string, string> = {}): Promise<Started> {
  const startedAt = performance.now();
  const child = spawn(process.execPath, [path.resolve(HERE, script), '0'], {
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
export async function check(
  port: number,
  requests: Mix = mix,
): Promise<{ ok: number; total: number; failures: string[] }> {
  const failures: string[] = [];
  for (const { op, request } of requests) {
    const response = await fetch(`http://127.0.0.1:${port}${request.path}`, {
      method: request.method,
      headers: request.headers,
      body: request.body ?? null,
    });
    const body = await response.text();
    const answeredIn = protocols.answeredIn(response.headers.get('content-type') ?? undefined);
    const code = answeredIn?.responseCode(body);
    // An answer in another protocol than the request's is no answer of its mode (JSON to a form).
    const wrongMode = answeredIn !== protocols.choose(request.headers, protocols.servedAt(op.path));
    if (response.status !== op.status || code === undefined || Number(code) < 0 || wrongMode)
      failures.push(`${op.operationId}: ${response.status} ${body.slice(0, 120)}`);
  }
  return { ok: requests.length - failures.length, total: requests.length, failures };
}

/**
 * A process's CPU time so far, in ms (user + system, from /proc: Linux), 0 where it cannot be read.
 * What a server spends per answered request does not change with the machine's other load, where its
 * throughput does.
 */
export function processCpuMs(pid: number | undefined): number {
  if (pid === undefined || !existsSync(`/proc/${pid}/stat`)) return 0;
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10; // USER_HZ is 100 on Linux
}
