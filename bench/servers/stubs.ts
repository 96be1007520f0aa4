// This package's validating server: request and answer validation on, authentication on, and a
// trivial handler answering each operation's example result.
import type { AddressInfo } from 'node:net';
import { accounts, echoHandlers } from '../../test/fixtures/example-handlers.ts';
import { createGateway, createNodeServer } from '../../server-stubs/index.ts';

const server = createNodeServer(createGateway({ handlers: echoHandlers(), accounts, responseValidation: 'error' }));
server.listen(Number(process.argv[2] ?? 0), '127.0.0.1', () =>
  console.log(`ready ${(server.address() as AddressInfo).port}`),
);
// Stopped with SIGTERM (bench/stubs-profile.ts), it exits: Node then writes a --cpu-prof profile.
process.on('SIGTERM', () => process.exit(0));
