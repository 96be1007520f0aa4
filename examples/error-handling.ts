import {
  createGatewayClient,
  GatewayOutcomeUnknownError,
  isApproved,
  isRefused,
  recoveredBy,
} from '../generated/client.ts';
import spec from '../generated/openapi.json' with { type: 'json' };

// The sandbox's merchant, its approved test card and a customer, as the spec names them (info.x-sandbox).
const sandbox = spec.info['x-sandbox'];

/**
 * A fetch that asks the sandbox for a scenario (docs/SCENARIOS.md) on the call's first request only:
 * the purchase, not the lookup the client makes after a lost answer. Only that request gets it.
 */
function asking(scenario: string) {
  let first = true;
  return (request: Request) => {
    if (first) request.headers.set(spec['x-sandbox-scenarios'].header, scenario);
    first = false;
    return fetch(request);
  };
}

// The code under test: a checkout that pays for an order and says what the shop does next.
async function checkout(fetch: (request: Request) => Promise<Response>, order: string): Promise<string> {
  const gateway = createGatewayClient({
    baseUrl: process.env.GATEWAY_URL ?? 'http://localhost:4010',
    merchantUUID: sandbox.merchantUUID,
    apiKey: sandbox.apiKey,
    passphrase: sandbox.passphrase,
    fetch,
    retry: { attempts: 3 },
  });
  try {
    const result = await gateway.processCard({
      transactionAmount: '25.00',
      transactionCurrency: 'AUD',
      transactionProduct: 'Error handling',
      transactionReferenceID: order,
      ...sandbox.customer,
      ...sandbox.testCard,
      paymentCardName: sandbox.customer.customerName,
    });
    const found = recoveredBy(result);
    if (found) return `${found.approved ? 'paid' : 'declined'}: its answer was lost, the lookup found it`;
    if (isRefused(result)) return `not processed (${result.responseMessage}): nothing was charged, try again later`;
    if (isApproved(result)) return 'paid';
    return `declined (${result.responseMessage}): ask for another card`;
  } catch (error) {
    if (error instanceof GatewayOutcomeUnknownError)
      return `unknown: look ${error.reference} up later, never pay twice`;
    throw error;
  }
}

const run = Date.now().toString(36);
for (const scenario of ['approved', 'insufficientFunds', 'expired', 'internalError', 'answerLost', 'unavailable'])
  console.log(`${scenario.padEnd(17)} -> ${await checkout(asking(scenario), `EH-${run}-${scenario}`)}`);
