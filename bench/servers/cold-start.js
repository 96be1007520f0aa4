// Cold start as a user deploys it: the compiled package (dist/, plain JavaScript) and one handler.
// The bench times from launching this process to the first answer it sends.
import { createGateway, createNodeServer } from '../../dist/server-stubs/index.js';

const merchant = { kind: 'merchant', id: '5265f8eed6a19', apiKey: 'ksmnwxab', passphrase: 'sandbox-passphrase' };
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
