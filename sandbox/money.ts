// Card amounts are two-decimal strings on the wire and whole cents in the store.
export const toCents = (amount: string): number => Math.round(Number(amount) * 100);
export const fromCents = (cents: number): string => (cents / 100).toFixed(2);
