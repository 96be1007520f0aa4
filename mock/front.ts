// The mock's front: the server stubs' own core (server-stubs/) with one handler for every operation,
// which asks Prism for that method's own example (Prefer: example=…, the pattern Prism's maintainers
// point to, since Prism cannot choose an example from the body) and makes it keep every rule that
// needs no state. So the mock reads a request with the stubs' one reader (routing, the body cap, the
// wire format, a byte-order mark, unknown fields, normalisation), refuses what they refuse as they
// word it (a missing or broken field, a wrong key or hash for an account it knows, an account it does
// not), and answers in the caller's wire format with the result hashes the stubs compute, the card
// numbers they forbid and the schema they hold an answer to. What the handler adds to Prism's example
// is read from the spec's marks (mock/answers.ts). A client's own Prefer header chooses another
// example. In proxy mode the front only passes requests through to Prism's validating proxy.
import { AsyncLocalStorage } from 'node:async_hooks';
import { readFileSync } from 'node:fs';
import type * as Http from 'node:http';
import { createRequire } from 'node:module';
import path from 'node:path';
import { operations, type ContractOperation } from '../generated/operations.ts';
import type { MockRoute } from '../runtime/operation-model.ts';
import {
  createGateway,
  createNodeServer,
  protocols,
  refusalFields,
  refusals,
  sandboxRefusals,
  serverDefaults,
  type Account,
  type Gateway,
  type GatewayRequest,
  type GatewayResponse,
  type RequestRecord,
} from '../server-stubs/index.ts';
import { cardNumberFields, cardNumberSentOutsideCardFields } from '../runtime/card-fields.ts';
import { withExactSchemas } from '../runtime/exact-requests.ts';
import { type ScenarioAsked, withOutcome } from '../runtime/scenarios.ts';
import { exampleAnswer, type MockDocument } from './answers.ts';
import { mockAccounts, sandboxAccounts } from './accounts.ts';
import { askPrism, type PrismAnswer, type PrismTarget } from './prism-client.ts';
import { askedScenario, mockScenario } from './scenarios.ts';
import { http } from '../runtime/node-http.ts';

const require = createRequire(import.meta.url);
const configFile = require.resolve('payment-gateway-contract/mock.json');
const routes: MockRoute[] = JSON.parse(readFileSync(configFile, 'utf8')).routes;
const routeOf = new Map(routes.map((r) => [r.operationId, r]));

/** The published document: the sandbox's accounts, the result schemas' rule marks, the example tokens. */
export const mockDocument = (): MockDocument =>
  withExactSchemas(JSON.parse(readFileSync(require.resolve('payment-gateway-contract/openapi.json'), 'utf8')));

export interface Violation {
  location: string[];
  severity: string;
  code?: string | number;
  message: string;
}

export interface FrontOptions {
  /** Where Prism listens. */
  target: PrismTarget;
  /** In proxy mode Prism answers from the upstream: the front only passes requests through. */
  choosesExamples: boolean;
  /** Each contract violation Prism finds in proxy mode, in the request or the upstream's answer. */
  onViolation?: (request: string, violations: Violation[]) => void;
  /**
   * Each request the mock refuses, with the refusal's message: one short line for its log (Prism's
   * violations of it stay in the sl-violations header, several kilobytes for an unknown method).
   */
  onRefusal?: (request: string, message: string) => void;
  /** Settles when Prism listens: a request that arrives before waits for it (the front takes its port first). */
  ready?: Promise<void>;
  /** Accounts beside the spec's sandbox accounts (--accounts FILE). */
  accounts?: readonly Account[];
  /** How long Prism may take over one example before the caller is refused 503 (default 10 s). */
  prismTimeoutMs?: number;
}

/** The header that carries Prism's violations of a refused request (Prism's own name for it). */
export const VIOLATIONS_HEADER = 'sl-violations';

export const PRISM_TIMEOUT_MS = 10_000;

/** What one request's handler tells the front beyond its answer. */
interface Exchange {
  request: GatewayRequest;
  /** The scenario the request names, and where (header or path prefix). */
  scenario: ScenarioAsked | undefined;
  /** The core's record of it: which check refused it, if one did. */
  record?: RequestRecord;
  /** The handler ran: the request passed every check. */
  handled: boolean;
  /** An answer that replaces the core's (Prism's own for a client's Prefer it answers >= 400). */
  replaced?: GatewayResponse;
  /** The status and headers to answer with where not the operation's (a 503 and its Retry-After). */
  status?: number;
  headers?: Record<string, string>;
  /** The message of a refusal the handler made (a scenario's, Prism away), for the log. */
  refused?: string;
}

const exchanges = new AsyncLocalStorage<Exchange>();

/** Headers the front does not pass to Prism: its own, the body's (rewritten), the scenario's. */
const NOT_FORWARDED = new Set([
  'host',
  'content-length',
  'content-type',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'accept',
  'prefer',
  'svc-sandbox-scenario',
]);

export function createFront(options: FrontOptions): Http.Server {
  return options.choosesExamples ? exampleServer(options) : proxyServer(options);
}

function exampleServer({
  target,
  onRefusal,
  ready,
  accounts = [],
  prismTimeoutMs = PRISM_TIMEOUT_MS,
}: FrontOptions): Http.Server {
  const doc = mockDocument();
  const cardFields = cardNumberFields(doc);
  const own = protocols.canonical;
  const timeoutSeconds = Math.max(1, Math.ceil(prismTimeoutMs / 1000));
  const files = new Map<string, Buffer>();
  const fileFor = (name: string) => {
    if (!files.has(name)) files.set(name, readFileSync(path.join(path.dirname(configFile), name)));
    return files.get(name)!;
  };

  /** Prism is away: -4 in the operation's refusal, answered 503 with Retry-After (the handler's status). */
  const engineAway = (exchange: Exchange, op: ContractOperation) => {
    const refusal = refusals.mockEngineUnavailable(timeoutSeconds);
    exchange.status = refusal.status ?? 503;
    exchange.headers = { 'retry-after': String(timeoutSeconds) };
    exchange.refused = refusal.message;
    return refusalFields(op.refusalCode, refusal);
  };

  /** The one handler: Prism's example for the operation, made to keep the rules for this request. */
  const fromPrism = async (
    input: { body?: Record<string, unknown>; params: Record<string, string>; query?: Record<string, string> },
    context: { operation: ContractOperation; account: Account; ignoredFields?: Readonly<Record<string, unknown>> },
  ): Promise<unknown> => {
    const exchange = exchanges.getStore()!;
    exchange.handled = true;
    const op = context.operation;
    const route = routeOf.get(op.operationId)!;
    // A card number in a field that is not a card number's is refused as the sandbox refuses it.
    const field = cardNumberSentOutsideCardFields(
      { ...input, ignored: context.ignoredFields },
      cardFields,
      new Set(op.hashes.map((h) => h.name)),
    );
    if (field !== undefined) {
      const refusal = sandboxRefusals.cardNumberInField(field);
      exchange.refused = refusal.message;
      return refusalFields(op.refusalCode, refusal);
    }
    const scenario = exchange.scenario === undefined ? undefined : mockScenario(exchange.scenario, op.operationId);
    if (scenario && 'refusal' in scenario) {
      exchange.refused = scenario.refusal.message;
      if (scenario.refusal.status !== undefined) exchange.status = scenario.refusal.status;
      return refusalFields(op.refusalCode, scenario.refusal);
    }
    await ready;
    const clientPrefers = exchange.request.headers.prefer;
    const headers: Http.OutgoingHttpHeaders = {};
    for (const [name, value] of Object.entries(exchange.request.headers))
      if (value !== undefined && !NOT_FORWARDED.has(name)) headers[name] = value;
    const body = op.request && input.body ? own.writeRequest(input.body) : undefined;
    for (const [name, value] of Object.entries(own.requestHeaders(body !== undefined)))
      headers[name.toLowerCase()] = value;
    // The form mode reads no Accept (Omnipay sends text/xml, which Prism would refuse 406): Prism is
    // asked for what it answers, or a file result's own type.
    headers.accept = route.accept ?? own.answerType;
    headers.prefer = clientPrefers ?? `example=${route.example}`;
    const search = exchange.request.url.indexOf('?');
    const url = pathOf(op, input.params) + (search < 0 ? '' : exchange.request.url.slice(search));
    const answer: PrismAnswer = await askPrism(target, { verb: op.verb, url, headers, body }, prismTimeoutMs);
    if ('failed' in answer) return engineAway(exchange, op);
    const type = String(answer.headers['content-type'] ?? '');
    if (answer.status >= 400) {
      // What the client's own Prefer asked of Prism (code=400, say), or Prism's own failure: as Prism answers it.
      exchange.replaced = { status: answer.status, headers: { 'content-type': type }, body: answer.body };
      return refusalFields(op.refusalCode, refusals.internal());
    }
    // Prism cannot serve a binary example inline: a zip result is answered with its file.
    if (route.file && route.accept && type.startsWith(route.accept)) return fileFor(route.file);
    if (route.accept && type.startsWith(route.accept)) return answer.body.toString('utf8');
    const read = own.readAnswer(answer.body.toString('utf8'));
    if (!('ok' in read)) return engineAway(exchange, op);
    const outcome = scenario?.outcome;
    const example = outcome ? withOutcome(read.ok, outcome) : read.ok;
    return exampleAnswer(doc, op, input.body ?? {}, example, context.account);
  };

  const handlers = Object.fromEntries(operations.map((op) => [op.operationId, fromPrism]));
  const core = createGateway({
    handlers,
    accounts: mockAccounts([...sandboxAccounts(doc.info['x-sandbox']), ...accounts], exampleTokens(doc)),
    // The front logs the refusals it answers (onRefusal), in one line each.
    logger: false,
    onRequest: (record) => {
      const exchange = exchanges.getStore();
      if (exchange) exchange.record = record;
    },
  });

  /** Prism's own violations of a request the stubs refused for its schema, for the sl-violations header. */
  const violationsOf = async (request: GatewayRequest): Promise<string | undefined> => {
    await ready;
    const answer = await askPrism(
      target,
      { verb: request.verb, url: request.url, headers: { ...request.headers }, body: request.body },
      prismTimeoutMs,
    );
    return 'failed' in answer ? undefined : (answer.headers[VIOLATIONS_HEADER] as string | undefined);
  };

  const respond = async (sent: GatewayRequest): Promise<GatewayResponse> => {
    const asked = askedScenario(sent.url, sent.headers);
    const exchange: Exchange = { request: { ...sent, url: asked.url }, scenario: asked.asked, handled: false };
    let response = await exchanges.run(exchange, () => core.respond(exchange.request));
    if (exchange.replaced) return exchange.replaced;
    if (exchange.status !== undefined || exchange.headers)
      response = {
        ...response,
        status: exchange.status ?? response.status,
        headers: { ...response.headers, ...exchange.headers },
      };
    const check = exchange.record?.check;
    if (!exchange.handled && check && onRefusal)
      onRefusal(`${sent.verb} ${sent.url}`, exchange.record?.message ?? `HTTP ${response.status}`);
    if (exchange.refused && onRefusal) onRefusal(`${sent.verb} ${sent.url}`, exchange.refused);
    if (check === 'schema' || check === 'query') {
      const violations = await violationsOf(exchange.request);
      if (violations) response = { ...response, headers: { ...response.headers, [VIOLATIONS_HEADER]: violations } };
    }
    return response;
  };

  // The scenario's path prefix is not the contract's: the stubs' limits are those of the path under it.
  const under = (pathname: string) => askedScenario(pathname, {}).url;
  const gateway: Gateway = {
    handle: respond,
    respond,
    readLimit: (pathname) => core.readLimit(under(pathname)),
    bodyLimit: (pathname, head) => core.bodyLimit(under(pathname), head),
    namedLimit: (pathname, head) => core.namedLimit(under(pathname), head),
    serves: (pathname) => core.serves(under(pathname)),
    refusal: (pathname, headers, refusal) => core.refusal(under(pathname), headers, refusal),
    metrics: core.metrics,
  };
  // The stubs' own server: the body cap while reading, time-outs, a half-closed client answered.
  return createNodeServer(gateway);
}

/** The operation's path with its parameters put back. */
function pathOf(op: ContractOperation, params: Record<string, string>): string {
  return op.path.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(params[name] ?? ''));
}

/** Every access token the spec's examples send: each stands for the sandbox merchant on the mock. */
function exampleTokens(doc: MockDocument): string[] {
  const tokens = new Set<string>();
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) {
      for (const item of node) visit(item);
      return;
    }
    if (!node || typeof node !== 'object') return;
    for (const [key, value] of Object.entries(node)) {
      if (key === 'accessToken' && typeof value === 'string') tokens.add(value);
      else visit(value);
    }
  };
  visit(doc.components?.examples);
  visit(doc.paths);
  return [...tokens];
}

/** Proxy mode: every request passed to Prism's validating proxy, each violation it reports told. */
function proxyServer({ target, onViolation, prismTimeoutMs = PRISM_TIMEOUT_MS }: FrontOptions): Http.Server {
  // Idle connections kept as the stubs' server keeps them (65 s), longer than any client's keep-alive:
  // with Node's 5 s a client reused a connection the proxy was closing at that moment and got "other
  // side closed" (seen under load, issue 44: a client's idle timer runs late there).
  const server = http.createServer({
    requestTimeout: 30_000,
    headersTimeout: 10_000,
    keepAliveTimeout: serverDefaults.keepAliveTimeout,
  });
  // A client that half-closes after sending still gets its answer (as the stubs' server does).
  (server as Http.Server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;
  server.on('request', (req: Http.IncomingMessage, res: Http.ServerResponse) => {
    const headers: Http.OutgoingHttpHeaders = { ...req.headers, host: `${target.host}:${target.port}` };
    const upstream = http.request({ ...target, method: req.method, path: req.url, headers }, (answer) => {
      // The time-out is for the answer's head: a long file streamed after it is not cut.
      clearTimeout(timer);
      const status = answer.statusCode ?? 502;
      if (status < 400) {
        res.writeHead(status, answer.headers);
        return void answer.pipe(res);
      }
      const parts: Buffer[] = [];
      answer.on('data', (c: Buffer) => parts.push(c));
      answer.on('end', () => {
        const out = Buffer.concat(parts);
        try {
          const problem = JSON.parse(out.toString('utf8')) as { type?: string; validation?: Violation[] };
          if (onViolation && problem.type?.endsWith('#VIOLATIONS') && problem.validation) {
            const seen = new Set<string>();
            const unique = problem.validation.filter(
              (v) => !seen.has(JSON.stringify(v)) && seen.add(JSON.stringify(v)),
            );
            onViolation(`${req.method} ${req.url}`, unique);
          }
        } catch {
          // Not Prism's problem document: the upstream's own error, passed on as it is.
        }
        res.writeHead(status, answer.headers);
        res.end(out);
      });
    });
    const timer = setTimeout(
      () => upstream.destroy(new Error(`no answer within ${prismTimeoutMs} ms`)),
      prismTimeoutMs,
    );
    upstream.on('close', () => clearTimeout(timer));
    upstream.on('error', (error) => {
      if (res.headersSent) return void res.destroy();
      const unavailable = { responseCode: '-4', responseMessage: `Mock unavailable: ${error.message}` };
      res.writeHead(502, { 'content-type': own().answerType });
      res.end(own().writeAnswer(unavailable));
    });
    req.pipe(upstream);
  });
  return server;
}

const own = () => protocols.canonical;
