import { createGatewayClient, isApproved } from '../generated/client.ts';
import spec from '../generated/openapi.json' with { type: 'json' };

// The sandbox's merchant, as the spec names it (info.x-sandbox): against the gateway, your own.
const sandbox = spec.info['x-sandbox'];
const gateway = createGatewayClient({
  baseUrl: process.env.GATEWAY_URL ?? 'http://localhost:4010',
  merchantUUID: sandbox.merchantUUID,
  apiKey: sandbox.apiKey,
  passphrase: sandbox.passphrase,
});
const result = await gateway.processCapture({
  transactionID: '1336-5d2e8f10-b600-11e6-b9c3-005056b209e0',
  transactionAmount: '50.00',
  transactionCurrency: 'AUD',
  captureAmount: '30.00',
});
console.log(isApproved(result) ? `captured, receipt ${result.receiptNo}` : `not captured: ${result.responseMessage}`);
