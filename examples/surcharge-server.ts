import {
  createGateway,
  createNodeServer,
  type Accounts,
  type GatewayHandlers,
  type HandlerContext,
} from '../server-stubs/index.ts';

// Your accounts: where the gateway checks credentials and hashes (a database, a secrets store...).
const merchant = {
  kind: 'merchant',
  id: '5265f8eed6a19',
  apiKey: 'ksmnwxab',
  passphrase: 'sandbox-passphrase',
} as const;
const accounts: Accounts = {
  find: (kind, id) => (kind === merchant.kind && id === merchant.id ? merchant : undefined),
  findByAccessToken: (token) => (token === 'at3b9e2f41c7d05a68' ? merchant : undefined),
};

// Your backend: one handler per operation, typed with its own request and result.
const handlers: Partial<GatewayHandlers<HandlerContext>> = {
  getSurcharge({ body }) {
    const cents = Math.round(Number(body.transactionAmount) * 100);
    const surcharge = Math.round(cents * 0.015);
    const money = (c: number) => (c / 100).toFixed(2);
    return {
      responseCode: '0',
      responseMessage: 'Operation successful',
      transactionAmount: body.transactionAmount,
      surchargeAmount: money(surcharge),
      totalAmount: money(cents + surcharge),
    };
  },
};

// Routing, validation, authentication and refusals come from the contract.
export const server = createNodeServer(createGateway({ handlers, accounts }));
if (import.meta.main)
  server.listen(Number(process.env.PORT ?? 4020), '127.0.0.1', () =>
    console.log(`surcharge gateway on http://127.0.0.1:${(server.address() as { port: number }).port}`),
  );
