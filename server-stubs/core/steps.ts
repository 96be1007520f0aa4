// Steps that may wait, run without waiting when nothing does. The core's request pipeline is written
// once, as a generator that yields what an implementation gives back (an account lookup, a handler's
// answer): a plain value goes straight back in, a promise is awaited first. A backend whose lookups
// and handlers answer synchronously so pays for no promise and no microtask per request; one that
// answers with promises runs the same pipeline, asynchronously.

export type Steps<T> = Generator<unknown, T, any>;

export const isThenable = (value: unknown): value is PromiseLike<unknown> =>
  value instanceof Promise ||
  (typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function');

/** The pipeline's result: a value when no step waited, else a promise of it. */
export function run<T>(steps: Steps<T>): T | Promise<T> {
  let step = steps.next();
  while (!step.done) {
    if (isThenable(step.value)) return finish(steps, step.value);
    step = steps.next(step.value);
  }
  return step.value;
}

async function finish<T>(steps: Steps<T>, pending: PromiseLike<unknown>): Promise<T> {
  let step = await resume(steps, pending);
  while (!step.done) step = isThenable(step.value) ? await resume(steps, step.value) : steps.next(step.value);
  return step.value;
}

/** Awaits what was yielded and passes it back in; a rejection is thrown where it was yielded. */
async function resume<T>(steps: Steps<T>, pending: PromiseLike<unknown>): Promise<IteratorResult<unknown, T>> {
  let value: unknown;
  try {
    value = await pending;
  } catch (error) {
    return steps.throw(error);
  }
  return steps.next(value);
}
