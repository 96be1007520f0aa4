// What the suite sent, kept per check: send() records each request as it goes on the wire, and the
// check that sent it is found through AsyncLocalStorage, so no check passes it along (replay.ts
// prints the last one of a failed check).
import { AsyncLocalStorage } from 'node:async_hooks';
import type { ContractOperation } from '../generated/operations.ts';

/** A request exactly as the suite sent it. */
export interface Sent {
  op: ContractOperation;
  verb: string;
  url: string;
  headers: Record<string, string>;
  body?: string | undefined;
  params: Record<string, string>;
  query: Record<string, string>;
}

const current = new AsyncLocalStorage<{ last?: Sent }>();

/** Runs a check, keeping the last request it sends. */
export async function recording<T>(run: () => Promise<T>): Promise<{ value?: T; error?: unknown; last?: Sent }> {
  const store: { last?: Sent } = {};
  try {
    return { value: await current.run(store, run), ...(store.last ? { last: store.last } : {}) };
  } catch (error) {
    return { error, ...(store.last ? { last: store.last } : {}) };
  }
}

export const record = (sent: Sent): void => {
  const store = current.getStore();
  if (store) store.last = sent;
};
