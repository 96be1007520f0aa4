// node bench/in-process.ts [--seconds 5]: the gateway core alone, handle() over the benchmark's
// request mix with no HTTP, to tell the core's cost per request apart from the adapter's. Then the
// floor: only the work the contract asks for (parse the body, validate the method's branch, recompute
// its hashes, add the result hashes, validate and serialise the answer, look for a card number), with
// the same functions the core calls and none of its routing, refusals or bookkeeping.
// Run it with --cpu-prof to see where the cost goes.
import { parseArgs } from 'node:util';
import { buildRequest, requestExamples } from '../contract/requests.ts';
import { operations } from '../generated/operations.ts';
import { computeHash } from '../runtime/signing.ts';
import { accounts, echoHandlers, merchant } from '../scripts/lib/example-handlers.ts';
import { findCardNumber } from '../server-stubs/core/answer.ts';
import { hashRecipes, requestValidators, resultValidators } from '../server-stubs/core/contract.ts';
import { nodeDigests } from '../server-stubs/core/digests.ts';
import { createGateway } from '../server-stubs/index.ts';

const { values: args } = parseArgs({ options: { seconds: { type: 'string', default: '5' } } });
const handlers = echoHandlers() as Record<string, (input: unknown, context: unknown) => Record<string, unknown>>;
const gateway = createGateway({ handlers, accounts, responseValidation: 'error' });
const mix = operations
  .filter((op) => op.resultType === 'application/json' && !op.aliasOf)
  .map((op) => {
    const r = buildRequest(op, { body: op.request ? requestExamples(op)[0]!.value : undefined });
    const headers = Object.fromEntries(Object.entries(r.headers as Record<string, string>).map(([k, v]) => [k.toLowerCase(), v]));
    const text = r.body as string | undefined;
    return { op, text, result: handlers[op.operationId]!({}, {}), request: { verb: r.verb, url: r.url, headers, body: text === undefined ? undefined : Buffer.from(text) } };
  });

for (const { op, request } of mix) {
  const response = await gateway.handle(request);
  if (response.status !== op.status || /"responseCode":"?-/.test(String(response.body))) throw new Error(`${op.operationId}: ${response.status} ${String(response.body).slice(0, 200)}`);
}

async function time(name: string, each: (m: (typeof mix)[number]) => unknown): Promise<void> {
  const until = performance.now() + Number(args.seconds) * 1000;
  const started = performance.now();
  let n = 0;
  while (performance.now() < until) {
    for (const m of mix) await each(m);
    n += mix.length;
  }
  const us = ((performance.now() - started) * 1000) / n;
  console.log(`${name}: ${n} requests of ${mix.length} operations, ${us.toFixed(1)} µs each, ${Math.round(1e6 / us)} per second`);
}

const recipe = (name: string) => hashRecipes[name as keyof typeof hashRecipes];
await time('handle()', (m) => gateway.handle(m.request));
await time('floor   ', ({ op, text, result }) => {
  const body = text === undefined ? {} : JSON.parse(text);
  const ok = op.request ? (op.forms ?? [op.request]).some((form) => requestValidators[form]!(body)) : true;
  let hashed = true;
  for (const use of op.hashes) hashed = computeHash(recipe(use.recipe), merchant.passphrase, body, nodeDigests).length > 0 && hashed;
  let answer = result;
  if (op.resultHashes.length) answer = { ...result };
  for (const use of op.resultHashes) answer[use.name] = computeHash(recipe(use.recipe), merchant.passphrase, [answer, body], nodeDigests);
  const valid = resultValidators[op.result]!(answer);
  const out = JSON.stringify(answer);
  if (!ok || !hashed || !valid || findCardNumber(out)) throw new Error(`${op.operationId}: the floor measured a failing request`);
});
