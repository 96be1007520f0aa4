// What the benches load a sandbox with: its seeded merchant (the spec's x-sandbox credentials, which
// every new store is seeded with) and one card purchase the sandbox approves.
import { sandbox } from '../contract/index.ts';

export const merchant = { merchantUUID: sandbox.merchantUUID, apiKey: sandbox.apiKey };

/** The customer and the approved test card of x-sandbox, as a purchase's fields. */
export const card = {
  ...sandbox.customer,
  ...sandbox.testCard,
  paymentCardName: sandbox.customer.customerName,
};

export const purchaseBody = {
  method: 'processCard',
  ...merchant,
  transactionAmount: '1.00',
  transactionCurrency: 'AUD',
  transactionProduct: 'x',
  ...card,
  hash: 'x',
};
