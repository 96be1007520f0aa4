// libfaketime (Debian's `faketime`, installed by scripts/setup/faketime.sh): a process started with
// LD_PRELOAD of the library and FAKETIME set runs on a clock moved by the offset given (Date.now(),
// timers, the HTTP Date header alike). The library is preloaded directly, not through the `faketime`
// wrapper, which forks: a child started through it outlives a kill of the wrapper.
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';

/** The multithreaded build (Node runs threads), where Debian's package puts it; undefined when absent. */
export function libfaketime(): string | undefined {
  const candidates = [
    ...(existsSync('/usr/lib')
      ? readdirSync('/usr/lib').map((dir) => path.join('/usr/lib', dir, 'faketime/libfaketimeMT.so.1'))
      : []),
    '/usr/lib/faketime/libfaketimeMT.so.1',
    '/usr/local/lib/faketime/libfaketimeMT.so.1',
  ];
  return candidates.find((file) => existsSync(file));
}

export const NO_FAKETIME =
  "libfaketime is not installed: bash scripts/setup/faketime.sh installs Debian's faketime (.ci/run runs it before the tests)";

/**
 * The environment that runs a process on a clock at `instant` now and running on from there: a
 * whole-second offset from the real clock (FAKETIME="+Ns"), the same for every process given it,
 * so that the sandbox and the suite read one time.
 */
export function clockAt(library: string, instant: Date, realNow = Date.now()): Record<string, string> {
  const seconds = Math.round((instant.getTime() - realNow) / 1000);
  return { LD_PRELOAD: library, FAKETIME: `${seconds >= 0 ? '+' : ''}${seconds}s`, TZ: 'UTC' };
}
