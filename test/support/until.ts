// Waiting on a condition rather than a fixed time: a fixed wait is either slow or, on a loaded CI
// machine, too short.

/** Polls `done` every `everyMs` until it holds or `timeoutMs` passes; answers whether it held. */
export async function until(done: () => boolean | Promise<boolean>, timeoutMs: number, everyMs = 50): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await done()) return true;
    await new Promise((r) => setTimeout(r, everyMs));
  }
  return done();
}
