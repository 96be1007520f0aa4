// What the stateful checks (scenarios.ts, model.ts) share: the customer and the public sandbox's
// approved test card they pay with, and how they assert on an answer.
import { sandbox } from './requests.ts';
// Both from the spec's x-sandbox, written there once.
export const customer = sandbox.customer;
export const visa = { ...sandbox.testCard, paymentCardName: customer.customerName };

export function expect(condition: unknown, why: string): asserts condition {
  if (!condition) throw new Error(why);
}
export const code = (r: { responseCode: string | number }) => Number(r.responseCode);
export const show = (r: unknown) => JSON.stringify(r).slice(0, 200);
/** A step that should have been approved, as a failure says it: what was expected, then the answer. */
export const notApproved = (step: string, r: unknown) =>
  `${step} was not approved (responseCode 0 expected): ${show(r)}`;
