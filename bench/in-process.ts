// node bench/in-process.ts [--seconds 5]: the gateway core alone, respond() (handle() as adapters
// call it) over the benchmark's request mix with no HTTP, to tell the core's cost per request apart
// from the adapter's. Then the floor (bench/floor.ts): only the work the contract asks for, with the
// same functions the core calls and none of its routing, refusals or bookkeeping. The two take turns,
// a tenth of a second each for --seconds each, so that the machine's other load drifts on both alike;
// each is given by its median turn, in wall time and in this thread's CPU (which drifts much less on
// a shared machine), and the floor's share by the median of the turns' ratios.
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

/** µs of this thread's CPU so far (user + system): what a request costs whatever else the machine runs. */
const cpuUs = () => {
  const { user, system } = process.threadCpuUsage();
  return user + system;
};

/** One turn of about `ms` over the list: µs each, wall and CPU. */
async function turn<T>(list: T[], each: (item: T) => unknown, ms: number): Promise<{ us: number; cpu: number }> {
  const started = performance.now();
  const cpuStarted = cpuUs();
  let n = 0;
  while (performance.now() < started + ms) {
    for (const item of list) {
      const result = each(item);
      if (result instanceof Promise) await result;
    }
    n += list.length;
  }
  return { us: ((performance.now() - started) * 1000) / n, cpu: (cpuUs() - cpuStarted) / n };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!;
const TURN_MS = 100;
const turns = Math.max(1, Math.round((Number(args.seconds) * 1000) / TURN_MS));
const sides = {
  'respond()': { list: requests, each: (r: (typeof requests)[number]) => gateway.respond(r.request) },
  'floor   ': {
    list: mix,
    each: (m: (typeof mix)[number]) => floorAnswer(m.op, m.result, m.text === undefined ? {} : JSON.parse(m.text)),
  },
};
const measured: Record<string, { us: number; cpu: number }[]> = { 'respond()': [], 'floor   ': [] };
for (let i = 0; i < turns; i++) {
  // Every other turn in the other order.
  const order = i % 2 ? (['floor   ', 'respond()'] as const) : (['respond()', 'floor   '] as const);
  for (const name of order) {
    const side = sides[name] as { list: unknown[]; each: (item: unknown) => unknown };
    measured[name]!.push(await turn(side.list, side.each, TURN_MS));
  }
}
for (const [name, list] of Object.entries(measured)) {
  const us = median(list.map((t) => t.us));
  console.log(
    `${name}: ${turns} turns of ${sides[name as keyof typeof sides].list.length} operations, ${us.toFixed(1)} µs each, ${Math.round(1e6 / us)} per second; ${median(list.map((t) => t.cpu)).toFixed(1)} µs of CPU each (medians)`,
  );
}
const ratio = (key: 'us' | 'cpu') =>
  median(measured['floor   ']!.map((f, i) => f[key] / measured['respond()']![i]![key])).toFixed(2);
console.log(`floor ÷ respond(): ${ratio('us')} of the time, ${ratio('cpu')} of the CPU (median of the turns)`);
