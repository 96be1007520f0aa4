// The sandbox as `npm start` runs it (control API and request log on), on an in-memory store: what a
// request naming a scenario (x-sandbox-scenarios) costs beside the same request naming none.
import type { AddressInfo } from 'node:net';
import { createSandbox } from '../../sandbox/index.ts';

const sandbox = await createSandbox({ dbPath: ':memory:', control: true, env: {} });
const server = sandbox.server();
server.listen(Number(process.argv[2] ?? 0), '127.0.0.1', () =>
  console.log(`ready ${(server.address() as AddressInfo).port}`),
);
// Ended by a signal, it exits as a process does when it ends (a --cpu-prof then writes its profile).
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(0));
