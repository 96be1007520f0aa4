// Finding: one client holding a thousand idle connections made other clients fail for seconds: one
// global cap (maxConnections), no share per client. Each client address now holds at most its share
// (maxConnectionsPerClient); whatever one client opens, every other client is served. Clients are
// loopback addresses 127.0.0.2.. (the server listens on 127.0.0.1; a socket picks its own with localAddress).
// Finding (issue 39): shares were per address, so one machine speaking IPv4 and IPv6 (two addresses,
// two shares of half the server) or one IPv6 /64 (2^64 addresses) held every connection, and an
// IPv4-compatible IPv6 literal (::a.b.c.d) was judged as the IPv4 host it spells. Connections are now
// shared by client prefix (IPv4 /32, IPv6 /64, an IPv4-mapped address as its IPv4 host, an
// IPv4-compatible one as the IPv6 address it is), and the last quarter of the connections is kept
// for clients that hold few (server-stubs/http/clients.ts).
import { once } from 'node:events';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { clientOf, ConnectionShares } from '../../server-stubs/http/clients.ts';
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

/** An IPv4 address, and spellings of it as an IPv4-mapped IPv6 address (as a dual-stack socket shows it). */
const v4 = fc.tuple(...Array.from({ length: 4 }, () => fc.integer({ min: 0, max: 255 }))).map((o) => o.join('.'));
const hex4 = (a: string) => {
  const [p, q, r, t] = a.split('.').map(Number) as [number, number, number, number];
  return [((p << 8) | q).toString(16), ((r << 8) | t).toString(16)];
};
const mapped = (a: string) => [
  `::ffff:${a}`,
  `::FFFF:${hex4(a).join(':')}`,
  `0:0:0:0:0:ffff:${a}`,
  `0000:0000:0000:0000:0000:FFFF:${hex4(a).join(':')}`,
];
/** An IPv6 /64 and addresses in it, in several spellings. */
const group = fc.integer({ min: 0, max: 0xffff });
const prefix64 = fc.tuple(fc.integer({ min: 0x2000, max: 0x3fff }), group, group, group);
const inPrefix = (p: number[], host: number[]) => {
  const all = [...p, ...host];
  return [
    all.map((g) => g.toString(16)).join(':'),
    all.map((g) => g.toString(16).padStart(4, '0').toUpperCase()).join(':'),
  ];
};

describe('a fair share per client, not per address', () => {
  it('an IPv4 client is one client however its address is spelled; an IPv4-compatible literal is not its IPv4 host', () => {
    fc.assert(
      fc.property(v4, (a) => {
        for (const spelling of mapped(a)) expect(clientOf(spelling), spelling).toBe(clientOf(a));
        // ::a.b.c.d (IPv4-compatible, deprecated): an IPv6 address, in ::/64 with every other such one.
        expect(clientOf(`::${a}`)).not.toBe(clientOf(a));
        expect(clientOf(`::${a}`)).toBe(clientOf('::1'));
      }),
      { seed: 3919, numRuns: 2000 },
    );
  });

  it('the addresses of one IPv6 /64 are one client; another /64 is another', () => {
    fc.assert(
      fc.property(
        prefix64,
        fc.array(group, { minLength: 4, maxLength: 4 }),
        fc.array(group, { minLength: 4, maxLength: 4 }),
        (p, h1, h2) => {
          const [a, b] = [inPrefix(p, h1), inPrefix(p, h2)];
          for (const x of [...a, ...b, `${a[0]}%eth0`]) expect(clientOf(x), x).toBe(clientOf(a[0]));
          const other = [...p.slice(0, 3), (p[3]! + 1) % 0x10000];
          expect(clientOf(inPrefix(other, h1)[0])).not.toBe(clientOf(a[0]));
        },
      ),
      { seed: 3920, numRuns: 2000 },
    );
  });

  it('however many clients one machine counts as, new clients keep room', () => {
    // Any mix of hoarders (addresses of one /64, an IPv4 host and its IPv6, several /64s), each
    // opening as much as it may; then new clients, one connection each.
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            v4,
            prefix64.map((p) => inPrefix(p, [0, 0, 0, 1])[0]!),
          ),
          { minLength: 1, maxLength: 6 },
        ),
        fc.array(fc.integer({ min: 1, max: 0xffff }), { minLength: 1, maxLength: 50 }),
        (hoarders, hosts) => {
          const shares = new ConnectionShares({ maxConnections: 64, perClient: 32, keepForNew: 16, newClientShare: 1 });
          for (const h of hoarders) {
            const addresses = h.includes(':') ? hosts.map((n) => h.replace(/:1$/, `:${n.toString(16)}`)) : [h];
            for (let i = 0; i < 100; i++) shares.admit(addresses[i % addresses.length]);
          }
          // Each hoarder as one client at most its share; together at most the cap less the room kept,
          // and one connection each of the room.
          const clients = new Set(hoarders.map((h) => clientOf(h)));
          for (const h of hoarders) expect(shares.holding(h).client).toBeLessThanOrEqual(32);
          expect(shares.holding().open).toBeLessThanOrEqual(48 + clients.size);
          const newcomers = Array.from({ length: 16 }, (_, i) => `198.18.0.${i + 1}`);
          let admitted = 0;
          for (const n of newcomers) if (shares.admit(n) !== undefined) admitted++;
          expect(admitted).toBeGreaterThanOrEqual(16 - clients.size);
        },
      ),
      { seed: 3921, numRuns: 500 },
    );
  });

  it('one machine speaking IPv4 and IPv6 leaves other clients served', async () => {
    // The server behind two listeners, 127.0.0.1 and [::1], as one dual-stack server on both would be:
    // each accepted socket handed to it, the cap counted over both (as Node counts a server's own).
    const server = createNodeServer(gateway, { maxConnections: 64 });
    let open = 0;
    const listeners = ['127.0.0.1', '::1'].map((host) => {
      const l = net.createServer((socket) => {
        if (open >= 64) return void socket.destroy();
        open++;
        socket.once('close', () => open--);
        server.emit('connection', socket);
      });
      l.listen(0, host);
      return l;
    });
    await Promise.all(listeners.map((l) => once(l, 'listening')));
    const [v4Port, v6Port] = listeners.map((l) => (l.address() as AddressInfo).port) as [number, number];
    const hoard6 = async (n: number) => {
      const sockets = Array.from({ length: n }, () => net.connect({ port: v6Port, host: '::1' }));
      await Promise.all(
        sockets.map(
          (s) =>
            new Promise<void>((r) => {
              s.once('connect', () => r());
              s.once('error', () => r());
              s.once('close', () => r());
            }),
        ),
      );
      await until(() => sockets.filter((s) => !s.destroyed).length <= 32, 5000);
      return sockets;
    };
    try {
      const held = [...(await hoard(v4Port, '127.0.0.2', 100, 32)), ...(await hoard6(100))];
      try {
        const others = Array.from({ length: 8 }, (_, i) => `127.0.0.${30 + i}`);
        expect(await Promise.all(others.map((a) => ask(v4Port, a)))).toEqual(others.map(() => 200));
      } finally {
        for (const s of held) s.destroy();
      }
    } finally {
      server.closeAllConnections();
      for (const l of listeners) l.close();
    }
  });
});
