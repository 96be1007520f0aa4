// What the stateful checks (scenarios.ts, model.ts) share: the customer and the public sandbox's
// approved test card they pay with, and how they assert on an answer.
export const customer = {
  customerName: 'Contract Test',
  customerCountry: 'AU',
  customerState: 'QLD',
  customerCity: 'Brisbane',
  customerAddress: '1 Test St',
  customerPostCode: '4000',
} as const;
export const visa = {
  paymentCardNumber: '4564710000000004',
  paymentCardExpiry: '0229',
  paymentCardName: 'Contract Test',
  paymentCardCSC: '847',
};

export function expect(condition: unknown, why: string): asserts condition {
  if (!condition) throw new Error(why);
}
export const code = (r: { responseCode: string | number }) => Number(r.responseCode);
export const show = (r: unknown) => JSON.stringify(r).slice(0, 200);
