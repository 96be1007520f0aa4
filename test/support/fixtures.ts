// Accounts and handlers for driving the gateway core in tests: the sandbox credentials of the spec,
// and handlers that answer each operation's first result example.
import { operations, type ContractOperation } from '../../generated/operations.ts';
import type { Account, Accounts, GatewayHandlers, HandlerContext } from '../../server-stubs/index.ts';
import { SANDBOX_ACCESS_TOKEN, firstResultExample, sandbox } from './requests.ts';

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

/** Handlers that record each call and answer the operation's first result example. */
export function echoHandlers(calls: Call[] = [], override?: (op: ContractOperation, result: any) => unknown): Partial<GatewayHandlers<HandlerContext>> {
  const handlers: Record<string, (input: Call['input'], context: HandlerContext) => unknown> = {};
  for (const op of operations.filter((o) => !o.aliasOf)) {
    handlers[op.operationId] = (input, context) => {
      calls.push({ operationId: op.operationId, input, context });
      let result = structuredClone(firstResultExample(op)) as any;
      if (result && typeof result === 'object' && !(result instanceof Uint8Array)) for (const h of op.resultHashes) delete result[h.name];
      return override ? override(op, result) : result;
    };
  }
  return handlers as Partial<GatewayHandlers<HandlerContext>>;
}
