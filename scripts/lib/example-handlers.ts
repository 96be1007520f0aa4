// Accounts and handlers for driving the gateway core in tests and benchmarks: the sandbox credentials,
// and handlers that answer each operation's first result example.
import { operations, type ContractOperation } from '../../generated/operations.ts';
import type { Account, Accounts, GatewayHandlers, HandlerContext } from '../../server-stubs/index.ts';
import { SANDBOX_ACCESS_TOKEN, firstResultExample, sandbox } from '../../contract/index.ts';

export const merchant: Account = { kind: 'merchant', id: sandbox.merchantUUID, apiKey: sandbox.apiKey, passphrase: sandbox.passphrase };
export const partner: Account = { kind: 'partner', id: sandbox.partnerUUID, apiKey: sandbox.apiKey, passphrase: sandbox.passphrase };

export const accounts: Accounts = {
  find: (kind, id) => [merchant, partner].find((a) => a.kind === kind && a.id === id),
  findByAccessToken: (token) => (token === SANDBOX_ACCESS_TOKEN ? merchant : undefined),
};

export interface Call {
  operationId: string;
  input: { body: unknown; params: unknown; query: unknown };
  context: HandlerContext;
}

/** Handlers that answer the operation's first result example, recording each call when given a list. */
export function echoHandlers(calls?: Call[], override?: (op: ContractOperation, result: any) => unknown): Partial<GatewayHandlers<HandlerContext>> {
  const handlers: Record<string, (input: Call['input'], context: HandlerContext) => unknown> = {};
  for (const op of operations.filter((o) => !o.aliasOf)) {
    let example = firstResultExample(op) as any;
    // The hashes a result carries are the stubs' to add, from their recipes. The example is rebuilt
    // without them rather than `delete`d from, which would leave V8 a slow dictionary-mode object
    // unlike the literal a real handler returns, and slow down every step after the handler.
    if (example && typeof example === 'object' && !(example instanceof Uint8Array) && op.resultHashes.length) {
      const hashes = new Set(op.resultHashes.map((h) => h.name));
      example = Object.fromEntries(Object.entries(example).filter(([name]) => !hashes.has(name)));
    }
    handlers[op.operationId] = (input, context) => {
      calls?.push({ operationId: op.operationId, input, context });
      if (!override) return example;
      return override(op, example instanceof Uint8Array || typeof example !== 'object' ? example : structuredClone(example));
    };
  }
  return handlers as Partial<GatewayHandlers<HandlerContext>>;
}
