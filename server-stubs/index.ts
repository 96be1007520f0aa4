// The validating server stubs: implement GatewayHandlers, give the accounts, and serve.
export { createGateway, type Gateway, type GatewayOptions, type RequestRecord } from './core/gateway.ts';
export { createNodeHandler, createNodeServer, serverDefaults, type NodeServerOptions } from './http/node.ts';
export { createExpressMiddleware, type GatewayMiddleware } from './http/express.ts';
export type {
  Account,
  Accounts,
  ContractOperation,
  GatewayMetrics,
  GatewayRequest,
  GatewayResponse,
  HandlerContext,
  Logger,
  ResponseValidationMode,
} from './core/types.ts';
export type {
  Answer,
  GatewayHandlers,
  HandlerInput,
  HandlerName,
  HandlerRefusal,
  HandlerResult,
} from '../generated/handlers.ts';
export { operations } from '../generated/operations.ts';
export {
  entry,
  forms,
  refusalFields,
  refusalFor,
  numberedRefusalEntries,
  refusals,
  refuse,
  ruleInWords,
  sandboxRefusals,
  validationRefusals,
  type CatalogueEntry,
  type Refusal,
} from './core/refusals.ts';
// Every refusal's stable code (docs/REFUSALS.md), as a union type for a server team's test to switch on
// (a type only: the catalogues that generate it import this file).
export type { ErrorCode } from '../generated/error-codes.ts';
// What the sandbox, the mock's front and the contract suite build on: the routing of a request to its
// operation and method, the request's normalisation, the card-number check and the digests.
export { bodyBytes } from './core/answer.ts';
export { findCardNumber, luhn, maskCardNumber, maskCardNumbers } from '../runtime/card-numbers.ts';
/** The published document with its exact request schemas back among its components (x-exact-requests). */
export { withExactSchemas } from '../runtime/exact-requests.ts';
export { nodeDigests } from './core/digests.ts';
// The stubs' console log (one safe line per entry, runtime/log-line.ts), for a server that logs elsewhere than stderr.
export { consoleLogger } from './core/log.ts';
export { normalised, withoutUnknownFields } from './core/request.ts';
export { chooseMethod, compile, methodPath, route, servedAt } from './core/router.ts';
// The protocols (docs/WIRE-FORMATS.md; runtime/protocols/): which serve a path, which one a request is in.
export { protocols } from './core/contract.ts';
