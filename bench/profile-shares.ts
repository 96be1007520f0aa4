// npm run bench:profile-shares -- DIR|FILE… [--save NAME --what TEXT]: where a sandbox instance's CPU went, from the profiles
// `npm run bench -- --store … --cpu-prof DIR` wrote. Each sample (its self time) is given to the first
// frame up its stack that says whose work it is: a native call (node:sqlite's exec or run, a hash, a
// socket write) counts for the sandbox module that made it. The shares are of the busy samples (the
// idle ones left out), so that they read as "of a request's CPU in this process". --save NAME keeps
// them in bench/saved/profile-NAME.json and rewrites docs/BENCHMARKS.md's profile table from every
// saved profile (test/docs/figures.test.ts holds the page to them).
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { type ProfileShares, profileFigures, profileFile, savedProfiles, withFigures } from './figures.ts';
import { benchArgs } from './args.ts';

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

const STORE = /sandbox\/(store-sqlite|store-postgres|store|fresh-id)\.ts$/;
const PG_CLIENT = /node_modules\/(pg|pg-pool|pg-protocol|pg-cursor|pg-types)\//;
// The SQLite store's grouped commits: the group's BEGIN and COMMIT, a unit's SAVEPOINT and RELEASE, the
// reader's snapshot; PostgreSQL's BEGIN on a pooled connection.
const TRANSACTION_CONTROL = new Set([
  'transaction',
  'begin',
  'beginImmediate',
  'connectAndBegin',
  'openGroup',
  'join',
  'end',
  'commit',
  'commitAtTurn',
  'snapshot',
  'endSnapshot',
]);

/**
 * The part of the work a sample's stack is, from its leaf up: the first frame of this package's code
 * or of a library decides, and whether Node's own I/O layer (node: frames, native calls) lies between
 * it and the leaf tells I/O (a socket write for an HTTP answer or a PostgreSQL round trip) from work.
 */
function partOf(stack: { functionName: string; url: string }[]): string {
  const leaf = stack[0]!.functionName;
  if (leaf === '(idle)') return 'idle';
  if (leaf === '(garbage collector)') return 'garbage collection';
  if (leaf === '(program)') return 'native, unattributed (program)';
  let io = false;
  for (const { functionName: fn, url } of stack) {
    if (url === '[worker eval]') return "SQLite's checkpoints (the store's thread, beside the event loop)";
    if (!url || url.startsWith('node:')) {
      if (url.startsWith('node:')) io ||= /^node:(net|_http|internal\/stream|internal\/streams|stream)/.test(url);
      continue;
    }
    if (STORE.test(url) && TRANSACTION_CONTROL.has(fn)) return 'transaction control (BEGIN, COMMIT)';
    if (STORE.test(url) || PG_CLIENT.test(url))
      return io ? 'round trips to PostgreSQL (socket I/O)' : "the store's statements (in the instance)";
    if (url.endsWith('sandbox/vault-crypto.ts')) return 'encryption (the vault)';
    if (/sandbox\/(notifier|delivery-queue|notify-send)\.ts$/.test(url)) return 'the notifier';
    if (url.includes('/sandbox/')) return "the handler's logic (sandbox/)";
    if (/\/(server-stubs|runtime|generated)\//.test(url) || url.includes('node_modules/ajv'))
      return io ? 'HTTP: reading requests, writing answers (Node)' : 'the validating server (server-stubs/)';
    if (url.includes('node_modules/')) return 'other libraries';
  }
  return io ? 'HTTP: reading requests, writing answers (Node)' : 'Node: event loop, timers, module loading';
}

function shares(file: string): Map<string, number> {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const parts = new Map<number, string>();
  const part = (id: number) => {
    let known = parts.get(id);
    if (known === undefined) {
      const stack = [];
      for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) stack.push(byId.get(at)!.callFrame);
      known = partOf(stack);
      parts.set(id, known);
    }
    return known;
  };
  const totals = new Map<string, number>();
  profile.samples.forEach((id, k) => {
    const p = part(id);
    totals.set(p, (totals.get(p) ?? 0) + (profile.timeDeltas[k] ?? 0));
  });
  return totals;
}

const args = benchArgs(import.meta.url, {
  allowPositionals: true,
  options: { save: { type: 'string' }, what: { type: 'string' } },
});
const files = args.positionals.flatMap((p) =>
  statSync(p).isDirectory()
    ? readdirSync(p)
        .filter((f) => f.endsWith('.cpuprofile'))
        .map((f) => path.join(p, f))
    : [p],
);
if (!files.length || (args.values.save && !args.values.what)) {
  console.error(
    'usage: npm run bench:profile-shares -- DIR|FILE… [--save NAME --what "the command profiled"] (the profiles of --cpu-prof DIR)',
  );
  process.exit(2);
}
const totals = new Map<string, number>();
for (const file of files) for (const [part, us] of shares(file)) totals.set(part, (totals.get(part) ?? 0) + us);
totals.delete('idle');
const busy = [...totals.values()].reduce((a, b) => a + b, 0);
console.log(`${files.length} profile(s), ${(busy / 1e6).toFixed(1)} s busy\n`);
console.log('| part of the work | share of the busy samples |\n|---|---:|');
for (const [part, us] of [...totals].sort((a, b) => b[1] - a[1]))
  console.log(`| ${part} | ${((us / busy) * 100).toFixed(1)} % |`);

if (args.values.save) {
  const ROOT = path.resolve(import.meta.dirname, '..');
  const saved: ProfileShares = {
    name: args.values.save,
    what: args.values.what!,
    date: new Date(Math.max(...files.map((f) => statSync(f).mtimeMs))).toISOString(),
    node: process.version,
    profiles: files.length,
    busySeconds: busy / 1e6,
    shares: Object.fromEntries([...totals].map(([part, us]) => [part, us / busy])),
  };
  writeFileSync(path.join(ROOT, profileFile(saved.name)), `${JSON.stringify(saved, null, 2)}\n`);
  const page = path.join(ROOT, 'docs/BENCHMARKS.md');
  writeFileSync(page, withFigures(readFileSync(page, 'utf8'), 'profiles', profileFigures(savedProfiles(ROOT))));
  console.log(`\nsaved: ${profileFile(saved.name)} and docs/BENCHMARKS.md's profile table`);
}
