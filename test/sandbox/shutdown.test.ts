// A stopping sandbox (SIGTERM, as a rolling restart sends) must exit even while a client holds a
// connection open: `payment-gateway listen` long-polls the control API and polls again at once, so its
// connection is never idle at the moment the server closes. A newcomer found the sandbox alive 95 s
// after SIGTERM; it now closes connections as they turn idle and all of them after its grace.
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import net from 'node:net';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT, sandboxCredentials } from '../support/contract.ts';
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

/** The answers read from one connection, in order: status, Connection header, body (a chunked one's decoded). */
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
    let body = '';
    rest = rest.slice(end + 4);
    if (field('transfer-encoding')?.toLowerCase() === 'chunked') {
      // The control API's answers are chunked: chunks of hex size, CRLF, data, CRLF; the last of size 0.
      for (;;) {
        const line = rest.indexOf('\r\n');
        const size = Number.parseInt(rest.slice(0, line), 16);
        const data = rest.slice(line + 2, line + 2 + size);
        rest = rest.slice(line + 2 + size + 2);
        if (!size) break;
        body += data;
      }
    } else {
      const length = Number(field('content-length') ?? 0);
      body = rest.slice(0, length);
      rest = rest.slice(length);
    }
    answers.push({ status: Number(head[0]!.split(' ')[1]), connection: field('connection')?.toLowerCase(), body });
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

/** A long poll of the control API (the merchant's deliveries, up to 60 s), as HTTP/1.1 writes it. */
const longPollWire = (host: string) => {
  const { merchantUUID, apiKey } = sandboxCredentials();
  return (
    `GET /_sandbox/deliveries?waitSeconds=60 HTTP/1.1\r\nhost: ${host}\r\n` +
    `authorization: Basic ${btoa(`${merchantUUID}:${apiKey}`)}\r\n\r\n`
  );
};

/**
 * A control API call on a connection of its own, answered: sent after another client's request, it
 * says the sandbox has taken that request (it reads its connections' requests in turn).
 */
async function roundTrip(base: string) {
  const { merchantUUID, apiKey } = sandboxCredentials();
  const answer = await fetch(`${base}/_sandbox/deliveries?waitSeconds=0`, {
    headers: { authorization: `Basic ${btoa(`${merchantUUID}:${apiKey}`)}` },
  });
  expect(((await answer.json()) as { responseCode: number }).responseCode).toBe(0);
}

/**
 * A long poll sent on a connection of its own, under way when this returns; `answered` resolves with
 * what came back once the sandbox ends the connection.
 */
async function openLongPoll(base: string) {
  const { host, port } = new URL(base);
  const socket = net.connect(Number(port), '127.0.0.1');
  await once(socket, 'connect');
  let received = '';
  socket.on('data', (c: Buffer) => (received += c.toString('latin1')));
  socket.on('error', () => {});
  const answered = once(socket, 'close').then(() => answersIn(received));
  socket.write(longPollWire(host));
  await roundTrip(base);
  return { socket, answered };
}

/** `payment-gateway listen` with polls of 60 s, the longest: longer than the test's time-out. */
const listenArgs = (base: string) => [
  path.join(ROOT, 'cli/main.ts'),
  'listen',
  '--forward-to',
  'http://127.0.0.1:9/hooks',
  '--base',
  base,
  '--poll-seconds',
  '60',
];

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

  describe('a long poll of the control API (payment-gateway listen) does not hold a stop for its grace', () => {
    // Finding: a stop took 11 s, not 1.4 s, while a `listen` client was (or had been) connected. The
    // server keeps half-closed connections, so a gone client's socket stayed open (CLOSE-WAIT) and its
    // poll ran to its time-out; and a poll under way when the stop began held the stop until the
    // grace (PGW_SANDBOX_CLOSE_GRACE_MS) closed every connection. The grace here is 10 minutes and
    // each poll asks for 60 s: a test passes only if neither is waited for (within its own time-out).
    let sandbox: Awaited<ReturnType<typeof startSandboxProcess>>;
    const grace = { PGW_DB: ':memory:', PGW_SANDBOX_CLOSE_GRACE_MS: '600000' };

    it('a poll whose client ends its side of the connection is answered then, not at its time-out', async () => {
      sandbox = await startSandboxProcess(grace);
      stop.push(() => sandbox.child.kill('SIGKILL'));
      const poll = await openLongPoll(sandbox.base);
      // The client half-closes (RFC 9112 9.6): it has gone as far as the poll is concerned, and may still read.
      poll.socket.end();
      const answers = await poll.answered;
      expect(answers.map((a) => [a.status, JSON.parse(a.body)])).toEqual([[200, { responseCode: 0, deliveries: [] }]]);
    }, 30_000);

    it('a stop answers the polls under way at once, an empty batch with Connection: close, and exits', async () => {
      const polls = [await openLongPoll(sandbox.base), await openLongPoll(sandbox.base)];
      // A client that went away without a word: its socket destroyed, the sandbox's end half-open.
      const gone = await openLongPoll(sandbox.base);
      gone.socket.destroy();
      const exited = once(sandbox.child, 'exit');
      sandbox.child.kill('SIGTERM');
      for (const poll of polls)
        expect((await poll.answered).map((a) => [a.status, a.connection, JSON.parse(a.body)])).toEqual([
          [200, 'close', { responseCode: 0, deliveries: [] }],
        ]);
      const [code] = await exited;
      expect(code).toBe(0);
    }, 30_000);
  });

  it('exits on SIGTERM while a listen client long-polls it (and one was killed), and listen says it will try again', async () => {
    // The grace (10 s by default) set to 10 minutes and each poll 60 s: the sandbox exits within the
    // test's time-out only because the stop answers the long polls and does not wait for the killed client's poll.
    const sandbox = await startSandboxProcess({ PGW_DB: ':memory:', PGW_SANDBOX_CLOSE_GRACE_MS: '600000' });
    stop.push(() => sandbox.child.kill('SIGKILL'));
    const listen = spawn(process.execPath, listenArgs(sandbox.base), { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    stop.push(() => listen.kill('SIGKILL'));
    let said = '';
    listen.stdout!.on('data', (d: Buffer) => (said += d.toString()));
    // listen prints its first line once its first long poll is under way.
    await new Promise<void>((resolve) => {
      const check = () => (said.includes('Forwarding') ? resolve() : setTimeout(check, 100));
      check();
    });
    // A second listen client, killed while its poll is under way: its socket stays half-open at the sandbox.
    const killed = spawn(process.execPath, listenArgs(sandbox.base), { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    stop.push(() => killed.kill('SIGKILL'));
    let killedSaid = '';
    killed.stdout!.on('data', (d: Buffer) => (killedSaid += d.toString()));
    await until(() => killedSaid.includes('Forwarding'), 30_000, 100);
    // listen sends its first poll right after that line.
    await roundTrip(sandbox.base);
    killed.kill('SIGKILL');
    await once(killed, 'exit');
    const exited = once(sandbox.child, 'exit');
    sandbox.child.kill('SIGTERM');
    const [code] = await exited;
    expect(code).toBe(0);
    // The empty answer the stop gave is no error: listen polls again, finds the sandbox gone, and
    // says so as it does for a refused connection (it tries again, then gives up).
    await until(() => said.includes('listen: the sandbox did not answer'), 30_000, 100);
    const after = said
      .slice(said.indexOf('\n', said.indexOf('Forwarding')) + 1)
      .trim()
      .split('\n');
    expect(after[0]).toMatch(/^listen: the sandbox did not answer \(.*\); trying again in 1 s$/);
  }, 45_000);

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
