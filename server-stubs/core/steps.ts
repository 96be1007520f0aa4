// What may wait, told apart from what answers at once. The pipeline (gateway.ts) and authentication
// (authentication.ts) are plain functions: where an account lookup, a handler or a unit of work
// answers with a promise, the rest runs when it settles; where everything answers at once, the
// request is answered at once, with no promise, microtask or generator made for it. (They were
// generators, driven step by step: that cost every request the generators' objects and resumptions,
// issue #44, bench/in-process.ts.)

export const isThenable = (value: unknown): value is PromiseLike<unknown> =>
  value instanceof Promise ||
  (typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function');
