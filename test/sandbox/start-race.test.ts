// Two `npm start`s on the same new SQLite database and the same port (a supervisor that started two,
// a user who pressed enter twice). The port check used to let the port go again (listen, close) and
// listen for real only once the store had opened: the second instance could take the port in
// between, and the first was refused after it had made the database and the key file the second was
// storing cards under. The check now holds the port until the sandbox's server takes it over, so
// that moment is gone: here another instance tries to take the port while the start opens its
// store (inside createSandbox, between the check and the listen), and cannot; a request sent then is
// answered 503, Retry-After 1, and the start goes on to serve on that port.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { once } from 'node:events';
import { afterAll, expect, it, vi } from 'vitest';
import type { Server } from 'node:http';
import type { createSandbox as Create } from '../../sandbox/index.ts';

type Running = Awaited<ReturnType<typeof Create>>;
/** Runs as the start opens its store, between its port check and its listen; and what the start made. */
const race: { whileStarting?: () => Promise<void>; sandbox?: Running; server?: Server } = {};
vi.mock('../../sandbox/index.ts', async (original) => {
  const real = await original<typeof import('../../sandbox/index.ts')>();
  return {
    ...real,
    createSandbox: async (...args: Parameters<typeof Create>) => {
      await race.whileStarting?.();
      const sandbox = await real.createSandbox(...args);
      race.sandbox = sandbox;
      const server = sandbox.server;
      return {
        ...sandbox,
        server: () => {
          race.server = server();
          return race.server;
        },
      };
    },
  };
});

const dir = mkdtempSync(path.join(os.tmpdir(), 'pgw-start-race-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function freePort(): Promise<number> {
  const probe = net.createServer().listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const { port } = probe.address() as net.AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

it('a start holds its port from the check to the listen: another instance cannot take it meanwhile', async () => {
  const file = path.join(dir, 'data', 'new.db');
  const port = await freePort();
  const saved = { ...process.env };
  for (const name of Object.keys(process.env))
    if (/^(PORT|HOST|PGW_|npm_lifecycle_event$)/.test(name)) delete process.env[name];
  const signals = { SIGINT: process.listeners('SIGINT'), SIGTERM: process.listeners('SIGTERM') };
  const { main } = await import('../../sandbox/main.ts');
  let taken: NodeJS.ErrnoException | undefined;
  let meanwhile: Response | undefined;
  let formMeanwhile: { status: number; type: string | null; body: string } | undefined;
  race.whileStarting = async () => {
    // The other instance tries to take the port.
    const other = net.createServer();
    taken = await new Promise<NodeJS.ErrnoException | undefined>((resolve) => {
      other.once('error', resolve);
      other.listen(port, '127.0.0.1', () => other.close(() => resolve(undefined)));
    });
    // A client meanwhile (nothing answered it before: the port was free).
    meanwhile = await fetch(`http://127.0.0.1:${port}/`).catch(() => undefined);
    // A form/XML client meanwhile: the gateway's -4 in its own wire format, not JSON.
    const form = await fetch(`http://127.0.0.1:${port}/post`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'svc-api-version': '2.0' },
      body: 'method=processCard',
    }).catch(() => undefined);
    formMeanwhile = form && { status: form.status, type: form.headers.get('content-type'), body: await form.text() };
  };
  const log = vi.spyOn(console, 'log').mockImplementation(() => {});
  try {
    await main('payment-gateway-sandbox', ['--db', file, '--port', String(port), '--quiet']);
  } finally {
    process.env = saved;
    log.mockRestore();
    for (const signal of ['SIGINT', 'SIGTERM'] as const)
      for (const listener of process.listeners(signal))
        if (!signals[signal].includes(listener)) process.removeListener(signal, listener);
  }
  expect(taken?.code).toBe('EADDRINUSE');
  expect(meanwhile?.status).toBe(503);
  expect(meanwhile?.headers.get('retry-after')).toBe('1');
  expect(await meanwhile?.json()).toMatchObject({
    responseCode: '-4',
    responseMessage: 'The sandbox is starting: retry after 1 s',
  });
  expect(formMeanwhile).toMatchObject({ status: 503, type: expect.stringContaining('xml') });
  expect(formMeanwhile?.body).toContain('<responseCode>-4</responseCode>');
  expect(formMeanwhile?.body).toContain('The sandbox is starting: retry after 1 s');
  // The start serves on that port, on the database and key file it made.
  const server = race.server!;
  try {
    expect((server.address() as net.AddressInfo).port).toBe(port);
    const health = await fetch(`http://127.0.0.1:${port}/_sandbox/health`);
    expect(health.status).toBe(200);
    expect(existsSync(`${file}.key`)).toBe(true);
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await race.sandbox!.close();
  }
});

it('a start refused once its port is held lets the port go', async () => {
  const port = await freePort();
  const saved = { ...process.env };
  for (const name of Object.keys(process.env)) if (/^(PORT|HOST|PGW_)/.test(name)) delete process.env[name];
  // Refused inside createSandbox (a value read there), after the port check.
  process.env.PGW_SANDBOX_MAX_CONNECTIONS_PER_CLIENT = '0';
  delete race.whileStarting;
  const { main } = await import('../../sandbox/main.ts');
  try {
    await expect(
      main('payment-gateway-sandbox', ['--db', ':memory:', '--port', String(port), '--quiet']),
    ).rejects.toThrow(/PGW_SANDBOX_MAX_CONNECTIONS_PER_CLIENT/);
  } finally {
    process.env = saved;
  }
  const again = net.createServer();
  await new Promise<void>((resolve, reject) => {
    again.once('error', reject);
    again.listen(port, '127.0.0.1', resolve);
  });
  await new Promise((resolve) => again.close(resolve));
});
