// npm run bench -- --work-before-refusal [--rounds 5] [--baseline DIR]   (npm run bench:work-before-refusal)
//
// How long the sandbox holds its event loop to refuse a body built to cost it work: an unauthenticated
// body with many unknown fields (JSON and form, up to processBatch's 16 MiB), a 1 MiB processCard body
// of unknown fields, and a signed batch whose one line holds a field of several MiB. The hold is the
// longest gap between two turns of the event loop while the request is handled (a heartbeat on
// setImmediate): every other client of the instance waits that long. In-process (gateway.handle), so
// that the figure is the sandbox's work, not the loopback's.
//
// --baseline DIR runs the same requests on the sandbox of another checkout of this package (DIR, with
// node_modules), in the same process, the two taking turns request by request: a change's before and
// after side by side. Each is reported by its median over the rounds.
import path from 'node:path';
import { zipSync } from 'fflate';
import { buildRequest, operation } from '../contract/index.ts';
import type { GatewayRequest, GatewayResponse } from '../server-stubs/index.ts';
import { BATCH_HEADER, merchant, signed } from '../test/hardening/support.ts';
import { benchArgs } from './args.ts';

const { values: args } = benchArgs(import.meta.url, {
  options: {
    'work-before-refusal': { type: 'boolean' },
    rounds: { type: 'string', default: '5' },
    baseline: { type: 'string' },
  },
});
const ROUNDS = Number(args.rounds);

interface Sandbox {
  gateway: { handle(request: GatewayRequest): Promise<GatewayResponse> };
  close(): Promise<void>;
}

async function sandboxOf(dir: string): Promise<Sandbox> {
  const { createSandbox } = await import(path.resolve(dir, 'sandbox/index.ts'));
  return createSandbox({ dbPath: ':memory:', env: {} });
}

/** The longest the event loop waited while `work` ran, in ms, and what it answered. */
async function hold(work: () => Promise<GatewayResponse>): Promise<{ ms: number; answer: string }> {
  let last = performance.now();
  let most = 0;
  let on = true;
  const beat = () => {
    const now = performance.now();
    most = Math.max(most, now - last);
    last = now;
    if (on) setImmediate(beat);
  };
  setImmediate(beat);
  const answer = await work();
  on = false;
  most = Math.max(most, performance.now() - last);
  await new Promise((r) => setImmediate(r));
  return { ms: most, answer: String(answer.body).replace(/\s+/g, ' ').slice(0, 110) };
}

const unknownFields = (method: string, n: number) => {
  const body: Record<string, unknown> = {
    method,
    merchantUUID: 'nobody',
    apiKey: 'x',
    batchFile: 'AAAA',
    fileHash: 'x',
  };
  for (let i = 0; i < n; i++) body[`f${i}`] = 0;
  return body;
};

/** An unauthenticated JSON body of `n` unknown fields. */
function jsonCase(method: string, n: number): () => GatewayRequest {
  const body = unknownFields(method, n);
  const text = Buffer.from(JSON.stringify(body));
  return () => ({ ...buildRequest(operation(method as 'processBatch'), { body }), body: text });
}

/** The same, form-encoded (written by the form protocol's module). */
function formCase(method: string, n: number): () => GatewayRequest {
  const request = buildRequest(operation(method as 'processBatch'), { body: unknownFields(method, n), wire: 'form' });
  return () => request;
}

/** A signed batch whose one line holds a field of `bytes` (a stored card's ID and key; they need not exist). */
function batchCase(bytes: number): () => GatewayRequest {
  const csv = `${BATCH_HEADER}\nB-1,10.00,AUD,${'P'.repeat(bytes)},1234567890123,abcdefgh\n`;
  const batchFile = Buffer.from(zipSync({ 'batch.csv': new TextEncoder().encode(csv) })).toString('base64');
  const request = signed('processBatch', { method: 'processBatch', ...merchant, batchFile });
  return () => request;
}

const MiB = 1024 * 1024;
const cases: [string, () => GatewayRequest][] = [
  ['processBatch, JSON, 10 000 unknown fields (99 kB), no credentials', jsonCase('processBatch', 10_000)],
  ['processBatch, JSON, 100 000 unknown fields (1.1 MB), no credentials', jsonCase('processBatch', 100_000)],
  ['processBatch, JSON, 1 000 000 unknown fields (12 MB), no credentials', jsonCase('processBatch', 1_000_000)],
  ['processBatch, form, 1 000 000 unknown fields (10 MB), no credentials', formCase('processBatch', 1_000_000)],
  ['processCard, JSON, 90 000 unknown fields (1 MB), no credentials', jsonCase('processCard', 90_000)],
  ['processBatch, signed, one line holding a 1 MiB field', batchCase(MiB)],
  ['processBatch, signed, one line holding a 7 MiB field', batchCase(7 * MiB)],
];

const subjects: [string, Sandbox][] = [['after', await sandboxOf(path.resolve(import.meta.dirname, '..'))]];
if (args.baseline) subjects.unshift(['before', await sandboxOf(args.baseline)]);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
console.log(
  `The event loop's longest hold while one request is refused, median of ${ROUNDS} rounds${
    args.baseline ? ` (before: ${args.baseline}; after: this checkout; taking turns)` : ''
  }\n`,
);
for (const [name, make] of cases) {
  const holds = new Map<string, number[]>(subjects.map(([s]) => [s, []]));
  const answers = new Map<string, string>();
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 ? [...subjects].reverse() : subjects;
    for (const [subject, sb] of order) {
      const request = make();
      const { ms, answer } = await hold(() => sb.gateway.handle(request));
      holds.get(subject)!.push(ms);
      answers.set(subject, answer);
      await new Promise((r) => setTimeout(r, 20));
    }
  }
  console.log(name);
  for (const [subject] of subjects)
    console.log(
      `  ${subject.padEnd(6)} ${median(holds.get(subject)!).toFixed(1).padStart(8)} ms  ${answers.get(subject)}`,
    );
  if (subjects.length === 2) {
    const before = median(holds.get('before')!);
    const after = median(holds.get('after')!);
    console.log(`  before/after ${(before / after).toFixed(1)}x`);
  }
}
for (const [, sb] of subjects) await sb.close();
