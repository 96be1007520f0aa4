// A stopping sandbox (SIGTERM, as a rolling restart sends) must exit even while a client holds a
// connection open: `payment-gateway listen` long-polls the control API and polls again at once, so its
// connection is never idle at the moment the server closes. A newcomer found the sandbox alive 95 s
// after SIGTERM; it now closes connections as they turn idle and all of them after its grace.
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import net from 'node:net';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../support/contract.ts';
import { alive } from '../support/children.ts';
import { startSandboxProcess } from '../support/sandbox-process.ts';
import { until } from '../support/until.ts';
import type { GatewayRequest } from '../../server-stubs/index.ts';
import { purchase, signed } from '../hardening/support.ts';

const stop: Array<() => void> = [];
afterAll(() => {
  for (const kill of stop) kill();
});

/** A request as HTTP/1.1 writes it, on a connection kept alive. */
const wire = (request: GatewayRequest, host: string, extra: Record<string, string> = {}) => {
  const body = Buffer.from(request.body as string);
  const headers = { ...request.headers, ...extra, host, 'content-length': String(body.length) };
  const head = Object.entries(headers)
    .filter(([, value]) => value !== undefined)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  return Buffer.concat([Buffer.from(`${request.verb} ${request.url} HTTP/1.1\r\n${head}\r\n`), body]);
};

/** The answers read from one connection, in order: status, Connection header, body. */
function answersIn(received: string): { status: number; connection: string | undefined; body: string }[] {
  const answers = [];
  let rest = received;
  while (rest.includes('\r\n\r\n')) {
    const end = rest.indexOf('\r\n\r\n');
    const head = rest.slice(0, end).split('\r\n');
    const field = (name: string) =>
      head
        .find((line) => line.toLowerCase().startsWith(`${name}:`))
        ?.slice(name.length + 1)
        .trim();
    const length = Number(field('content-length') ?? 0);
    answers.push({
      status: Number(head[0]!.split(' ')[1]),
      connection: field('connection')?.toLowerCase(),
      body: rest.slice(end + 4, end + 4 + length),
    });
    rest = rest.slice(end + 4 + length);
  }
  return answers;
}

/** Whether a new connection to the port is taken. */
const connects = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });

describe('stopping the sandbox', () => {
  it('answers a request that a keep-alive connection sends during the drain, with Connection: close, then ends the connection', async () => {
    // Finding (a shared sandbox's operator): answers during a stop said keep-alive, so clients sent their
    // next request on a connection the stop then closed, and it got no answer.
    const sandbox = await startSandboxProcess({ PGW_DB: ':memory:', PGW_SANDBOX_CLOSE_GRACE_MS: '30000' });
    stop.push(() => sandbox.child.kill('SIGKILL'));
    const { host, port } = new URL(sandbox.base);
    const socket = net.connect(Number(port), '127.0.0.1');
    await once(socket, 'connect');
    let received = '';
    let closed = false;
    socket.on('data', (c: Buffer) => (received += c.toString('latin1')));
    socket.on('error', () => {});
    socket.on('close', () => (closed = true));
    // A, under way when the stop comes: its head and all of its body but the last byte sent before it,
    // with Expect: 100-continue, so that the server's 100 Continue tells it has A's request (it waits
    // for the rest of the body). Its answer is then held 2 s (the latency scenario): it cannot be
    // written before B is read.
    const a = wire(signed('processCard', purchase({ transactionReferenceID: 'DRAIN-A' })), host, {
      'svc-sandbox-scenario': 'latency=2000',
      expect: '100-continue',
    });
    socket.write(a.subarray(0, -1));
    await until(() => received.startsWith('HTTP/1.1 100 Continue\r\n\r\n'), 30_000);
    const exited = once(sandbox.child, 'exit');
    sandbox.child.kill('SIGTERM');
    // The stop has begun once the sandbox takes no new connection.
    await until(async () => !(await connects(Number(port))), 30_000, 20);
    // A's last byte and B in one write, during the drain: B is read with A's end, before A can be
    // answered, however slow this machine is (no margin of time to win).
    socket.write(
      Buffer.concat([
        a.subarray(-1),
        wire(signed('processCard', purchase({ transactionReferenceID: 'DRAIN-B' })), host),
      ]),
    );
    await until(() => closed, 60_000, 50);
    const answers = answersIn(received).map((r) => [
      r.status,
      r.connection,
      r.status === 100 ? undefined : JSON.parse(r.body).transactionReferenceID,
    ]);
    expect(answers).toEqual([
      [100, undefined, undefined],
      [200, 'keep-alive', 'DRAIN-A'],
      [200, 'close', 'DRAIN-B'],
    ]);
    const [code] = await exited;
    expect(code).toBe(0);
  }, 120_000);

  it('exits on SIGTERM while a listen client long-polls it', async () => {
    // The grace shortened (PGW_SANDBOX_CLOSE_GRACE_MS, 10 s by default): the long poll outlasts either,
    // so the sandbox still exits only because the grace closes every connection once it is over.
    const sandbox = await startSandboxProcess({ PGW_DB: ':memory:', PGW_SANDBOX_CLOSE_GRACE_MS: '1000' });
    stop.push(() => sandbox.child.kill('SIGKILL'));
    const listen = spawn(
      process.execPath,
      [path.join(ROOT, 'cli/main.ts'), 'listen', '--forward-to', 'http://127.0.0.1:9/hooks', '--base', sandbox.base],
      { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    stop.push(() => listen.kill('SIGKILL'));
    let said = '';
    listen.stdout!.on('data', (d: Buffer) => (said += d.toString()));
    // listen prints its first line once its first long poll is under way.
    await new Promise<void>((resolve) => {
      const check = () => (said.includes('Forwarding') ? resolve() : setTimeout(check, 100));
      check();
    });
    const exited = once(sandbox.child, 'exit');
    sandbox.child.kill('SIGTERM');
    const [code] = await exited;
    expect(code).toBe(0);
  }, 60_000);

  it("started by npm, stops when npm's shell dies without passing the signal on", async () => {
    // `npm start` runs `sh -c "node …"`; a SIGTERM to npm reaches the shell, and Debian's dash dies
    // without passing it on. Here the shell is killed outright: the sandbox must not outlive it.
    const shell = spawn('sh', ['-c', `"${process.execPath}" sandbox/main.ts; echo shell-went-on`], {
      cwd: ROOT,
      env: { ...process.env, PGW_DB: ':memory:', PORT: '0', npm_lifecycle_event: 'start' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    stop.push(() => shell.kill('SIGKILL'));
    let said = '';
    shell.stdout!.on('data', (d: Buffer) => (said += d.toString()));
    await new Promise<void>((resolve) => {
      const check = () => (said.includes('Payment gateway sandbox on') ? resolve() : setTimeout(check, 100));
      check();
    });
    const sandboxPid = Number(execFileSync('pgrep', ['-P', String(shell.pid)], { encoding: 'utf8' }).trim());
    expect(sandboxPid).toBeGreaterThan(0);
    stop.push(() => {
      if (alive(sandboxPid)) process.kill(sandboxPid, 'SIGKILL');
    });
    shell.kill('SIGKILL');
    while (alive(sandboxPid)) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(alive(sandboxPid)).toBe(false);
  }, 60_000);
});
