// The mock's front keeps connections as a client expects (finding, issue 44: under load, a client of
// the mock got "other side closed" and the front got ECONNRESET from Prism, each on a kept-alive
// connection the other side was closing as it was reused). Deterministic here: an upstream that resets
// a kept-alive connection when it is reused, instead of a race with an idle time-out.
import { once } from 'node:events';
import type http from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFront } from '../../mock/front.ts';
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
      // The front's agent keeps its connection: ended here, not after the agent's idle time.
      for (const socket of sockets) socket.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}

describe("the mock's front and its connections", () => {
  let upstream: Awaited<ReturnType<typeof resettingUpstream>>;
  let front: http.Server;
  let base = '';
  beforeAll(async () => {
    upstream = await resettingUpstream();
    front = createFront({ target: { host: '127.0.0.1', port: upstream.port }, choosesExamples: false });
    front.listen(0, '127.0.0.1');
    await once(front, 'listening');
    base = `http://127.0.0.1:${(front.address() as net.AddressInfo).port}`;
  });
  afterAll(async () => {
    front.closeAllConnections();
    await new Promise((r) => front.close(r));
    await upstream.close();
  });

  it('sends a request again on a new connection when Prism resets the kept-alive one it was sent on', async () => {
    const first = await fetch(`${base}/anything`);
    expect(await first.json()).toEqual({ connection: 1 });
    // The front's agent keeps the first connection and reuses it: reset there, sent again on a second.
    const second = await fetch(`${base}/anything`);
    expect(second.status).toBe(200);
    expect(await second.json()).toEqual({ connection: 2 });
    expect(upstream.connections()).toBe(2);
  });

  it("keeps an idle client's connection as long as the server stubs do, longer than clients keep theirs", () => {
    expect(front.keepAliveTimeout).toBe(serverDefaults.keepAliveTimeout);
    expect(front.keepAliveTimeout).toBeGreaterThan(60_000);
  });
});
