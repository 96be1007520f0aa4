// npm run bench:kit: the client team's kit measured against an in-memory sandbox with its control API.
//   1. latency from trigger to local endpoint: a payout is created (the gateway call that causes a
//      payoutTransaction notification) while `listen` (cli/commands/listen.ts, in this process)
//      forwards to a local endpoint; the time from the call to the endpoint's receipt. The control
//      API's long poll answers as soon as the notification is queued.
//   2. retry outcomes: purchases through a proxy that loses answers (after the sandbox committed, or
//      before it saw the request) at random with a fixed seed, once with the retry layer and once with
//      a naive client that sends again after an error; charges per reference are counted.
//
//   node bench/client-kit.ts [--notifications 50] [--purchases 200] [--seed 7]
import http from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { run as listen } from '../cli/commands/listen.ts';
import { createGatewayClient, GatewayOutcomeUnknownError, recoveredBy } from '../generated/client.ts';
import { createSandbox } from '../sandbox/index.ts';
import { card } from './purchase.ts';
import { startDroppingProxy, type Fate } from '../test/support/dropping-proxy.ts';
import { benchArgs } from './args.ts';

const { values } = benchArgs(import.meta.url, {
  options: {
    notifications: { type: 'string', default: '50' },
    purchases: { type: 'string', default: '200' },
    seed: { type: 'string', default: '7' },
  },
});

const sandbox = await createSandbox({
  dbPath: ':memory:',
  env: {},
  control: true,
  fetch: (async () => new Response(null, { status: 204 })) as unknown as typeof fetch,
});
const server = sandbox.server();
server.listen(0, '127.0.0.1');
await once(server, 'listening');
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
const s = sandbox.seed;
const creds = { merchantUUID: s.merchantUUID, apiKey: s.apiKey, passphrase: s.passphrase };

const quantile = (xs: number[], q: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))]!;

// 1. Latency trigger -> local endpoint.
{
  const n = Number(values.notifications);
  let arrived: (at: number) => void = () => {};
  const endpoint = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      arrived(performance.now());
      res.writeHead(200).end();
    });
  });
  endpoint.listen(0, '127.0.0.1');
  await once(endpoint, 'listening');
  const hooks = `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}/hooks`;
  const stop = new AbortController();
  const listening = listen(['--forward-to', hooks, '--base', base, '--poll-seconds', '25'], {
    print: () => {},
    signal: stop.signal,
  });
  await new Promise((r) => setTimeout(r, 200));
  const client = createGatewayClient({ baseUrl: base, ...creds });
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    // Let listen settle into its long poll first, as it is when a notification comes out of the blue.
    await new Promise((r) => setTimeout(r, 60 + Math.random() * 60));
    const got = new Promise<number>((r) => (arrived = r));
    const started = performance.now();
    await client.payouts.create({
      reference: `B-${i}`,
      notifyURL: 'https://merchant.example/hooks',
      transactions: [
        {
          payee: { name: 'P' },
          transaction: { reference: `B-${i}-1`, amount: 1, bsb: '802950', accNumber: '13131313' },
        },
      ],
    });
    times.push((await got) - started);
  }
  stop.abort();
  await listening.catch(() => {});
  endpoint.close();
  console.log(
    `notification latency, trigger (createPayouts) -> local endpoint through listen, ${n} notifications: median ${quantile(times, 0.5).toFixed(1)} ms, p95 ${quantile(times, 0.95).toFixed(1)} ms, max ${Math.max(...times).toFixed(1)} ms`,
  );
}

// 2. Retry outcomes.
{
  const n = Number(values.purchases);
  let state = Number(values.seed);
  // A small deterministic generator (mulberry32): the same loss rates from the same seed for both clients.
  const random = () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const fate = (): Fate => {
    const r = random();
    return r < 0.3 ? 'dropAfter' : r < 0.45 ? 'dropBefore' : 'pass';
  };
  const proxy = await startDroppingProxy(base, () => fate());
  const purchase = (reference: string) =>
    ({
      transactionAmount: '10.00',
      transactionCurrency: 'AUD',
      transactionProduct: 'Bench',
      transactionReferenceID: reference,
      ...card,
    }) as never;
  const charges = async (prefix: string) =>
    (
      await sandbox.store.all(
        "SELECT reference, count(*) AS n FROM transactions WHERE kind = 'purchase' AND reference LIKE ? GROUP BY reference",
        `${prefix}%`,
      )
    ).map((r) => Number(r.n));

  const safe = createGatewayClient({ baseUrl: proxy.url, ...creds, retry: { attempts: 4, baseDelayMs: 5 } });
  const outcome = { answered: 0, recovered: 0, unknown: 0 };
  state = Number(values.seed);
  for (let i = 0; i < n; i++) {
    try {
      const answer = await safe.processCard(purchase(`S-${i}`));
      if (recoveredBy(answer)) outcome.recovered++;
      else outcome.answered++;
    } catch (error) {
      if (error instanceof GatewayOutcomeUnknownError) outcome.unknown++;
      else throw error;
    }
  }
  const safeCharges = await charges('S-');
  const lostAfter = proxy.seen.filter((x) => x.name === 'processCard' && x.fate === 'dropAfter').length;

  const naive = createGatewayClient({ baseUrl: proxy.url, ...creds });
  state = Number(values.seed);
  let gaveUp = 0;
  for (let i = 0; i < n; i++) {
    let sent = 0;
    for (;;) {
      try {
        await naive.processCard(purchase(`N-${i}`));
        break;
      } catch {
        if (++sent >= 4) {
          gaveUp++;
          break;
        }
      }
    }
  }
  const naiveCharges = await charges('N-');
  await proxy.close();
  console.log(
    `retry outcomes, ${n} purchases, 30 % of requests lose their answer after the sandbox committed and 15 % before it saw them (seed ${values.seed}):`,
  );
  console.log(
    `  retry layer: ${outcome.answered} answered by the purchase itself, ${outcome.recovered} recovered by queryCard, ${outcome.unknown} outcome unknown (not resent); ${lostAfter} purchase answers lost after commit; charges: ${safeCharges.filter((c) => c === 1).length} references charged once, ${safeCharges.filter((c) => c > 1).length} charged more than once`,
  );
  console.log(
    `  naive resend (up to 4 sends): ${naiveCharges.filter((c) => c === 1).length} references charged once, ${naiveCharges.filter((c) => c > 1).length} charged more than once (${naiveCharges.reduce((a, c) => a + c, 0) - naiveCharges.length} extra charges), ${gaveUp} gave up`,
  );
}

server.close();
await sandbox.close();
