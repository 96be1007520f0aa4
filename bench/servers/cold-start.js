// Cold start as a user deploys it: the compiled package (dist/, plain JavaScript, reached as a user
// reaches it, by the package's name and its exports) and one handler. The bench times from launching
// this process to the first answer it sends.
import { createRequire } from 'node:module';
import { createGateway, createNodeServer } from 'payment-gateway-contract/server';

// The account the bench's requests are signed with (the spec's sandbox account, info.x-sandbox), given
// by the bench (PGW_BENCH_ACCOUNT, JSON) as a deployed server has its accounts from its own store: read
// from the spec, a 900 KB document, it was about 10 ms of each launch's CPU (bench/cold-profile.ts) that
// no server pays. Run alone, the spec is read.
const given = process.env.PGW_BENCH_ACCOUNT;
const { merchantUUID, apiKey, passphrase } = given
  ? JSON.parse(given)
  : createRequire(import.meta.url)('payment-gateway-contract/openapi.json').info['x-sandbox'];
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
