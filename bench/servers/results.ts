// The answer each operation gives in the benchmarks, for the servers that are not this package's:
// its first result example, whole (hashes included), found by route and `method`.
import { operations, type ContractOperation } from '../../generated/operations.ts';
import { firstResultExample } from '../../contract/index.ts';

const answers = new Map<ContractOperation, unknown>(operations.map((op) => [op, firstResultExample(op)]));

export function answerFor(path: string, verb: string, body: unknown): { status: number; body: unknown } | undefined {
  const method = (body as { method?: string } | undefined)?.method;
  const op = operations.find(
    (o) => o.path === path && o.verb === verb.toUpperCase() && (o.method === null || o.method === method),
  );
  return op && { status: op.status, body: answers.get(op) };
}
