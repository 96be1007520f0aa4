// The client runtime behind the generated createGatewayClient(): it fills in what the contract lets a
// client compute (method, credentials, message hashes, the version header) and calls openapi-fetch.
// Every fact about operations comes from the generated table it is given. Runs in browsers and Node.
import createClient, { type Middleware } from 'openapi-fetch';
import type { FormFields, RequestForm } from './forms.ts';
import type { OperationModel } from './operation-model.ts';
import { freshReference, withRetry, type RetryMark, type RetryPolicy } from './retry.ts';
import { signRequest, type SigningContract } from './sign-request.ts';

/** A request type less what the client fills in, form by form. */
export type ClientBody<T, Filled extends PropertyKey> = T extends unknown ? Omit<T, Filled> : never;

export interface ClientOptions {
  baseUrl: string;
  merchantUUID: string;
  apiKey: string;
  /** The merchant's API passphrase: it never leaves the client, it keys the message hashes. */
  passphrase: string;
  /** A partner account, for the /partner operations. */
  partner?: { partnerUUID: string; apiKey: string; passphrase: string };
  fetch?: (request: Request) => Promise<Response>;
  headers?: Record<string, string>;
  /** Retry after a lost answer, as each operation's x-method.retry allows (runtime/retry.ts). Off when absent. */
  retry?: RetryPolicy;
  /**
   * How long a call waits for the whole answer, in milliseconds, before it throws GatewayNetworkError.
   * Default 30 000. A payment that timed out may still have been processed: query it by its
   * reference before sending it again.
   */
  timeoutMs?: number;
  /**
   * openapi-fetch's middleware, in order: `onRequest({ request, schemaPath })` sees each request as it
   * goes (signed: its credentials and hashes are in it, so a change to the body or a signed header
   * breaks them), `onResponse({ request, response })` each answer before the client reads it,
   * `onError` a request that got none. Each attempt of a retried call passes through them.
   */
  middleware?: readonly Middleware[];
}

export type { Middleware };

/** The default of ClientOptions.timeoutMs: finite, so that no call waits for ever. */
export const DEFAULT_TIMEOUT_MS = 30_000;

/** The client's compact copy of a form of the operation table (runtime/forms.ts): accepts and required only where there is a choice. */
export type ClientForm = FormFields & Pick<RequestForm, 'fill' | 'hashes'>;

/**
 * The client's compact projection of an operation of the table (OperationModel), written into
 * generated/client.ts by scripts/generators/client.ts: its name in the client, how to call it and
 * how to sign it, and nothing the client does not read.
 */
export interface ClientOperation extends Pick<OperationModel, 'verb' | 'path'> {
  group: string;
  name: string;
  method?: NonNullable<OperationModel['method']>;
  /** A result that is not JSON: the settlement zip or a batch CSV. */
  result?: 'zip' | 'csv';
  /** Path parameter names, in the order the function takes them. */
  params?: readonly string[];
  query?: true;
  forms?: readonly ClientForm[];
  /** OperationModel's header names by role, with the recipe of the message hash. */
  headers?: Readonly<Record<string, string>>;
  retry?: RetryMark;
}

export interface ClientContract extends SigningContract {
  operations: readonly ClientOperation[];
  /** The media type of the spec's own answers (its refusals, and every result but a file), which this client reads. */
  answerType: string;
}

/** The gateway could not be reached, or the connection failed. */
export class GatewayNetworkError extends Error {
  override readonly name = 'GatewayNetworkError';
  constructor(message: string, options?: { cause: unknown }) {
    super(message, options);
  }
}

/**
 * The gateway (or something in front of it) answered with a status and body that are not in the
 * contract, or could not process the request: 502, 503 or 504, whatever the body (a sandbox whose
 * store is away answers 503 with a -4), with the seconds its Retry-After asks for.
 */
export class GatewayHttpError extends Error {
  override readonly name = 'GatewayHttpError';
  readonly status: number;
  readonly body: unknown;
  readonly retryAfterSeconds: number | undefined;
  constructor(status: number, body: unknown, retryAfterSeconds?: number) {
    super(
      `The gateway answered HTTP ${status} ${UNAVAILABLE.includes(status) ? 'and processed nothing' : 'without a result or refusal'}`,
    );
    this.status = status;
    this.body = body;
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** The statuses of a gateway that could not process the request (a retry may be answered). */
const UNAVAILABLE = [502, 503, 504];

type Coded = { responseCode: string | number };
type Bare = 'responseCode' | 'responseMessage';
/** The members of an answer union that carry more than a code and a message: the results. */
type ResultPart<T> = T extends unknown ? (Exclude<keyof T, Bare> extends never ? never : T) : never;
/** What a processed request answers (the whole union where results are a code and a message too). */
export type Processed<T> = [ResultPart<T>] extends [never] ? T : ResultPart<T>;

/** responseCode 0, whether it came as "0" or 0. */
export const isApproved = <T extends Coded>(result: T): result is Extract<T, Processed<T>> =>
  Number(result.responseCode) === 0;
/** Refused before processing (responseCode below 0): nothing was stored. */
export const isRefused = (result: Coded): boolean => Number(result.responseCode) < 0;
/** Processed, and declined or delayed by the bank (responseCode above 0). */
export const isDeclined = <T extends Coded>(result: T): result is Extract<T, Processed<T>> =>
  Number(result.responseCode) > 0;

/** custom1 to custom3 as sent, or undefined where the gateway echoed an empty array. */
export function customFields(result: { custom1?: string | []; custom2?: string | []; custom3?: string | [] }): {
  custom1: string | undefined;
  custom2: string | undefined;
  custom3: string | undefined;
} {
  const value = (v: string | [] | undefined) => (typeof v === 'string' ? v : undefined);
  return { custom1: value(result.custom1), custom2: value(result.custom2), custom3: value(result.custom3) };
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export function buildClient(options: ClientOptions, contract: ClientContract): Record<string, unknown> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  if (!(Number.isFinite(timeoutMs) && timeoutMs > 0))
    throw new RangeError(`timeoutMs must be a finite number of milliseconds above 0, not ${timeoutMs}`);
  const http = createClient<Record<string, never>>({
    baseUrl: options.baseUrl,
    ...(options.fetch ? { fetch: options.fetch } : {}),
    ...(options.headers ? { headers: options.headers } : {}),
  });
  if (options.middleware?.length) http.use(...options.middleware);
  const accountFor = (kind: string): { id: string; apiKey: string; passphrase: string } => {
    if (kind !== 'partner') return { id: options.merchantUUID, apiKey: options.apiKey, passphrase: options.passphrase };
    if (!options.partner)
      throw new Error('Partner operations need the partner option: partnerUUID, apiKey, passphrase');
    return { id: options.partner.partnerUUID, apiKey: options.partner.apiKey, passphrase: options.partner.passphrase };
  };

  async function call(op: ClientOperation, args: unknown[]): Promise<unknown> {
    const params: Record<string, string> = {};
    for (const [i, name] of (op.params ?? []).entries()) params[name] = String(args[i]);
    const rest = args.slice(op.params?.length ?? 0);
    const input = op.forms ? ((rest.shift() ?? {}) as Record<string, unknown>) : undefined;
    const query = op.query ? (rest.shift() as Record<string, string> | undefined) : undefined;
    const { body, headers } = signRequest(op, contract, accountFor, { params, query, body: input });
    let outcome: { data?: unknown; error?: unknown; response: Response };
    const signal = AbortSignal.timeout(timeoutMs);
    try {
      outcome = await (http.request as (verb: string, path: string, init: object) => Promise<typeof outcome>)(
        op.verb.toLowerCase(),
        op.path,
        {
          params: { path: params, ...(query ? { query } : {}) },
          ...(body ? { body } : {}),
          headers,
          signal,
          parseAs: op.result ? 'arrayBuffer' : 'json',
        },
      );
    } catch (error) {
      if (signal.aborted)
        throw new GatewayNetworkError(
          `The gateway gave no answer within ${timeoutMs} ms (timeoutMs); the request may still have been processed`,
          { cause: error },
        );
      throw new GatewayNetworkError(
        `Could not reach the gateway: ${error instanceof Error ? error.message : String(error)}`,
        { cause: error },
      );
    }
    const { response } = outcome;
    let data = outcome.data ?? outcome.error;
    // A zip or CSV result comes as bytes; its refusal, like every other answer, is JSON.
    if (data instanceof ArrayBuffer) {
      const structured = (response.headers.get('content-type') ?? '').startsWith(contract.answerType);
      if (structured) data = JSON.parse(new TextDecoder().decode(data));
      else if (response.ok) return op.result === 'zip' ? new Uint8Array(data) : new TextDecoder().decode(data);
    }
    const retryAfter = Number(response.headers.get('retry-after') ?? Number.NaN);
    if (UNAVAILABLE.includes(response.status))
      throw new GatewayHttpError(response.status, data, Number.isFinite(retryAfter) ? retryAfter : undefined);
    if (isObject(data) && 'responseCode' in data) return data;
    throw new GatewayHttpError(response.status, data);
  }

  const byName = (group: string, name: string) =>
    contract.operations.find((o) => o.group === group && o.name === name)!;
  function retried(op: ClientOperation, args: unknown[], policy: RetryPolicy): Promise<unknown> {
    const at = op.params?.length ?? 0;
    let body = op.forms ? ((args[at] ?? {}) as Record<string, unknown>) : undefined;
    const mark = op.retry;
    // Without a reference a lost purchase cannot be looked up: give it one (on a copy of the caller's body).
    if (body && mark && 'lookup' in mark && body[mark.by] === undefined && policy.assignReference !== false) {
      body = { ...body, [mark.by]: freshReference() };
      args = [...args.slice(0, at), body, ...args.slice(at + 1)];
    }
    return withRetry(
      {
        operation: `${op.group ? `${op.group}.` : ''}${op.name}`,
        mark,
        verb: op.verb,
        body,
        send: () => call(op, args),
        lookup: (reference) =>
          call(
            byName(
              (mark as { lookup: { group: string } }).lookup.group,
              (mark as { lookup: { name: string } }).lookup.name,
            ),
            [{ [(mark as { by: string }).by]: reference }],
          ),
      },
      policy,
    );
  }

  const client: Record<string, unknown> = {};
  for (const op of contract.operations) {
    if (op.group) client[op.group] ??= {};
    const target = (op.group ? client[op.group] : client) as Record<string, unknown>;
    target[op.name] = options.retry
      ? (...args: unknown[]) => retried(op, args, options.retry!)
      : (...args: unknown[]) => call(op, args);
  }
  return client;
}
