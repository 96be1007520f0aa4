// node bench/in-process.ts [--seconds 5]: the gateway core alone, handle() over the benchmark's
// request mix with no HTTP, to tell the core's cost per request apart from the adapter's.
// Run it with --cpu-prof to see where that cost goes.
import { parseArgs } from 'node:util';
import { buildRequest, requestExamples } from '../contract/requests.ts';
import { operations } from '../generated/operations.ts';
import { accounts, echoHandlers } from '../scripts/lib/example-handlers.ts';
import { createGateway } from '../server-stubs/index.ts';

const { values: args } = parseArgs({ options: { seconds: { type: 'string', default: '5' } } });
const gateway = createGateway({ handlers: echoHandlers(), accounts, responseValidation: 'error' });
const mix = operations
  .filter((op) => op.resultType === 'application/json' && !op.aliasOf)
  .map((op) => {
    const r = buildRequest(op, { body: op.request ? requestExamples(op)[0]!.value : undefined });
    const headers = Object.fromEntries(Object.entries(r.headers as Record<string, string>).map(([k, v]) => [k.toLowerCase(), v]));
    return { op, request: { verb: r.verb, url: r.url, headers, body: r.body === undefined ? undefined : Buffer.from(r.body as string) } };
  });

for (const { op, request } of mix) {
  const response = await gateway.handle(request);
  if (response.status !== op.status || /"responseCode":"?-/.test(String(response.body))) throw new Error(`${op.operationId}: ${response.status} ${String(response.body).slice(0, 200)}`);
}
const until = performance.now() + Number(args.seconds) * 1000;
let n = 0;
const started = performance.now();
while (performance.now() < until) {
  for (const { request } of mix) await gateway.handle(request);
  n += mix.length;
}
const us = ((performance.now() - started) * 1000) / n;
console.log(`handle(): ${n} requests of ${mix.length} operations, ${us.toFixed(1)} µs each, ${Math.round(1e6 / us)} per second`);
