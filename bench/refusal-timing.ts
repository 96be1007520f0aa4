// npm run bench:refusal-timing [-- --rounds 15 --per-round 2000]: how long the sandbox takes to refuse
// a known merchant (a wrong key; a right key and a wrong hash) and an unknown one, side by side in one
// process, in-process (gateway.handle: no HTTP, so the loopback's noise does not drown a few
// microseconds). A caller who can tell the two apart by time learns which merchant IDs exist. The
// kinds take turns request by request (one of each, in a shuffled order, then again), so that a drift
// of the machine lands on all of them; each is reported by its median and its spread, and the gap is
// the median of the per-round differences. Run it with --cpu-prof to see where a gap comes from.
import { buildRequest, operation, sandbox as accounts } from '../contract/index.ts';
import { hashRecipes } from '../generated/hash-recipes.ts';
import { computeHash } from '../runtime/signing.ts';
import { createSandbox } from '../sandbox/index.ts';
import { benchArgs } from './args.ts';

const { values: args } = benchArgs(import.meta.url, {
  options: { rounds: { type: 'string', default: '15' }, 'per-round': { type: 'string', default: '2000' } },
});
const ROUNDS = Number(args.rounds);
const PER_ROUND = Number(args['per-round']);

const sb = await createSandbox({ dbPath: ':memory:', env: {} });
const op = operation('processCard');
const body = (merchantUUID: string, apiKey: string, passphrase: string) => {
  const b: Record<string, unknown> = {
    method: 'processCard',
    merchantUUID,
    apiKey,
    transactionAmount: '10.00',
    transactionCurrency: 'AUD',
    transactionProduct: 'Timing',
    ...accounts.testCard,
    paymentCardName: accounts.customer.customerName,
    ...accounts.customer,
  };
  b.hash = computeHash(hashRecipes.transaction, passphrase, b);
  return b;
};
// Same lengths everywhere: the unknown merchant's ID is the known one's with its last character changed.
const unknownId = `${accounts.merchantUUID.slice(0, -1)}${accounts.merchantUUID.endsWith('0') ? '1' : '0'}`;
const wrongKey = `${accounts.apiKey.slice(0, -1)}${accounts.apiKey.endsWith('x') ? 'y' : 'x'}`;
const kinds = {
  'known, wrong key': buildRequest(op, { body: body(accounts.merchantUUID, wrongKey, accounts.passphrase) }),
  'known, wrong hash': buildRequest(op, { body: body(accounts.merchantUUID, accounts.apiKey, 'not-the-passphrase') }),
  'unknown merchant': buildRequest(op, { body: body(unknownId, accounts.apiKey, accounts.passphrase) }),
};
const names = Object.keys(kinds) as (keyof typeof kinds)[];

// Every kind is a -1, or the comparison means nothing.
for (const name of names) {
  const answer = await sb.gateway.handle(kinds[name]);
  if (!String(answer.body).includes('"responseCode":"-1"')) throw new Error(`${name}: ${String(answer.body)}`);
}

const samples: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
const rounds: Record<string, number>[] = [];
for (let r = 0; r < ROUNDS + 2; r++) {
  const spent: Record<string, bigint> = Object.fromEntries(names.map((n) => [n, 0n]));
  for (let i = 0; i < PER_ROUND; i++) {
    const order = [...names].sort(() => Math.random() - 0.5);
    for (const name of order) {
      const started = process.hrtime.bigint();
      await sb.gateway.handle(kinds[name]);
      spent[name]! += process.hrtime.bigint() - started;
    }
  }
  if (r < 2) continue; // warm-up rounds
  const us = Object.fromEntries(names.map((n) => [n, Number(spent[n]!) / 1000 / PER_ROUND]));
  for (const n of names) samples[n]!.push(us[n]!);
  rounds.push(us);
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
};
const spread = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return `${s[Math.floor(s.length * 0.1)]!.toFixed(2)}-${s[Math.floor(s.length * 0.9)]!.toFixed(2)}`;
};
console.log(`${ROUNDS} rounds of ${PER_ROUND} of each kind, interleaved (us per request, in-process)`);
for (const n of names)
  console.log(`  ${n.padEnd(20)} median ${median(samples[n]!).toFixed(2)}  p10-p90 ${spread(samples[n]!)}`);
for (const n of names.filter((n) => n !== 'unknown merchant')) {
  const gaps = rounds.map((r) => r['unknown merchant']! - r[n]!);
  console.log(
    `  unknown - ${n.padEnd(17)} median ${median(gaps).toFixed(2)} us  p10-p90 ${spread(gaps)}  (${gaps.filter((g) => g > 0).length} of ${gaps.length} rounds slower)`,
  );
}
await sb.close();
