import { createGatewayClient, isApproved } from '../generated/client.ts';
import spec from '../generated/openapi.json' with { type: 'json' };

// The sandbox's merchant, its approved test card and a customer, as the spec names them (info.x-sandbox):
// against the gateway, your own.
const sandbox = spec.info['x-sandbox'];
const gateway = createGatewayClient({
  baseUrl: process.env.GATEWAY_URL ?? 'http://localhost:4010',
  merchantUUID: sandbox.merchantUUID,
  apiKey: sandbox.apiKey,
  passphrase: sandbox.passphrase,
});
// Authorise 50.00 on the card, then capture 30.00 of it.
const auth = await gateway.processAuth({
  transactionAmount: '50.00',
  transactionCurrency: 'AUD',
  transactionProduct: 'Quick start',
  ...sandbox.customer,
  ...sandbox.testCard,
  paymentCardName: sandbox.customer.customerName,
});
if (!isApproved(auth)) throw new Error(`not authorised: ${auth.responseMessage}`);
const result = await gateway.processCapture({
  transactionID: auth.transactionID,
  transactionAmount: '50.00',
  transactionCurrency: 'AUD',
  captureAmount: '30.00',
});
console.log(isApproved(result) ? `captured 30.00 of ${auth.transactionID}` : `not captured: ${result.responseMessage}`);
