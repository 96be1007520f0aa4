import {
  createGateway,
  createNodeServer,
  type Accounts,
  type GatewayHandlers,
  type HandlerContext,
} from '../server-stubs/index.ts';
import spec from '../generated/openapi.json' with { type: 'json' };

// Your accounts: where the gateway checks credentials and hashes (a database, a secrets store...).
// Here one, the sandbox's merchant as the spec names it (info.x-sandbox), and the access token of
// the spec's examples, which the contract-test suite sends when a server issues none.
const sandbox = spec.info['x-sandbox'];
const merchant = {
  kind: 'merchant',
  id: sandbox.merchantUUID,
  apiKey: sandbox.apiKey,
  passphrase: sandbox.passphrase,
} as const;
const exampleToken = spec.components.examples.getAccessTokenApproved.value.accessToken;
const accounts: Accounts = {
  find: (kind, id) => (kind === merchant.kind && id === merchant.id ? merchant : undefined),
  findByAccessToken: (token) => (token === exampleToken ? merchant : undefined),
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
