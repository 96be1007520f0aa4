// npm run bench:profile-shares -- DIR|FILE…: where a sandbox instance's CPU went, from the profiles
// `npm run bench -- --store … --cpu-prof DIR` wrote. Each sample (its self time) is given to the first
// frame up its stack that says whose work it is: a native call (node:sqlite's exec or run, a hash, a
// socket write) counts for the sandbox module that made it. The shares are of the busy samples (the
// idle ones left out), so that they read as "of a request's CPU in this process".
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
}

/** The parts of a request the write-up names, first match wins (a frame's URL and function). */
const PARTS: [string, (url: string, fn: string) => boolean][] = [
  [
    'transaction control (BEGIN, COMMIT)',
    (url, fn) => /sandbox\/store-(sqlite|postgres)\.ts$/.test(url) && fn === 'transaction',
  ],
  ['encryption (vault)', (url) => url.endsWith('sandbox/vault-crypto.ts')],
  ['notifier', (url) => /sandbox\/(notifier|delivery-queue|notify-send)\.ts$/.test(url)],
  [
    "the store's statements (client side)",
    (url) =>
      /sandbox\/(store[-\w]*|fresh-id)\.ts$/.test(url) ||
      /node_modules\/(pg|pg-pool|pg-protocol|pg-cursor|pg-types|pgpass)\//.test(url),
  ],
  ['the handler’s logic', (url) => /\/sandbox\//.test(url)],
  ['the validating server', (url) => /\/(server-stubs|runtime|generated)\//.test(url) || /node_modules\/ajv/.test(url)],
  ['HTTP, sockets, event loop (Node)', (url) => url.startsWith('node:') || url === ''],
];

function shares(file: string): Map<string, number> {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const partOf = new Map<number, string>();
  const classify = (id: number): string => {
    const known = partOf.get(id);
    if (known) return known;
    const { functionName: fn, url } = byId.get(id)!.callFrame;
    let part: string | undefined;
    if (fn === '(idle)') part = 'idle';
    else if (fn === '(garbage collector)') part = 'garbage collection';
    else if (fn === '(program)') part = 'native, unattributed (program)';
    else if (url) part = PARTS.find(([, test]) => test(url, fn))?.[0];
    const up = parent.get(id);
    part ??= up === undefined ? 'HTTP, sockets, event loop (Node)' : classify(up);
    // A native frame (no URL) takes its caller's part unless the caller is Node's own.
    if (!url && up !== undefined && part === 'HTTP, sockets, event loop (Node)') {
      const caller = classify(up);
      if (caller !== 'idle') part = caller;
    }
    partOf.set(id, part);
    return part;
  };
  const totals = new Map<string, number>();
  profile.samples.forEach((id, k) => {
    const part = classify(id);
    totals.set(part, (totals.get(part) ?? 0) + (profile.timeDeltas[k] ?? 0));
  });
  return totals;
}

const files = process.argv.slice(2).flatMap((p) =>
  statSync(p).isDirectory()
    ? readdirSync(p)
        .filter((f) => f.endsWith('.cpuprofile'))
        .map((f) => path.join(p, f))
    : [p],
);
if (!files.length) {
  console.error('usage: npm run bench:profile-shares -- DIR|FILE… (the profiles of --cpu-prof DIR)');
  process.exit(1);
}
const totals = new Map<string, number>();
for (const file of files) for (const [part, us] of shares(file)) totals.set(part, (totals.get(part) ?? 0) + us);
totals.delete('idle');
const busy = [...totals.values()].reduce((a, b) => a + b, 0);
console.log(`${files.length} profile(s), ${(busy / 1e6).toFixed(1)} s busy\n`);
console.log('| part of the work | share of the busy samples |\n|---|---:|');
for (const [part, us] of [...totals].sort((a, b) => b[1] - a[1]))
  console.log(`| ${part} | ${((us / busy) * 100).toFixed(1)} % |`);
