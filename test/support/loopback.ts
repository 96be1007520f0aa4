// A test's HTTP server on a free loopback port: its base URL once it listens, and a close to await.
import { once } from 'node:events';
import type http from 'node:http';
import type { AddressInfo } from 'node:net';

export async function onLoopback(server: http.Server): Promise<{ base: string; close: () => Promise<void> }> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
