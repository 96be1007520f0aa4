// node bench/in-process.ts [--seconds 5]: the gateway core alone, respond() (handle() as adapters
// call it) over the benchmark's request mix with no HTTP, to tell the core's cost per request apart
// from the adapter's. Then the floor (bench/floor.ts): only the work the contract asks for, with the
// same functions the core calls and none of its routing, refusals or bookkeeping.
// Run it with --cpu-prof to see where the cost goes.
import { accounts, echoHandlers } from '../test/fixtures/example-handlers.ts';
import { createGateway } from '../server-stubs/index.ts';
import { floorAnswer, mix } from './floor.ts';
import { benchArgs } from './args.ts';

const { values: args } = benchArgs(import.meta.url, { options: { seconds: { type: 'string', default: '5' } } });
const gateway = createGateway({ handlers: echoHandlers(), accounts, responseValidation: 'error' });
const requests = mix.map((m) => ({
  op: m.op,
  request: {
    verb: m.verb,
    url: m.url,
    headers: Object.fromEntries(Object.entries(m.headers).map(([k, v]) => [k.toLowerCase(), v])),
    body: m.text === undefined ? undefined : Buffer.from(m.text),
  },
}));

for (const { op, request } of requests) {
  const response = await gateway.handle(request);
  if (response.status !== op.status || /"responseCode":"?-/.test(String(response.body)))
    throw new Error(`${op.operationId}: ${response.status} ${String(response.body).slice(0, 200)}`);
}

async function time<T>(name: string, list: T[], each: (item: T) => unknown): Promise<void> {
  const until = performance.now() + Number(args.seconds) * 1000;
  const started = performance.now();
  let n = 0;
  while (performance.now() < until) {
    for (const item of list) {
      const result = each(item);
      if (result instanceof Promise) await result;
    }
    n += list.length;
  }
  const us = ((performance.now() - started) * 1000) / n;
  console.log(
    `${name}: ${n} requests of ${list.length} operations, ${us.toFixed(1)} µs each, ${Math.round(1e6 / us)} per second`,
  );
}

await time('respond()', requests, (r) => gateway.respond(r.request));
await time('floor   ', mix, (m) => floorAnswer(m.op, m.result, m.text === undefined ? {} : JSON.parse(m.text)));
