import { createGatewayClient, isApproved, recoveredBy } from '../generated/client.ts';
import spec from '../generated/openapi.json' with { type: 'json' };

// The sandbox's merchant, its approved test card and a customer, as the spec names them (info.x-sandbox).
const sandbox = spec.info['x-sandbox'];

// The sandbox loses the first answer after it has done the purchase: the first request asks for the
// fault answerLost (docs/SCENARIOS.md), or the one FAULT names (resetAfterCommit, truncated, noAnswer…).
let first = true;
const faulty = async (request: Request) => {
  if (first) request.headers.set(spec['x-sandbox-scenarios'].header, process.env.FAULT ?? 'answerLost');
  first = false;
  return fetch(request);
};

const gateway = createGatewayClient({
  baseUrl: process.env.GATEWAY_URL ?? 'http://localhost:4010',
  merchantUUID: sandbox.merchantUUID,
  apiKey: sandbox.apiKey,
  passphrase: sandbox.passphrase,
  fetch: faulty,
  timeoutMs: Number(process.env.TIMEOUT_MS ?? 10_000),
  retry: { attempts: 3, onRetry: (e) => console.log(`${e.operation}: try ${e.attempt} -> ${e.action}`) },
});
const result = await gateway.processCard({
  transactionAmount: '25.00',
  transactionCurrency: 'AUD',
  transactionProduct: 'Walkthrough',
  transactionReferenceID: process.env.ORDER ?? 'ORDER-1001',
  ...sandbox.customer,
  ...sandbox.testCard,
  paymentCardName: sandbox.customer.customerName,
});
// After a lost answer the result is the record the lookup found: recoveredBy() says so, and whether it was approved.
const found = recoveredBy(result);
if (found)
  console.log(
    `answer lost; ${found.lookup} found ${found.reference}: ${found.approved ? 'paid' : 'declined'}, not sent again`,
  );
else console.log(isApproved(result) ? `paid: ${result.transactionID}` : `not paid: ${result.responseMessage}`);
