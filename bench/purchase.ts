// What the benches load a sandbox with: its seeded merchant (the spec's x-sandbox credentials, which
// every new store is seeded with) and one card purchase the sandbox approves.
import { sandbox } from '../contract/index.ts';

export const merchant = { merchantUUID: sandbox.merchantUUID, apiKey: sandbox.apiKey };

export const purchaseBody = {
  method: 'processCard',
  ...merchant,
  transactionAmount: '1.00',
  transactionCurrency: 'AUD',
  transactionProduct: 'x',
  customerName: 'Jane',
  customerCountry: 'AU',
  customerState: 'QLD',
  customerCity: 'B',
  customerAddress: '1 St',
  customerPostCode: '4000',
  paymentCardNumber: '4564710000000004',
  paymentCardExpiry: '0229',
  paymentCardName: 'Jane',
  paymentCardCSC: '847',
  hash: 'x',
};
