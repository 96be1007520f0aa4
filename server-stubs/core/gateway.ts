// The validating gateway core: handle(request) → response, for any HTTP server to call. It routes by
// verb, path and `method`, validates the request, authenticates it, calls the operation's handler
// and holds the answer to the contract. Handlers see only valid, authenticated requests.
import { SPEC_FILES, type SpecFile } from '../../runtime/spec-files.ts';
import { readFile } from 'node:fs/promises';
import type { GatewayHandlers } from '../../generated/handlers.ts';
import type { Protocol } from '../../runtime/protocols/protocol.ts';
import {
  answer,
  answersFile,
  CardNumberLeak,
  fileHoldsCardNumber,
  isByteStream,
  type Answered,
  type ByteStream,
} from './answer.ts';
import { authenticate, type Authenticated, type CredentialExplanation } from './authentication.ts';
import { maskCardNumbers } from '../../runtime/card-numbers.ts';
import { chooseLogger } from './log.ts';
import { defaultMaxBodyBytes, operations, packageFile, protocols, unknownFieldsPolicy } from './contract.ts';
import { errorCodeOf, refusals, refusalResponse, type Refusal } from './refusals.ts';
import type { ErrorCode } from '../../generated/error-codes.ts';
import {
  byteLength,
  headOf,
  checkBody,
  checkNul,
  checkParameters,
  normalised,
  parseBody,
  queryOf,
  refusalOf,
  splitUrl,
  withoutUnknownFields,
} from './request.ts';
import { bodyLimit, chooseMethod, knows, namedLimit, readLimit, route, servedAt } from './router.ts';
import { isThenable } from './steps.ts';
import type {
  Account,
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
  /**
   * Where the gateway tells its own console what it refused and could not answer (see log.ts): a
   * logger with info/warn/error (pino's shape), or `false` for none. Default: one line per entry on
   * stderr in development (NODE_ENV neither production nor test), the errors alone (the server's own
   * faults, a contract violation among them) under production, none in a test run.
   */
  logger?: Logger | false;
  /**
   * A body field no form of the operation declares: `ignore` drops it (logged as a warning) and
   * processes the request, as the real gateway does (x-unknown-fields); `refuse` answers -2 naming
   * it. Default: the contract's policy, `ignore`.
   */
  unknownFields?: 'ignore' | 'refuse';
  /** Body hashes in a recipe's legacy form (x-hash-recipes `legacy`): `accept` (default), as the real gateway does, or `refuse`. */
  legacyHashes?: 'accept' | 'refuse';
  /**
   * Runs the handler and the check of its answer as one unit of work: a store's transaction (the
   * sandbox passes its SQLite transaction). When the answer is a refusal, or breaks the contract and
   * will not be sent, the gateway throws inside it, so that the change is rolled back: a refusal
   * stores nothing, and no refusal follows a commit. It must rethrow what `work` throws after rolling
   * back. A handler that answers with a promise is checked when the promise settles: inside the unit
   * when the unit waits for what `work` answers (an asynchronous store's transaction), else outside.
   * `operationId` lets the implementation leave an operation outside any unit (a long streamed read).
   */
  transaction?: (work: () => unknown, operationId: string) => unknown;

  /**
   * Called once per answered request (the sandbox's request log), with the request as it came; costs
   * nothing when absent.
   */
  onRequest?: (record: RequestRecord, request: GatewayRequest) => void;
}

export type { CredentialExplanation };

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
  /**
   * The refusal's stable code (docs/REFUSALS.md), the stubs' own or a handler's made with a catalogue
   * entry (refusalFields); never sent to the caller.
   */
  errorCode?: ErrorCode | undefined;
  /** The answer's responseMessage, where the gateway made it or the handler answered one. */
  message?: string | undefined;
  /** The protocol the request was in: its id in x-wire-formats. */
  wire?: string | undefined;
  /** Which check refused it (route, version, body, method, size, query, schema, credentials, handler). */
  check?: string | undefined;
  /** The field (header, parameter) a refusal names, and the rule it broke. */
  field?: string | undefined;
  rule?: string | undefined;
  /**
   * The account the request was made with: the one it authenticated as, or, refused -1, the one whose
   * id and api key (or access token) it carried when only its hash failed. Absent when unknown.
   */
  account?: { kind: 'merchant' | 'partner'; id: string } | undefined;
  /**
   * Why a -1 was answered, with nothing secret (authentication.ts): made when called, so that a log
   * pays for it after the answer, and a refusal costs the same whichever check failed.
   */
  explain?: (() => CredentialExplanation) | undefined;
}

/**
 * What the pipeline learns of a request on its way, for the request log (the record's fields; the code
 * of a handler's refusal, the gateway's own being read from the response).
 */
type Note = Pick<
  RequestRecord,
  | 'method'
  | 'operationId'
  | 'reason'
  | 'errorCode'
  | 'message'
  | 'wire'
  | 'check'
  | 'field'
  | 'rule'
  | 'account'
  | 'explain'
>;
const NO_NOTE: Note = {};

/**
 * Thrown inside `transaction` to roll the handler's change back; never leaves the core. Made without
 * a stack (no one reads it): capturing one walked the request's frames for every refusal a handler
 * answered (0.1 s of self time in a sampled profile of a contract run against the sandbox, a profile
 * whose total is about three times the run's real CPU).
 */
class RollBack extends Error {
  constructor() {
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    try {
      super('the handler refused: its change is rolled back');
    } finally {
      Error.stackTraceLimit = limit;
    }
  }
}

/** A response, or a promise of it where something the pipeline called answered with one. */
type Reply = GatewayResponse | Promise<GatewayResponse>;

export interface Gateway {
  handle(request: GatewayRequest): Promise<GatewayResponse>;
  /**
   * handle() for adapters: the response itself when the accounts and the handler answered
   * synchronously, else a promise of it. It saves a promise and a microtask per request.
   */
  respond(request: GatewayRequest): GatewayResponse | Promise<GatewayResponse>;
  /** The most bytes an adapter should read for a request to this path. */
  readLimit(pathname: string): number;
  /**
   * What to read of a body before it has named its method (no head), or once it has (head: the
   * bytes read so far, as latin1 text): the limit of the method it names on a path whose methods'
   * limits differ. An adapter reads no more than this while reading.
   */
  bodyLimit(pathname: string, head?: string): number;
  /**
   * The limit of the method the body's first bytes (head, as latin1 text) or the path name; undefined
   * while they name none of the path's methods. An adapter reading a body declared past the path's
   * smallest limit refuses it as soon as the method named takes less than the declared length.
   */
  namedLimit(pathname: string, head: string): number | undefined;
  /** Whether this path is the contract's: an operation's, or the spec or docs served beside them. */
  serves(pathname: string): boolean;
  /** A refusal an adapter answers itself (a body too large to read), in the protocol the caller used. */
  refusal(pathname: string, headers: GatewayRequest['headers'], refusal: Refusal): GatewayResponse;
  readonly metrics: GatewayMetrics;
}

const methodOf = (body: unknown): string | undefined => {
  const method = typeof body === 'object' && body !== null ? (body as { method?: unknown }).method : undefined;
  return typeof method === 'string' ? method.slice(0, 64) : undefined;
};

function record(request: GatewayRequest, note: Note, response: GatewayResponse, ms: number): RequestRecord {
  const out: RequestRecord = {
    verb: request.verb,
    path: splitUrl(request.url).pathname,
    status: response.status,
    ms,
    ...note,
  };
  const errorCode = errorCodeOf(response) ?? note.errorCode;
  if (errorCode !== undefined) out.errorCode = errorCode;
  if (typeof response.body === 'string') {
    // An answer no protocol wrote (a file): the status says enough.
    const code = protocols.answeredIn(response.headers['content-type'])?.responseCode(response.body);
    if (code !== undefined) out.responseCode = code;
  }
  return out;
}

/** A broken answer as the handler returned it, for log mode to send anyway: in the caller's protocol where it can be written. */
function rawAnswer(
  op: ContractOperation,
  returned: Record<string, unknown>,
  protocol: Protocol,
): GatewayResponse | undefined {
  try {
    return {
      status: op.status,
      headers: { 'content-type': protocol.answerType },
      body: protocol.writeAnswer(returned),
    };
  } catch {
    return undefined;
  }
}

type Started = { body: ByteStream } | { failure: unknown };

/**
 * Reads a stream's first chunk: a failure before it is returned, one after it is reported to
 * `failed` and thrown on to the adapter. Ending the returned stream early (the client went away)
 * ends the source too, so a database cursor behind it is closed.
 */
async function startStream(source: ByteStream, failed: (error: unknown) => void): Promise<Started> {
  const chunks = source[Symbol.asyncIterator]();
  let first: IteratorResult<Uint8Array>;
  try {
    first = await chunks.next();
  } catch (failure) {
    return { failure };
  }
  async function* rest(): AsyncGenerator<Uint8Array> {
    let done = false;
    try {
      if (first.done) {
        done = true;
        return;
      }
      yield first.value;
      for (let next = await chunks.next(); !next.done; next = await chunks.next()) yield next.value;
      done = true;
    } catch (error) {
      done = true;
      failed(error);
      throw error;
    } finally {
      if (!done) await chunks.return?.();
    }
  }
  return { body: rest() };
}

const SPEC_PATHS: ReadonlyMap<string, SpecFile> = new Map(Object.entries(SPEC_FILES));

/** The checks made before the method is chosen: their refusals are the path's. */
const PATH_CHECKS = new Set(['route', 'version', 'body', 'method']);

export function createGateway(options: GatewayOptions): Gateway {
  const mode = options.responseValidation ?? (process.env.NODE_ENV === 'production' ? 'log' : 'error');
  const logger = chooseLogger(options.logger);
  const ignoreUnknown = (options.unknownFields ?? unknownFieldsPolicy) === 'ignore';
  const metrics: GatewayMetrics = { requests: 0, refusals: 0, violations: 0, failures: 0 };
  const specCache = new Map<string, Promise<Buffer>>();
  const byId = new Map(operations.map((o) => [o.operationId, o]));
  // A refusal stores nothing; a violation that will be sent anyway (log mode, nothing sensitive)
  // keeps the change it reports.
  const rollsBack = (a: Answered) => ('violation' in a ? mode !== 'log' || a.sensitive === true : a.refusal === true);

  const refused = (
    op: ContractOperation | undefined,
    refusal: Refusal,
    check: string,
    protocol: Protocol,
    extra?: Record<string, string>,
    note: Note = NO_NOTE,
  ): GatewayResponse => {
    metrics.refusals++;
    // What a refusal names can be the caller's text (a charset, a field's name): a card number in it
    // reaches neither a logger nor the request log whole, as it reaches no answer (refusalFields).
    const message = maskCardNumbers(refusal.message);
    const field = refusal.field === undefined ? undefined : maskCardNumbers(refusal.field);
    if (note !== NO_NOTE) {
      note.check = check;
      note.message = message;
      note.field = field;
      note.rule = refusal.rule;
    }
    // One line per refusal: the caller's fault at info, a 5xx (no handler) is the server's, at error.
    const serverFault = (refusal.status ?? 200) >= 500;
    if (serverFault || logger.info) {
      // Before the method is chosen the request is the path's, not one operation's (op is then only
      // the path's first, whose form the refusal takes).
      const chosen = !PATH_CHECKS.has(check);
      const fields = {
        ...(chosen ? {} : { path: op?.path }),
        operation: chosen ? op?.operationId : undefined,
        method: chosen ? op?.method : undefined,
        check,
        errorCode: refusal.errorCode,
        // The spec's own protocol goes without saying; another's refusal says which it was.
        ...(protocol === protocols.canonical ? {} : { wire: protocol.id }),
        field,
        rule: refusal.rule,
        code: refusal.code,
        status: refusal.status,
        reason: refusal.reason,
        message,
      };
      if (serverFault) logger.error('answered 5xx', fields);
      else logger.info?.('refused', fields);
    }
    const response = refusalResponse(op, refusal, protocol);
    if (extra) Object.assign(response.headers, extra);
    return response;
  };

  const violated = (
    op: ContractOperation,
    violation: string,
    sensitive: boolean,
    protocol: Protocol,
    response?: GatewayResponse,
  ): GatewayResponse => {
    metrics.violations++;
    logger.error('answer violates the contract', {
      operation: op.operationId,
      method: op.method,
      check: 'result',
      violation,
    });
    if (mode === 'log' && response && !sensitive) return response;
    return refusalResponse(
      op,
      mode === 'error' ? refusals.contractViolation(op.operationId, violation) : refusals.internal(),
      protocol,
    );
  };

  const streamFailed = (op: ContractOperation, error: unknown) => {
    if (error instanceof CardNumberLeak) {
      metrics.violations++;
      logger.error('answer violates the contract', { operationId: op.operationId, violation: error.message });
    } else {
      metrics.failures++;
      logger.error('answer stream failed', {
        operationId: op.operationId,
        error: error instanceof Error ? error.message : String(error),
      });
    }
  };

  async function serveSpec(spec: SpecFile): Promise<GatewayResponse> {
    let bytes = specCache.get(spec.file);
    if (!bytes) {
      bytes = readFile(packageFile(spec.file));
      specCache.set(spec.file, bytes);
    }
    return { status: 200, headers: { 'content-type': spec.type }, body: await bytes };
  }

  /**
   * The pipeline, as plain functions: a request whose account lookups and handler answer at once is
   * answered at once, with no generator, promise or microtask made for it; where one answers with a
   * promise, the rest of the pipeline runs when it settles.
   */
  function pipeline(request: GatewayRequest, note: Note): Reply {
    metrics.requests++;
    const { pathname, search } = splitUrl(request.url);
    // The path first, in a Map (a request's path is a new string each time, which a property lookup
    // would look for in V8's string table): a POST is then never upper-cased either.
    const spec = SPEC_PATHS.get(pathname);
    if (spec && (request.verb === 'GET' || request.verb.toUpperCase() === 'GET')) {
      return serveSpec(spec);
    }
    const routed = route(request.verb, pathname);
    if ('refusal' in routed)
      return refused(
        undefined,
        routed.refusal,
        'route',
        // A path that has operations (a wrong verb: 405, a malformed escape) is answered in the mode its
        // protocols choose, as any refusal of the path: a form client's GET, which sends no
        // Content-Type, in XML on the form paths. Only an unknown path (404) has no protocols of its own.
        protocols.choose(request.headers, servedAt(pathname)),
        routed.allow ? { allow: routed.allow } : undefined,
        note,
      );
    const { candidates, params, route: path } = routed.match;
    const first = candidates[0]!;
    // The protocol the request is in, among those that serve the path (x-wire-formats).
    const protocol = protocols.choose(request.headers, path.served);
    if (note !== NO_NOTE) note.wire = protocol.id;

    // The headers before the body, the cheap refusal first; but a body that plainly is another format
    // (a form client's fields labelled JSON, which carry no version header) is told so, not that a
    // header is missing that would not make it readable: the protocol looks at its start only.
    const header = protocol.checkHeaders(request.headers, request.body);
    if (header)
      return refused(
        first,
        refusalOf(header),
        header.refusal === 'notJson' ? 'body' : 'version',
        protocol,
        undefined,
        note,
      );
    // A body past every limit of the path is refused naming the limit of the operation it is for, its
    // method's as its first bytes name it (processCard's 1 MiB on /post, not processBatch's 16 MiB).
    const parsed = parseBody(
      request,
      byteLength(request.body) > path.readLimit
        ? bodyLimit(pathname, defaultMaxBodyBytes, headOf(request.body, path.baseLimit))
        : path.readLimit,
      protocol,
      path.served,
    );
    if ('refusal' in parsed) return refused(first, parsed.refusal, 'body', protocol, undefined, note);
    if (note !== NO_NOTE) note.method = methodOf(parsed.ok);

    const chosen = chooseMethod(candidates, parsed.ok, routed.match.pathMethod);
    if ('refusal' in chosen) return refused(first, chosen.refusal, 'method', protocol, undefined, note);
    const op = chosen.op;
    // POST /token/processCard: the body is validated and handled as if it carried its method.
    if (routed.match.pathMethod && typeof parsed.ok === 'object' && parsed.ok !== null && !('method' in parsed.ok))
      parsed.ok = { ...parsed.ok, method: op.method };
    // Typed as the operation's schema says, where the protocol carries text (a form).
    parsed.ok = protocol.typed(parsed.ok, op.shapes.request);
    if (note !== NO_NOTE) note.operationId = op.operationId;
    if (byteLength(request.body) > op.maxBodyBytes)
      return refused(op, refusals.bodyTooLarge(op.maxBodyBytes), 'size', protocol, undefined, note);
    const query = queryOf(op, search);
    if ('refusal' in query) return refused(op, query.refusal, 'query', protocol, undefined, note);
    let sent = parsed.ok;
    let ignored: Record<string, unknown> | undefined;
    if (ignoreUnknown) {
      const known = withoutUnknownFields(op, sent);
      ignored = known.ignored;
      if (ignored)
        logger.warn('unknown fields ignored', { operationId: op.operationId, fields: known.unknown.join(', ') });
      sent = known.body;
    }
    sent = normalised(op, sent);
    const invalid =
      // A body its protocol saw to hold no NUL is not walked for one (the parameters and headers are).
      checkNul(op, params, query.ok, parsed.nulFree ? undefined : sent, request.headers) ??
      checkParameters(op, params, query.ok) ??
      checkBody(op, sent);
    if (invalid) return refused(op, invalid, 'schema', protocol, undefined, note);

    const body = (op.request ? sent : undefined) as Record<string, unknown> | undefined;
    // Hashes cover the body as the client signed it, unknown fields included.
    const signed = (op.request ? parsed.ok : undefined) as Record<string, unknown> | undefined;
    const auth = authenticate(
      op,
      { headers: request.headers, body: signed, params, query: query.ok },
      options.accounts,
      options.legacyHashes !== 'refuse',
    );
    return auth instanceof Promise
      ? auth.then((done) => authenticated(op, protocol, note, done, body, params, query.ok, ignored))
      : authenticated(op, protocol, note, auth, body, params, query.ok, ignored);
  }

  /** Once the credentials are checked: the handler, and its answer held to the contract. */
  function authenticated(
    op: ContractOperation,
    protocol: Protocol,
    note: Note,
    auth: Authenticated,
    body: Record<string, unknown> | undefined,
    params: Record<string, string>,
    query: Record<string, string>,
    ignored: Record<string, unknown> | undefined,
  ): Reply {
    if ('refusal' in auth) {
      if (note !== NO_NOTE) {
        note.reason = auth.refusal.reason;
        note.explain = auth.explain;
        if (auth.account) note.account = { kind: auth.account.kind, id: auth.account.id };
      }
      return refused(op, auth.refusal, 'credentials', protocol, undefined, note);
    }
    const account = auth.account;
    if (note !== NO_NOTE) note.account = { kind: account.kind, id: account.id };

    const target = op.aliasOf ? byId.get(op.aliasOf)! : op;
    const handler = options.handlers[target.operationId as keyof GatewayHandlers] as
      | ((input: unknown, context: HandlerContext) => unknown)
      | undefined;
    if (!handler) return refused(op, refusals.notImplemented(target.operationId), 'handler', protocol, undefined, note);

    let returned: unknown;
    let answered: Answered | undefined;
    const input = { body, params, query };
    // A plain literal either way: a spread in it would copy at run time on every request.
    const context: HandlerContext = ignored
      ? { operation: op, account, ignoredFields: ignored }
      : { operation: op, account };
    let settledLater = false;
    // What is still to be waited for: the unit of work, or the promise its work answered.
    let pending: PromiseLike<unknown> | undefined;
    // Whether to wait, read inside the try: an answer whose `then` throws when read (a strict Proxy)
    // is the handler's failure, answered in the operation's own protocol and shape.
    let waits: boolean | undefined;
    try {
      if (options.transaction) {
        let chain: Promise<void> | undefined;
        const unit = options.transaction(() => {
          returned = handler.call(options.handlers, input, context);
          if (!isThenable(returned)) {
            answered = answer(op, account, body ?? {}, returned, false, protocol);
            if (rollsBack(answered)) throw new RollBack();
            return undefined;
          }
          // Checked when it settles: inside the unit when the unit waits for it (an asynchronous store).
          settledLater = true;
          chain = Promise.resolve(returned).then((value) => {
            returned = value;
            answered = answer(op, account, body ?? {}, value, true, protocol);
            if (rollsBack(answered)) throw new RollBack();
          });
          return chain;
        }, target.operationId);
        if (isThenable(unit)) pending = unit;
        else if (chain) pending = chain;
      } else returned = handler.call(options.handlers, input, context);
      waits = pending !== undefined || isThenable(returned);
    } catch (error) {
      if (!(error instanceof RollBack)) return handlerFailed(op, error, protocol);
    }
    if (!(waits ?? (pending !== undefined || isThenable(returned))))
      return concluded(op, account, body, returned, answered, protocol, note);
    // The same steps, once what is pending has settled (a rejection is the handler's failure).
    const later = async (): Promise<GatewayResponse> => {
      try {
        if (pending !== undefined) await pending;
        if (isThenable(returned)) {
          returned = await returned;
          settledLater = true;
          // Checked now, outside any unit of work.
          answered = answer(op, account, body ?? {}, returned, true, protocol);
        }
        // A file answer's scan may take a while and waits (a streamed one is scanned as it is sent).
        if (
          settledLater &&
          answered &&
          'response' in answered &&
          answersFile(op) &&
          !isByteStream(answered.response.body)
        ) {
          const leaks: boolean = await fileHoldsCardNumber(answered.response.body);
          if (leaks) answered = { violation: 'A card number appears unmasked in the answer', sensitive: true };
        }
      } catch (error) {
        if (!(error instanceof RollBack)) return handlerFailed(op, error, protocol);
      }
      return concluded(op, account, body, returned, answered, protocol, note);
    };
    return later();
  }

  /** The handler's answer (or the one made of it) as the response, a streamed one once its first chunk is read. */
  function concluded(
    op: ContractOperation,
    account: Account,
    body: Record<string, unknown> | undefined,
    returned: unknown,
    answered: Answered | undefined,
    protocol: Protocol,
    note: Note,
  ): Reply {
    const made = answered ?? answer(op, account, body ?? {}, returned, false, protocol);
    if (note !== NO_NOTE) {
      note.errorCode = errorCodeOf(returned);
      const message = (returned as { responseMessage?: unknown } | null)?.responseMessage;
      if (typeof message === 'string') note.message = message;
    }
    if ('response' in made && isByteStream(made.response.body)) {
      // Until its first chunk a stream can still be answered as any other failure; after it, the
      // status is sent and a failure can only end the connection (the adapter does), logged here.
      const response = made.response;
      return startStream(response.body as ByteStream, (error) => streamFailed(op, error)).then((started) => {
        if (!('failure' in started))
          return sent(op, returned, { response: { ...response, body: started.body } }, protocol);
        if (started.failure instanceof CardNumberLeak)
          return sent(op, returned, { violation: started.failure.message, sensitive: true }, protocol);
        return handlerFailed(op, started.failure, protocol);
      });
    }
    return sent(op, returned, made, protocol);
  }

  /** What is sent: the answer, or a violation's refusal (or, in log mode, the raw answer). */
  function sent(op: ContractOperation, returned: unknown, answered: Answered, protocol: Protocol): GatewayResponse {
    if ('violation' in answered) {
      const raw =
        typeof returned === 'object' && returned !== null && !(returned instanceof Uint8Array)
          ? rawAnswer(op, returned as Record<string, unknown>, protocol)
          : undefined;
      return violated(op, answered.violation, answered.sensitive === true, protocol, raw);
    }
    if (Number((returned as { responseCode?: unknown })?.responseCode) < 0) metrics.refusals++;
    return answered.response;
  }

  const handlerFailed = (op: ContractOperation, error: unknown, protocol: Protocol): GatewayResponse => {
    metrics.failures++;
    logger.error('handler failed', {
      operationId: op.operationId,
      error: error instanceof Error ? error.message : String(error),
    });
    return refusalResponse(op, refusals.internal(), protocol);
  };

  // Whatever throws outside a handler (an account lookup, a bug) is logged and answered -4: never an
  // unlogged 500 from the adapter, never a stack trace.
  const failed = (error: unknown): GatewayResponse => {
    metrics.failures++;
    logger.error('request failed', { error: error instanceof Error ? error.message : String(error) });
    return refusalResponse(undefined, refusals.internal());
  };
  const guardedRun = (request: GatewayRequest, note: Note): GatewayResponse | Promise<GatewayResponse> => {
    try {
      const response = pipeline(request, note);
      return response instanceof Promise ? response.catch(failed) : response;
    } catch (error) {
      return failed(error);
    }
  };
  const onRequest = options.onRequest;
  const respond = onRequest
    ? (request: GatewayRequest) => {
        const started = performance.now();
        const note: Note = {};
        const done = (response: GatewayResponse) => {
          onRequest(record(request, note, response, performance.now() - started), request);
          return response;
        };
        const response = guardedRun(request, note);
        return response instanceof Promise ? response.then(done) : done(response);
      }
    : (request: GatewayRequest) => guardedRun(request, NO_NOTE);
  return {
    handle: async (request) => respond(request),
    respond,
    readLimit: (pathname) => readLimit(pathname, defaultMaxBodyBytes),
    bodyLimit: (pathname, head) => bodyLimit(pathname, defaultMaxBodyBytes, head),
    namedLimit: (pathname, head) => namedLimit(pathname, head),
    serves: (pathname) => SPEC_PATHS.has(pathname) || knows(pathname),
    refusal: (pathname, headers, refusal) =>
      refusalResponse(undefined, refusal, protocols.choose(headers, servedAt(pathname))),
    metrics,
  };
}
