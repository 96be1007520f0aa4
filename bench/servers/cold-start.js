// Cold start as a user deploys it: the compiled package (dist/, plain JavaScript, reached as a user
// reaches it, by the package's name and its exports) and one handler. The bench times from launching
// this process to the first answer it sends.
import { createRequire } from 'node:module';
import { createGateway, createNodeServer } from 'payment-gateway-contract/server';

// The spec's sandbox account (info.x-sandbox), the one the bench's requests are signed with.
const { merchantUUID, apiKey, passphrase } = createRequire(import.meta.url)('payment-gateway-contract/openapi.json')
  .info['x-sandbox'];
const merchant = { kind: 'merchant', id: merchantUUID, apiKey, passphrase };
const accounts = {
  find: (kind, id) => (kind === 'merchant' && id === merchant.id ? merchant : undefined),
  findByAccessToken: () => merchant,
};
const handlers = {
  getSurcharge: ({ body }) => ({
    responseCode: '0',
    responseMessage: 'Operation successful',
    transactionAmount: body.transactionAmount,
    surchargeAmount: '0.00',
    totalAmount: body.transactionAmount,
  }),
};
const server = createNodeServer(createGateway({ handlers, accounts }));
server.listen(Number(process.argv[2] ?? 0), '127.0.0.1', () => console.log(`ready ${server.address().port}`));
// Stopped as a deployed server is stopped (SIGTERM), it exits: Node then writes the profile of a run
// under --cpu-prof (npm run bench -- --cold-profile, bench/cold-profile.ts).
process.on('SIGTERM', () => process.exit(0));
