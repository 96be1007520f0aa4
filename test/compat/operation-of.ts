// Which operation of the contract a corpus entry is: the path as the gateway routes it (trailing
// slashes dropped, the method a path names: x-method-in-path) and the method its body or its id names.
import { operations, type ContractOperation } from '../../generated/operations.ts';
import { methodPath } from '../../server-stubs/index.ts';
import type { LoadedEntry } from './corpus.ts';

/** The path as the gateway routes it, and the method. */
export function route(entry: LoadedEntry): { path: string; method: string | undefined } {
  const named = methodPath(entry.path);
  if (named) return { path: named.path, method: (entry.body.method as string | undefined) ?? named.method };
  return {
    path: entry.path.replace(/\/+$/, '') || '/',
    method: (entry.body.method as string | undefined) ?? entry.operation,
  };
}

export function operationOf(entry: LoadedEntry): ContractOperation {
  const { path, method } = route(entry);
  const op =
    operations.find((o) => o.path === path && o.method === method) ??
    operations.find((o) => o.path === path && o.operationId === entry.operation);
  if (!op) throw new Error(`${entry.id}: no operation ${method} at ${path}`);
  return op;
}
