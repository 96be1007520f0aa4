// Finding: one client holding a thousand idle connections made other clients fail for seconds: one
// global cap (maxConnections), no share per client. Each client address now holds at most its share
// (maxConnectionsPerClient); whatever one client opens, every other client is served. Clients are
// loopback addresses 127.0.0.2.. (the server listens on 127.0.0.1; a socket picks its own with localAddress).
import { once } from 'node:events';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createGateway, createNodeServer } from '../../server-stubs/index.ts';
import { accounts, echoHandlers } from '../fixtures/example-handlers.ts';
import { until } from '../support/until.ts';

const gateway = createGateway({ handlers: echoHandlers(), accounts });

/**
 * Opens n idle connections from this address; resolves once each is connected or refused, and the
 * ones the server closes are closed (or, before the fix, after 5 s of none closing).
 */
async function hoard(port: number, localAddress: string, n: number, share: number): Promise<net.Socket[]> {
  const sockets = Array.from({ length: n }, () => net.connect({ port, host: '127.0.0.1', localAddress }));
  await Promise.all(
    sockets.map(
      (s) =>
        new Promise<void>((resolve) => {
          s.once('connect', () => resolve());
          s.once('error', () => resolve());
          s.once('close', () => resolve());
        }),
    ),
  );
  await until(() => sockets.filter((s) => !s.destroyed).length <= share, 5000);
  return sockets;
}

/** One request from this address, on a connection of its own: its status, or the error that ended it. */
function ask(port: number, localAddress: string): Promise<number | string> {
  return new Promise((resolve) => {
    const req = http.get({ port, host: '127.0.0.1', localAddress, path: '/openapi.json', agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', (e) => resolve((e as NodeJS.ErrnoException).code ?? e.message));
  });
}

describe('a fair share of connections per client address', () => {
  it('one client hoarding idle connections leaves every other client served', async () => {
    const server = createNodeServer(gateway, { maxConnections: 64 });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    try {
      await fc.assert(
        fc.asyncProperty(fc.integer({ min: 65, max: 400 }), fc.integer({ min: 2, max: 20 }), async (n, hoarder) => {
          const sockets = await hoard(port, `127.0.0.${hoarder}`, n, 32);
          const held = sockets.filter((s) => !s.destroyed).length;
          try {
            expect(held).toBeLessThanOrEqual(32); // its share: maxConnections / 2
            const others = Array.from({ length: 24 }, (_, i) => `127.0.0.${30 + i}`);
            expect(await Promise.all(others.map((a) => ask(port, a)))).toEqual(others.map(() => 200));
          } finally {
            for (const s of sockets) s.destroy();
          }
        }),
        { seed: 2822, numRuns: 8 },
      );
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });

  it('a share given is the share held', async () => {
    const server = createNodeServer(gateway, { maxConnections: 64, maxConnectionsPerClient: 3 });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const sockets = await hoard((server.address() as AddressInfo).port, '127.0.0.9', 10, 3);
    expect(sockets.filter((s) => !s.destroyed).length).toBe(3);
    for (const s of sockets) s.destroy();
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });
});
