// Where a cold start's CPU goes: `npm run bench -- --cold-profile` launches the compiled server
// (bench/servers/cold-start.js) once under V8's sampling profiler (--cpu-prof), sends it its first
// request, stops it, and sums the profile's samples by where they ran: Node's module loaders
// (resolving, reading, compiling: the cost of how many modules and how large), each package under
// node_modules, the server's bundle (dist/server.js) and each folder of this package's dist/, the
// generated validators, the garbage collector.
// The profile itself is kept (bench/results/cold-start.cpuprofile) for Chrome's DevTools or
// speedscope. Sampled every 100 µs, so a share of a few ms is only roughly placed; the profiler
// slows what it samples, so the sum is more than the CPU of an unprofiled start (bench/run.ts's).
//
//   npm run bench -- --cold-profile     after the cold starts of a bench run
//   npm run build && node bench/cold-profile.ts     alone
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { coldStartEnv } from './harness.ts';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.join(HERE, '..');

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber?: number };
  children?: number[];
}
export interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** What a sample's code is part of, by its script's URL. */
export function placeOf(url: string, fn: string): string | undefined {
  if (!url) {
    if (fn === '(idle)') return undefined;
    // The loaders' native helpers: a module's file looked up, its package.json read, its code compiled.
    if (
      /^(internalModuleStat|getPackageScopeConfig|compileFunction|compileFunctionForCJSLoader|readPackageJSON|getNearestParentPackageJSON.*|readFileUtf8|ModuleWrap|link|instantiate|evaluate)$/.test(
        fn,
      )
    )
      return "Node's module loaders";
    return fn; // (program), (garbage collector), another native function
  }
  if (url.startsWith('node:internal/modules') || url === 'node:internal/bootstrap/realm')
    return "Node's module loaders";
  if (url.startsWith('node:internal/deps/undici')) return 'undici (Node-internal)';
  if (url.startsWith('node:')) return `Node: ${url.replace(/^node:(internal\/)?/, '').split('/')[0]}`;
  const file = url.startsWith('file://') ? path.relative(ROOT, fileURLToPath(url)) : url;
  const pkg = /(?:^|\/)node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(file);
  if (pkg) return pkg[1];
  if (file.startsWith('generated/validators')) return 'generated/validators (Ajv standalone)';
  const parts = file.split(path.sep);
  return parts[0] === 'dist' ? parts.slice(0, 2).join('/') : parts[0];
}

/**
 * Milliseconds of samples per place, largest first (idle left out). A sample's time is the wall time
 * since the previous one, which on a busy machine includes the time the process waited for a core:
 * a gap longer than two intervals counts as two, so that CPU, not the machine's load, is summed.
 */
export function byPlace(profile: Profile, intervalUs: number): [string, number][] {
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const sums = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    const frame = nodes.get(id)!.callFrame;
    const place = placeOf(frame.url, frame.functionName);
    const us = Math.min(profile.timeDeltas[i] ?? 0, 2 * intervalUs);
    if (place) sums.set(place, (sums.get(place) ?? 0) + us / 1000);
  });
  return [...sums].sort((a, b) => b[1] - a[1]);
}

const INTERVAL_US = 100;

/**
 * Stops a server started with --cpu-prof-dir=dir (SIGTERM: it exits, and Node writes the profile as
 * it does), keeps the profile as bench/results/<name>.cpuprofile and removes dir.
 */
export async function stopAndKeep(
  child: ChildProcess,
  dir: string,
  name: string,
): Promise<{ profile: Profile; kept: string }> {
  if (child.exitCode === null && child.signalCode === null) {
    const exited = new Promise((resolve) => child.on('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }
  const file = (await readdir(dir)).find((f) => f.endsWith('.cpuprofile'));
  if (!file) throw new Error(`${name} profile: Node wrote no profile`);
  const text = await readFile(path.join(dir, file), 'utf8');
  await rm(dir, { recursive: true, force: true });
  const kept = path.join(HERE, 'results', `${name}.cpuprofile`);
  await mkdir(path.dirname(kept), { recursive: true });
  await writeFile(kept, text);
  return { profile: JSON.parse(text) as Profile, kept };
}

/** One profiled cold start: launch, first answer, stop; the profile's places printed and the profile kept. */
export async function coldProfile(request: {
  path: string;
  method: string;
  headers: Record<string, string>;
  body?: string | undefined;
}): Promise<void> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'pgw-cold-profile-'));
  const child = spawn(
    process.execPath,
    [
      '--cpu-prof',
      `--cpu-prof-dir=${dir}`,
      `--cpu-prof-interval=${INTERVAL_US}`,
      path.join(HERE, 'servers/cold-start.js'),
      '0',
    ],
    { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, NODE_ENV: 'production', ...coldStartEnv } },
  );
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      const m = /ready (\d+)/.exec(chunk.toString());
      if (m) resolve(Number(m[1]));
    });
    child.on('exit', (code) => reject(new Error(`cold-start.js exited with ${code}`)));
  });
  const answer = await fetch(`http://127.0.0.1:${port}${request.path}`, {
    method: request.method,
    headers: request.headers,
    body: request.body ?? null,
  });
  await answer.text();
  const { profile, kept } = await stopAndKeep(child, dir, 'cold-start');
  const places = byPlace(profile, INTERVAL_US);
  const total = places.reduce((n, [, ms]) => n + ms, 0);
  console.log(
    `\nwhere one cold start's CPU went (launch to first answer: ${total.toFixed(0)} ms of CPU sampled, the profiler's own cost included):`,
  );
  for (const [place, ms] of places.slice(0, 15))
    console.log(`${ms.toFixed(1).padStart(7)} ms ${((100 * ms) / total).toFixed(0).padStart(3)} %  ${place}`);
  console.log(`the profile: ${path.relative(process.cwd(), kept)} (Chrome DevTools' Performance panel, or speedscope)`);
}

// Run alone: the bench's own first request (getSurcharge of the mix), against dist/ as built.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { mix } = await import('./harness.ts');
  await coldProfile(mix.find((m) => m.op.operationId === 'getSurcharge')!.request);
}
