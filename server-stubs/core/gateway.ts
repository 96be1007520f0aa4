// The validating gateway core: handle(request) → response, for any HTTP server to call. It routes by
// verb, path and `method`, validates the request, authenticates it, calls the operation's handler
// and holds the answer to the contract. Handlers see only valid, authenticated requests.
import { readFile } from 'node:fs/promises';
import type { GatewayHandlers } from '../../generated/handlers.ts';
import { answer } from './answer.ts';
import { authenticate } from './authentication.ts';
import { defaultMaxBodyBytes, operations, packageFile } from './contract.ts';
import { refuse, refusalResponse, type Refusal } from './refusals.ts';
import { byteLength, checkBody, checkParameters, checkVersion, parseBody, queryOf, splitUrl } from './request.ts';
import { chooseMethod, knows, readLimit, route } from './router.ts';
import { run, type Steps } from './steps.ts';
import type {
  Accounts,
  ContractOperation,
  GatewayMetrics,
  GatewayRequest,
  GatewayResponse,
  HandlerContext,
  Logger,
  ResponseValidationMode,
} from './types.ts';

export interface GatewayOptions {
  /** The implementation: one handler per operation. A missing one answers -4 (not implemented). */
  handlers: Partial<GatewayHandlers<HandlerContext>>;
  accounts: Accounts;
  /** Default: `error` unless NODE_ENV is production, where it is `log`. */
  responseValidation?: ResponseValidationMode;
  logger?: Logger;
  /** Called once per answered request (the sandbox's request log); costs nothing when absent. */
  onRequest?: (record: RequestRecord) => void;
}

/** One answered request, for a request log. */
export interface RequestRecord {
  verb: string;
  /** The path, without the query. */
  path: string;
  /** The body's method, when it sent one. */
  method?: string | undefined;
  operationId?: string | undefined;
  /** The answer's responseCode, when it has one; else see status. */
  responseCode?: string | number;
  status: number;
  ms: number;
  /** Why a -1 was answered (which check failed); never a secret. */
  reason?: string | undefined;
}

/** What the pipeline learns of a request on its way, for the request log. */
interface Note {
  method?: string | undefined;
  operationId?: string | undefined;
  reason?: string | undefined;
}
const NO_NOTE: Note = {};

export interface Gateway {
  handle(request: GatewayRequest): Promise<GatewayResponse>;
  /**
   * handle() for adapters: the response itself when the accounts and the handler answered
   * synchronously, else a promise of it. It saves a promise and a microtask per request.
   */
  respond(request: GatewayRequest): GatewayResponse | Promise<GatewayResponse>;
  /** The most bytes an adapter should read for a request to this path. */
  readLimit(pathname: string): number;
  /** Whether this path is the contract's: an operation's, or the spec or docs served beside them. */
  serves(pathname: string): boolean;
  readonly metrics: GatewayMetrics;
}

const silent: Logger = { warn() {}, error() {} };

const SPEC_FILES: Record<string, { file: string; type: string }> = {
  '/openapi.json': { file: 'openapi.json', type: 'application/json' },
  '/openapi.yaml': { file: 'openapi.yaml', type: 'application/yaml' },
  '/docs': { file: 'docs', type: 'text/html; charset=utf-8' },
  '/docs/': { file: 'docs', type: 'text/html; charset=utf-8' },
};

const methodOf = (body: unknown): string | undefined => {
  const method = typeof body === 'object' && body !== null ? (body as { method?: unknown }).method : undefined;
  return typeof method === 'string' ? method.slice(0, 64) : undefined;
};

function record(request: GatewayRequest, note: Note, response: GatewayResponse, ms: number): RequestRecord {
  const out: RequestRecord = { verb: request.verb, path: splitUrl(request.url).pathname, status: response.status, ms, ...note };
  if (typeof response.body === 'string' && response.headers['content-type']?.startsWith('application/json')) {
    try {
      const code = (JSON.parse(response.body) as { responseCode?: unknown }).responseCode;
      if (typeof code === 'string' || typeof code === 'number') out.responseCode = code;
    } catch {
      // Not JSON after all: the status says enough.
    }
  }
  return out;
}

export function createGateway(options: GatewayOptions): Gateway {
  const mode = options.responseValidation ?? (process.env.NODE_ENV === 'production' ? 'log' : 'error');
  const logger = options.logger ?? silent;
  const metrics: GatewayMetrics = { requests: 0, refusals: 0, violations: 0, failures: 0 };
  const specCache = new Map<string, Promise<Buffer>>();
  const byId = new Map(operations.map((o) => [o.operationId, o]));

  const refused = (op: ContractOperation | undefined, refusal: Refusal, extra?: Record<string, string>): GatewayResponse => {
    metrics.refusals++;
    // A 5xx is the server's failure, not the caller's: it is logged.
    if ((refusal.status ?? 200) >= 500) logger.error('answered 5xx', { operationId: op?.operationId, status: refusal.status, message: refusal.message });
    const response = refusalResponse(op, refusal);
    if (extra) Object.assign(response.headers, extra);
    return response;
  };

  const violated = (op: ContractOperation, violation: string, sensitive: boolean, response?: GatewayResponse): GatewayResponse => {
    metrics.violations++;
    logger.error('answer violates the contract', { operationId: op.operationId, violation });
    if (mode === 'log' && response && !sensitive) return response;
    const message = mode === 'error' ? `Response of ${op.operationId} violates the contract: ${violation}` : 'Internal gateway error';
    return refusalResponse(op, refuse(-4, message, 500));
  };

  async function serveSpec(spec: { file: string; type: string }): Promise<GatewayResponse> {
    let bytes = specCache.get(spec.file);
    if (!bytes) specCache.set(spec.file, (bytes = readFile(packageFile(spec.file))));
    return { status: 200, headers: { 'content-type': spec.type }, body: await bytes };
  }

  /** The pipeline; it yields what may be a promise (see steps.ts), and run() drives it. */
  function* steps(request: GatewayRequest, note: Note): Steps<GatewayResponse> {
    metrics.requests++;
    const { pathname, search } = splitUrl(request.url);
    if ((request.verb === 'GET' || request.verb.toUpperCase() === 'GET') && Object.hasOwn(SPEC_FILES, pathname)) {
      return (yield serveSpec(SPEC_FILES[pathname]!)) as GatewayResponse;
    }
    const routed = route(request.verb, pathname);
    if ('refusal' in routed) return refused(undefined, routed.refusal, routed.allow ? { allow: routed.allow } : undefined);
    const { candidates, params, route: path } = routed.match;
    const first = candidates[0]!;

    const version = checkVersion(request.headers);
    if (version) return refused(first, version);
    const parsed = parseBody(request, path.readLimit);
    if ('refusal' in parsed) return refused(first, parsed.refusal);
    if (note !== NO_NOTE) note.method = methodOf(parsed.ok);

    const chosen = chooseMethod(candidates, parsed.ok);
    if ('refusal' in chosen) return refused(first, chosen.refusal);
    const op = chosen.op;
    if (note !== NO_NOTE) note.operationId = op.operationId;
    if (byteLength(request.body) > op.maxBodyBytes) return refused(op, refuse(-2, `Request body exceeds ${op.maxBodyBytes} bytes`, 413));
    const query = queryOf(op, search);
    if ('refusal' in query) return refused(op, query.refusal);
    const invalid = checkParameters(op, params, query.ok) ?? checkBody(op, parsed.ok);
    if (invalid) return refused(op, invalid);

    const body = (op.request ? parsed.ok : undefined) as Record<string, unknown> | undefined;
    const auth = yield* authenticate(op, { headers: request.headers, body, params, query: query.ok }, options.accounts);
    if ('refusal' in auth) {
      if (note !== NO_NOTE) note.reason = auth.refusal.reason;
      return refused(op, auth.refusal);
    }

    const target = op.aliasOf ? byId.get(op.aliasOf)! : op;
    const handler = options.handlers[target.operationId as keyof GatewayHandlers] as
      | ((input: unknown, context: HandlerContext) => unknown)
      | undefined;
    if (!handler) return refused(op, refuse(-4, `${target.operationId} is not implemented by this server`, 500));

    let returned: unknown;
    try {
      returned = yield handler.call(options.handlers, { body, params, query: query.ok }, { operation: op, account: auth.account });
    } catch (error) {
      metrics.failures++;
      logger.error('handler failed', { operationId: op.operationId, error: error instanceof Error ? error.message : String(error) });
      return refusalResponse(op, refuse(-4, 'Internal gateway error', 500));
    }
    const answered = answer(op, auth.account, body ?? {}, returned);
    if ('violation' in answered) {
      const raw = typeof returned === 'object' && returned !== null ? { status: op.status, headers: { 'content-type': 'application/json' }, body: JSON.stringify(returned) } : undefined;
      return violated(op, answered.violation, answered.sensitive === true, raw);
    }
    if (Number((returned as { responseCode?: unknown })?.responseCode) < 0) metrics.refusals++;
    return answered.response;
  }

  const onRequest = options.onRequest;
  const respond = onRequest
    ? (request: GatewayRequest) => {
        const started = performance.now();
        const note: Note = {};
        const done = (response: GatewayResponse) => (onRequest(record(request, note, response, performance.now() - started)), response);
        const response = run(steps(request, note));
        return response instanceof Promise ? response.then(done) : done(response);
      }
    : (request: GatewayRequest) => run(steps(request, NO_NOTE));
  return {
    handle: async (request) => respond(request),
    respond,
    readLimit: (pathname) => readLimit(pathname, defaultMaxBodyBytes),
    serves: (pathname) => Object.hasOwn(SPEC_FILES, pathname) || knows(pathname),
    metrics,
  };
}
