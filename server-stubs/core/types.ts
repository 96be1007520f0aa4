// The shapes the core works with: a request and a response in plain data, so that any HTTP server
// (node:http, Fastify, a test) can drive it.
import type { ContractOperation } from '../../generated/operations.ts';

export interface GatewayRequest {
  /** HTTP method, e.g. POST. */
  verb: string;
  /** Path and query, e.g. /npp/payto/payments?status=approved. */
  url: string;
  /** Header names in lower case. */
  headers: Readonly<Record<string, string | undefined>>;
  /** The raw body as received. */
  body?: Uint8Array | string | undefined;
}

export interface GatewayResponse {
  status: number;
  headers: Record<string, string>;
  /**
   * A file answer may be a stream of chunks (a settlement export too large to hold): the adapter
   * writes them as they come, with back-pressure, and ends the connection if the stream fails.
   */
  body: string | Uint8Array | AsyncIterable<Uint8Array>;
}

/** A merchant or partner account: what authentication checks credentials against. */
export interface Account {
  kind: 'merchant' | 'partner';
  id: string;
  apiKey: string;
  passphrase: string;
}

/** Where the core finds accounts; the implementation provides it (a database, a config file...). */
export interface Accounts {
  find(kind: Account['kind'], id: string): Account | undefined | Promise<Account | undefined>;
  /** The merchant an unexpired access token stands for. */
  findByAccessToken(token: string): Account | undefined | Promise<Account | undefined>;
}

/** What every handler receives beside its input. */
export interface HandlerContext {
  operation: ContractOperation;
  /** The authenticated account (the merchant an access token stands for, on token-only calls). */
  account: Account;
  /**
   * The body's fields that no form of the operation declares, as sent: dropped from the handler's
   * input as the gateway ignores them (x-unknown-fields: ignore, logged `unknown fields ignored`), and
   * given here for a rule that must still read them (the sandbox refuses a card number in one).
   * Absent when there are none.
   */
  ignoredFields?: Readonly<Record<string, unknown>>;
}

/**
 * What happens when a handler's answer breaks the contract:
 * - error: answer 500 with a refusal (-4) whose message names the field (development and tests);
 * - refuse: answer 500 with a plain -4 refusal, and log the details;
 * - log: send the answer anyway, log it and count it.
 */
export type ResponseValidationMode = 'error' | 'refuse' | 'log';

export interface Logger {
  /** Refusals (the caller's fault); a logger without it is told only warnings and errors. */
  info?(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

export interface GatewayMetrics {
  requests: number;
  refusals: number;
  violations: number;
  failures: number;
}

export type { ContractOperation };
