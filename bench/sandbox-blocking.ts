// node bench/sandbox-blocking.ts [--only batch|settlement|idle]: how long the sandbox's largest requests hold the event loop, and the
// process's peak memory meanwhile. A sandbox on a file store (in a temporary folder) answers, through
// its HTTP server, a stream of small requests (queryCard, one at a time, as another client would send
// them) while one large batch (20,000 lines, the most a batch may hold) and one settlement of 100,000
// rows are asked for. The event loop's longest stall is read from perf_hooks' monitorEventLoopDelay.
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { zipSync } from 'fflate';
import { buildRequest, operation } from '../contract/index.ts';
import { createSandbox, type SqliteStore } from '../sandbox/index.ts';
import { merchant, purchaseBody, card as testCard } from './purchase.ts';
import { benchArgs } from './args.ts';

const { values: args } = benchArgs(import.meta.url, {
  options: { only: { type: 'string' }, 'no-checkpoint': { type: 'boolean' } },
});
const LINES = 20_000;
const SETTLED_ROWS = 100_000;

const dir = mkdtempSync(path.join(os.tmpdir(), 'pgw-blocking-'));
const sb = await createSandbox({
  dbPath: path.join(dir, 'bench.db'),
  env: {},
  fetch: (async () => new Response(null, { status: 204 })) as typeof fetch,
});
// --no-checkpoint: SQLite's automatic WAL checkpoints off, to see what they cost the event loop.
const db = (sb.store as SqliteStore).database.db;
if (args['no-checkpoint']) db.exec('PRAGMA wal_autocheckpoint = 0');
const server = sb.server();
server.listen(0, '127.0.0.1');
await once(server, 'listening');
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

function signed(operationId: string, body: Record<string, unknown>) {
  const op = operation(operationId);
  return buildRequest(op, { body, signBody: true });
}
async function call(operationId: string, body: Record<string, unknown>): Promise<Response> {
  const r = signed(operationId, body);
  return fetch(base + r.url, { method: r.verb, headers: r.headers as Record<string, string>, body: r.body as string });
}

// A stored card for the batch, and 100,000 settled purchases on one day (written straight into the
// store: the settlement is what is measured, not how its rows came to be).
const card = (await (
  await call('addCard', {
    method: 'addCard',
    ...merchant,
    cardName: 'Bench',
    cardNumber: testCard.paymentCardNumber,
    cardExpiryMonth: testCard.paymentCardExpiry.slice(0, 2),
    cardExpiryYear: testCard.paymentCardExpiry.slice(2),
  })
).json()) as { cardID: string; cardKey: string };
const day = '2026-11-01';
await sb.store.transaction(async () => {
  const insert =
    db.prepare(`INSERT INTO transactions (id, merchant_id, kind, status, response_code, response_message, amount, captured, currency, reference, product, card_type, masked_pan, expiry_month, expiry_year, auth_code, auth_response_code, auth_message, receipt_no, settled_date, custom, created_at)
    VALUES (?, ?, 'purchase', 'approved', 0, 'Transaction approved', 1234, 1234, 'AUD', ?, 'Bench tea', 'visa', '456471XXXXXX0004', '02', '29', '123456', '00', 'Approved', '123456789', ?, '[]', ?)`);
  for (let i = 0; i < SETTLED_ROWS; i++)
    insert.run(`bench-${i}`, merchant.merchantUUID, `REF-${i}`, day, `${day} 10:00:00`);
});
const paid = (await (await call('processCard', purchaseBody)).json()) as { transactionID: string };

const csv = [
  'transactionReferenceID,transactionAmount,transactionCurrency,transactionProduct,cardID,cardKey',
  ...Array.from({ length: LINES }, (_, i) => `B-${i},1.00,AUD,Box,${card.cardID},${card.cardKey}`),
].join('\n');
const batchFile = Buffer.from(zipSync({ 'batch.csv': new TextEncoder().encode(csv) })).toString('base64');

let peakRss = process.memoryUsage().rss;
const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 5);
const delay = monitorEventLoopDelay({ resolution: 1 });
delay.enable();

// Small requests in the background, one at a time, timed from send to answer.
let stop = false;
const latencies: number[] = [];
const background = (async () => {
  while (!stop) {
    const t = performance.now();
    await (
      await call('queryCard', { method: 'queryCard', ...merchant, transactionID: paid.transactionID, hash: 'x' })
    ).arrayBuffer();
    latencies.push(performance.now() - t);
  }
})();

const timed = async (name: string, run: () => Promise<Response>) => {
  const t = performance.now();
  const r = await run();
  const bytes = (await r.arrayBuffer()).byteLength;
  console.log(`${name}: ${(performance.now() - t).toFixed(0)} ms to answer (${r.status}, ${bytes} bytes)`);
};
if (args.only !== 'settlement' && args.only !== 'idle')
  await timed(`processBatch of ${LINES} lines`, () =>
    call('processBatch', { method: 'processBatch', ...merchant, batchFile, fileHash: 'x' }),
  );
if (args.only !== 'batch' && args.only !== 'idle')
  await timed(`getSettlement of ${SETTLED_ROWS} rows`, () =>
    call('getSettlement', { method: 'getSettlement', ...merchant, settlementFrom: day, settlementTo: day, hash: 'x' }),
  );
// --only idle: the small requests alone for 3 s, the machine's own baseline.
if (args.only === 'idle') await new Promise((r) => setTimeout(r, 3000));
// Let a batch that runs in the background finish before the measure ends.
for (let i = 0; i < 200 && (await sb.store.get("SELECT 1 FROM batches WHERE status = 'pending'")); i++)
  await new Promise((r) => setTimeout(r, 50));
stop = true;
await background;
delay.disable();
clearInterval(sampler);

latencies.sort((a, b) => a - b);
console.log(
  `event loop: longest stall ${(delay.max / 1e6).toFixed(1)} ms, p99 ${(delay.percentile(99) / 1e6).toFixed(1)} ms`,
);
console.log(
  `small requests meanwhile: ${latencies.length}, slowest ${latencies.at(-1)!.toFixed(1)} ms, p50 ${latencies[latencies.length >> 1]!.toFixed(1)} ms`,
);
console.log(`peak RSS ${(peakRss / 1e6).toFixed(0)} MB`);
server.close();
await sb.close();
rmSync(dir, { recursive: true, force: true });
