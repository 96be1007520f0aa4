// The mock keeps connections as a client expects (finding, issue 44: under load, a client of the mock
// got "other side closed" and the front got ECONNRESET from Prism, each on a kept-alive connection the
// other side was closing as it was reused). Deterministic here: an upstream that resets a kept-alive
// connection when it is reused, instead of a race with an idle time-out.
import { once } from 'node:events';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFront } from '../../mock/front.ts';
import { askPrism } from '../../mock/prism-client.ts';
import { serverDefaults } from '../../server-stubs/index.ts';

/** An HTTP/1.1 upstream (Prism's place) that answers each connection's first request and resets the connection at its second. */
async function resettingUpstream() {
  let connections = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    let requests = 0;
    let buffered = '';
    socket.on('error', () => {});
    socket.on('data', (chunk) => {
      buffered += chunk.toString('latin1');
      while (buffered.includes('\r\n\r\n')) {
        buffered = buffered.slice(buffered.indexOf('\r\n\r\n') + 4);
        if (++requests > 1) return void socket.resetAndDestroy();
        const body = JSON.stringify({ connection: connections });
        socket.write(
          `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\nconnection: keep-alive\r\nkeep-alive: timeout=60\r\n\r\n${body}`,
        );
      }
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    port: (server.address() as net.AddressInfo).port,
    connections: () => connections,
    close: async () => {
      // The client's agent keeps its connection: ended here, not after the agent's idle time.
      for (const socket of sockets) socket.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}

describe("the mock's connections", () => {
  let upstream: Awaited<ReturnType<typeof resettingUpstream>>;
  beforeAll(async () => {
    upstream = await resettingUpstream();
  });
  afterAll(() => upstream.close());

  it('a request to Prism is sent again on a new connection when Prism resets the kept-alive one it was sent on', async () => {
    const target = { host: '127.0.0.1', port: upstream.port };
    const ask = { verb: 'GET', url: '/anything', headers: {} };
    const first = await askPrism(target, ask, 10_000);
    expect('body' in first && JSON.parse(String(first.body))).toEqual({ connection: 1 });
    // The agent keeps the first connection and reuses it: reset there, sent again on a second.
    const second = await askPrism(target, ask, 10_000);
    expect('status' in second && second.status).toBe(200);
    expect('body' in second && JSON.parse(String(second.body))).toEqual({ connection: 2 });
    expect(upstream.connections()).toBe(2);
  });

  it("keeps an idle client's connection as long as the server stubs do, longer than clients keep theirs, in both modes", () => {
    for (const choosesExamples of [true, false]) {
      const front = createFront({ target: { host: '127.0.0.1', port: upstream.port }, choosesExamples });
      expect(front.keepAliveTimeout, choosesExamples ? 'mock' : 'proxy').toBe(serverDefaults.keepAliveTimeout);
      expect(front.keepAliveTimeout).toBeGreaterThan(60_000);
    }
  });
});
