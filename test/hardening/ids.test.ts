// Finding: card and blacklist identifiers are 8 random digits with no retry (7 answers of 500 in
// 60,000 inserts). Here the random source is made to repeat an identifier on purpose: the second
// card and the second blacklist entry must still be stored, each under an identifier of its own.
import { afterAll, describe, expect, it, vi } from 'vitest';

const script: number[] = [];
vi.mock('node:crypto', async (original) => {
  const real = await original<typeof import('node:crypto')>();
  return {
    ...real,
    default: real,
    randomInt: (...args: [number, number?]) =>
      script.shift() ?? (real.randomInt as (...a: unknown[]) => number)(...args),
  };
});

// An earlier file of this worker may have loaded the sandbox with the real crypto module: load it again.
vi.resetModules();
const { counts, hardeningSandbox, merchant, send, signed } = await import('./support.ts');
const sb = await hardeningSandbox();
afterAll(() => sb.close());

describe('identifiers never collide', () => {
  it('a card identifier drawn twice is drawn again, not a 500', async () => {
    const add = (number: string) =>
      signed('addCard', {
        method: 'addCard',
        ...merchant,
        cardName: 'Jane',
        cardNumber: number,
        cardExpiryMonth: '02',
        cardExpiryYear: '29',
      });
    script.push(12_345_678);
    const first = await send(sb, add('4564710000000004'));
    script.push(12_345_678);
    const second = await send(sb, add('5163200000000008'));
    expect(second.status).toBe(200);
    expect(first.json.cardID).toBe('KOCI12345678');
    expect(second.json.responseCode).toBe('0');
    expect(second.json.cardID).not.toBe(first.json.cardID);
    expect((await counts(sb)).cards).toBe(2);
  });

  it('a blacklist identifier drawn twice is drawn again, not a 500', async () => {
    const add = (number: string) =>
      signed('addBlacklistedCard', {
        method: 'addBlacklistedCard',
        ...merchant,
        cardName: 'Jane',
        cardNumber: number,
        cardExpiryMonth: '02',
        cardExpiryYear: '29',
      });
    script.push(87_654_321);
    const first = await send(sb, add('4564710000000004'));
    script.push(87_654_321);
    const second = await send(sb, add('5163200000000008'));
    expect(second.status).toBe(200);
    expect(second.json.responseCode, second.json.responseMessage).toBe('0');
    expect(second.json.cardID).not.toBe(first.json.cardID);
    expect((await counts(sb)).blacklist).toBe(2);
  });
});
