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
export type { Answer, GatewayHandlers, HandlerInput, HandlerName, HandlerResult } from '../generated/handlers.ts';
export { operations } from '../generated/operations.ts';
export { refusals, refuse, type Refusal } from './core/refusals.ts';
