// Where the stubs server's CPU goes under the bench's load: `npm run bench -- --stubs-profile` runs
// bench/servers/stubs.ts once more after the rounds, under V8's sampling profiler (--cpu-prof), loads
// it with the same mix for the run's duration (after the same warm-up), stops it, and prints the
// samples summed by place (this package's folders, each package, Node's layers: bench/cold-profile.ts's
// places) and the functions that took the most samples themselves. The profile is kept
// (bench/results/stubs.cpuprofile) for Chrome's DevTools or speedscope. The profiler slows what it
// samples: read the shares, not the milliseconds, against an unprofiled round.
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { byPlace, type Profile, stopAndKeep } from './cold-profile.ts';
import { check, processCpuMs, start } from './harness.ts';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.join(HERE, '..');
const INTERVAL_US = 250;

/** The functions with the most samples of their own, as `name file:line`, largest first (idle left out). */
export function byFunction(profile: Profile, intervalUs: number): [string, number][] {
  const sums = new Map<string, number>();
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  profile.samples.forEach((id, i) => {
    const { functionName, url, lineNumber } = nodes.get(id)!.callFrame;
    if (functionName === '(idle)') return;
    const file = url.startsWith('file://') ? path.relative(ROOT, fileURLToPath(url)) : url;
    const name = `${functionName || '(anonymous)'}${file ? ` ${file}:${(lineNumber ?? 0) + 1}` : ''}`;
    sums.set(name, (sums.get(name) ?? 0) + Math.min(profile.timeDeltas[i] ?? 0, 2 * intervalUs) / 1000);
  });
  return [...sums].sort((a, b) => b[1] - a[1]);
}

/** One profiled load of the stubs server: `load` drives it (warm-up and measured load alike). */
export async function stubsProfile(
  load: (port: number) => Promise<{ requests: { total: number } }>,
  warmup: (port: number) => Promise<unknown>,
): Promise<void> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'pgw-stubs-profile-'));
  const flags = `--cpu-prof --cpu-prof-dir=${dir} --cpu-prof-interval=${INTERVAL_US}`;
  const { child, port } = await start('servers/stubs.ts', {
    NODE_OPTIONS: [process.env.NODE_OPTIONS, flags].filter(Boolean).join(' '),
  });
  let answered = 0;
  let cpuMs = 0;
  try {
    await check(port);
    await warmup(port);
    const before = processCpuMs(child.pid);
    answered = (await load(port)).requests.total;
    cpuMs = processCpuMs(child.pid) - before;
  } catch (error) {
    child.kill();
    throw error;
  }
  const { profile, kept } = await stopAndKeep(child, dir, 'stubs');
  const places = byPlace(profile, INTERVAL_US);
  const total = places.reduce((n, [, ms]) => n + ms, 0);
  const share = (ms: number) => `${((100 * ms) / total).toFixed(1).padStart(5)} %`;
  console.log(
    `\nwhere the stubs server's CPU went under load (profiled: ${answered} answers, ${answered ? ((cpuMs * 1000) / answered).toFixed(0) : '?'} µs of CPU each with the profiler on; start-up and warm-up included in the samples, ${total.toFixed(0)} ms):`,
  );
  for (const [place, ms] of places.slice(0, 12)) console.log(`${share(ms)}  ${place}`);
  console.log('the functions with the most samples of their own:');
  for (const [name, ms] of byFunction(profile, INTERVAL_US).slice(0, 20)) console.log(`${share(ms)}  ${name}`);
  console.log(`the profile: ${path.relative(process.cwd(), kept)} (Chrome DevTools' Performance panel, or speedscope)`);
}
