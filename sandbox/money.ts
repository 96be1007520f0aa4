// Money is whole cents (integer minor units) in every store column and every computation; binary
// floats never add up money (0.02 + 0.21 is 0.22999999999999998). Card amounts are two-decimal
// strings on the wire; PayTo, PayID and payout amounts JSON numbers in the major unit.
export const toCents = (amount: string): number => Math.round(Number(amount) * 100);
export const fromCents = (cents: number): string => (cents / 100).toFixed(2);

/** A JSON major-unit amount (25.5) as whole cents (2550); undefined when it has a fraction of a cent. */
export function numberToCents(amount: number): number | undefined {
  const cents = Math.round(amount * 100);
  // amount * 100 is off by far less than 1e-6 for any amount the contract allows (below 1e9).
  return Number.isSafeInteger(cents) && Math.abs(amount * 100 - cents) < 1e-6 ? cents : undefined;
}
/** Whole cents as the JSON number of the major unit: 23 → 0.23 (the shortest double that is 0.23). */
export const centsToNumber = (cents: number): number => cents / 100;
