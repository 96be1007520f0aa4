// The mock's front: a thin node:http proxy before Prism that reads the body's `method` and asks
// Prism for that method's own result example (Prefer: example=…), the pattern Prism's maintainers
// point to, since Prism cannot choose an example from the body. A client's own Prefer header wins.
// A request the gateway would refuse is answered as the gateway answers it (HTTP 200 and a negative
// responseCode naming the field, from the server stubs' own checks), with Prism's violations of it in
// the sl-violations header; a malformed body is answered at once (Prism would never answer it).
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import path from 'node:path';
import { operations, type ContractOperation } from '../generated/operations.ts';
import type { MockRoute } from '../runtime/operation-model.ts';
import type { Protocol } from '../runtime/protocols/protocol.ts';
import {
  compile,
  methodPath,
  normalised,
  protocols,
  serverDefaults,
  withoutUnknownFields,
} from '../server-stubs/index.ts';
import {
  createGateway,
  refusalFields,
  type GatewayRequest,
  type GatewayResponse,
  type RequestRecord,
} from '../server-stubs/index.ts';
import { type ScenarioOutcome, withOutcome } from '../runtime/scenarios.ts';
import { askedScenario, mockScenario } from './scenarios.ts';

const require = createRequire(import.meta.url);
const configFile = require.resolve('payment-gateway-contract/mock.json');
const routes: (MockRoute & { pattern: RegExp })[] = (
  JSON.parse(readFileSync(configFile, 'utf8')).routes as MockRoute[]
).map((r) => ({
  ...r,
  pattern: compile(r.path).pattern,
}));

export function routeFor(verb: string, pathname: string, body: unknown): MockRoute | undefined {
  const method = typeof body === 'object' && body !== null ? (body as { method?: unknown }).method : undefined;
  return routes.find((r) => r.verb === verb && r.pattern.test(pathname) && (r.method === null || r.method === method));
}

export interface Violation {
  location: string[];
  severity: string;
  code?: string | number;
  message: string;
}

export interface FrontOptions {
  /** Where Prism listens. */
  target: { host: string; port: number };
  /** In proxy mode Prism answers from the upstream: the front only passes requests through. */
  choosesExamples: boolean;
  /** Each contract violation Prism finds in proxy mode, in the request or the upstream's answer. */
  onViolation?: (request: string, violations: Violation[]) => void;
  /**
   * Each request the mock refuses as the gateway does, with the refusal's message: one short line for
   * its log (Prism's violations of it stay in the sl-violations header, several kilobytes for an
   * unknown method).
   */
  onRefusal?: (request: string, message: string) => void;
  /** Settles when Prism listens: a request that arrives before waits for it (the front takes its port first). */
  ready?: Promise<void>;
}

/** The header that carries Prism's violations of a refused request (Prism's own name for it). */
export const VIOLATIONS_HEADER = 'sl-violations';

/**
 * The gateway's own refusals, for the mock to answer as the gateway does: the server stubs' core with
 * no handler and no account. A request it refuses before authentication (malformed JSON, an unknown
 * path or method, an invalid or missing field) gets the gateway's answer: the operation's status
 * and a negative responseCode naming the field. A request that reaches authentication (refused -1
 * for want of accounts) is valid, and goes to Prism for its example.
 */
function gatewayRefusals(): (request: GatewayRequest) => Promise<GatewayResponse | undefined> {
  const seen: { last?: RequestRecord } = {};
  const core = createGateway({
    handlers: {},
    accounts: { find: () => undefined, findByAccessToken: () => undefined },
    onRequest: (r) => (seen.last = r),
    // The front logs the refusals it answers itself (onRefusal), in one line each.
    logger: false,
  });
  return async (request) => {
    delete seen.last;
    const response = await core.respond(request);
    const record = seen.last as RequestRecord | undefined; // set by onRequest, during respond()
    return record?.reason ? undefined : response;
  };
}

const SPEC_PATHS = new Set(['/openapi.json', '/openapi.yaml', '/docs', '/docs/']);

export function createFront({ target, choosesExamples, onViolation, onRefusal, ready }: FrontOptions): http.Server {
  const files = new Map<string, Buffer>();
  const fileFor = (name: string) => {
    if (!files.has(name)) files.set(name, readFileSync(path.join(path.dirname(configFile), name)));
    return files.get(name)!;
  };
  const refusals = gatewayRefusals();
  // An idle connection is kept as long as the stubs' server keeps one (65 s), longer than any client's
  // keep-alive: with Node's 5 s a client that reused a connection the front was closing at that moment
  // got "other side closed" (seen under load, issue 44: a client's idle timer runs late there).
  return http.createServer({ keepAliveTimeout: serverDefaults.keepAliveTimeout }, (req, res) => {
    // A scenario the request names (mock/scenarios.ts): its path prefix is taken off here.
    const asked = choosesExamples ? askedScenario(req) : undefined;
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      await ready;
      /** Answers the gateway's refusal, and says so in one line. */
      const refuse = (answer: GatewayResponse, headers: Record<string, string> = {}) => {
        if (onRefusal) {
          const message = refusalMessage(answer);
          onRefusal(`${req.method} ${req.url}`, message ?? `HTTP ${answer.status}`);
        }
        res.writeHead(answer.status, { ...answer.headers, ...headers }).end(answer.body);
      };
      const raw = Buffer.concat(chunks);
      let url = req.url ?? '/';
      let pathname = url.split('?')[0]!;
      let refusal: GatewayResponse | undefined;
      let body: unknown;
      // Prism speaks the spec's own protocol: a request in another (the form/XML mode, by its
      // Content-Type; docs/WIRE-FORMATS.md) is asked of Prism in it, and its answer written back.
      const own = protocols.canonical;
      const protocol = choosesExamples
        ? protocols.choose(req.headers as Record<string, string | undefined>, undefined)
        : own;
      const translated = protocol !== own;
      if (choosesExamples) {
        refusal = await refusals({
          verb: req.method ?? 'GET',
          url,
          headers: req.headers as Record<string, string | undefined>,
          body: raw.length ? raw : undefined,
        }).catch(() => undefined);
        if (refusal && SPEC_PATHS.has(pathname) && refusal.status === 200)
          return void res.writeHead(200, refusal.headers).end(refusal.body);
        const read = raw.length ? protocol.read(raw) : { ok: undefined };
        // Malformed: Prism would wait for a body it can read. Answer as the gateway does, now.
        if (!('ok' in read)) return refuse(refusal!);
        body = read.ok;
        // An unknown path or method: Prism's answer would be a list of every branch's violations.
        if (refusal && !routeFor(req.method ?? 'GET', pathname, body)) return refuse(refusal);
      }
      // What Prism is sent: the request as the gateway reads it. Prism knows neither a trailing slash
      // (clients post to /post/), nor /token/processCard (x-method-in-path), nor a field no form declares
      // (x-unknown-fields: ignore), nor a lower-case currency (x-normalise).
      let forwarded = raw;
      let op: ContractOperation | undefined;
      if (choosesExamples) {
        let rewritten = false;
        if (pathname.length > 1 && pathname.endsWith('/')) pathname = pathname.replace(/\/+$/, '') || '/';
        const named = methodPath(pathname);
        if (named && typeof body === 'object' && body !== null && !Array.isArray(body)) {
          body = { method: named.method, ...body };
          pathname = named.path;
          rewritten = true;
        }
        url = pathname + url.slice(url.split('?')[0]!.length);
        const found = routeFor(req.method ?? 'GET', pathname, body);
        op = found && operations.find((o) => o.operationId === found.operationId);
        if (op) body = protocol.typed(body, op.shapes.request);
        const known = op ? withoutUnknownFields(op, body) : undefined;
        const read = op && known ? normalised(op, known.body) : body;
        if (known && (translated || known.unknown.length || rewritten || read !== known.body)) {
          forwarded = Buffer.from(own.writeRequest(read as Record<string, unknown>));
          body = read;
        }
      }
      const route = choosesExamples ? routeFor(req.method ?? 'GET', pathname, body) : undefined;
      const headers: http.OutgoingHttpHeaders = {
        ...req.headers,
        host: `${target.host}:${target.port}`,
        'content-length': String(forwarded.length),
      };
      delete headers['transfer-encoding'];
      if (translated) {
        for (const [name, value] of Object.entries(own.requestHeaders(true))) headers[name.toLowerCase()] = value;
        // The form mode reads no Accept (docs/WIRE-FORMATS.md; Omnipay sends text/xml, which Prism
        // would refuse 406): Prism is asked for what it answers, or a file result's own type.
        headers.accept = route?.accept ?? own.answerType;
      }
      const chosen = Boolean(route && !req.headers.prefer);
      if (route && chosen) headers.prefer = `example=${route.example}`;
      const scenario = route && asked !== undefined && !refusal ? mockScenario(asked, route.operationId) : undefined;
      if (scenario && 'refusal' in scenario) {
        const scenarioOp = operations.find((o) => o.operationId === route!.operationId)!;
        const fields = refusalFields(scenarioOp.refusalCode, scenario.refusal);
        return refuse({
          status: scenario.refusal.status ?? scenarioOp.status,
          headers: { 'content-type': protocol.answerType },
          body: protocol.writeAnswer(fields, scenarioOp.shapes.refusal),
        });
      }
      const outcome = scenario?.outcome;
      if (route?.accept && (!req.headers.accept || req.headers.accept === '*/*')) headers.accept = route.accept;
      const onAnswer = (answer: http.IncomingMessage) => {
        const status = answer.statusCode!;
        if (refusal) {
          // The gateway's refusal, with Prism's violations of the request beside it.
          answer.resume();
          const violations = answer.headers[VIOLATIONS_HEADER] as string | undefined;
          return refuse(refusal, violations ? { [VIOLATIONS_HEADER]: violations } : {});
        }
        // Prism cannot serve a binary example inline: a zip result is answered with its file.
        if (route?.file && chosen && status < 300 && answer.headers['content-type']?.startsWith(route.accept!)) {
          answer.resume();
          const bytes = fileFor(route.file);
          res.writeHead(status, { 'content-type': route.accept!, 'content-length': bytes.length });
          return res.end(bytes);
        }
        if ((translated || outcome) && status < 400 && protocols.answeredIn(answer.headers['content-type']) === own)
          return void writeTranslated(answer, res, protocol, op, outcome);
        if (status < 400) {
          res.writeHead(status, answer.headers);
          return answer.pipe(res);
        }
        const parts: Buffer[] = [];
        answer.on('data', (c: Buffer) => parts.push(c));
        answer.on('end', () => {
          const out: Buffer = Buffer.concat(parts);
          if (!choosesExamples && onViolation) {
            try {
              const problem = JSON.parse(out.toString('utf8')) as { type?: string; validation?: Violation[] };
              if (problem.type?.endsWith('#VIOLATIONS') && problem.validation) {
                const seen = new Set<string>();
                const unique = problem.validation.filter(
                  (v) => !seen.has(JSON.stringify(v)) && seen.add(JSON.stringify(v)),
                );
                onViolation(`${req.method} ${url}`, unique);
              }
            } catch {
              // Not Prism's problem document: the upstream's own error, passed on as it is.
            }
          }
          res.writeHead(status, answer.headers);
          res.end(out);
        });
      };
      const send = () => {
        const upstream = http.request({ ...target, method: req.method, path: url, headers }, onAnswer);
        upstream.on('error', (error: NodeJS.ErrnoException) => {
          // A kept-alive connection to Prism that Prism closed as it was reused (its idle time-out, 5 s,
          // met the request): sent again on another connection, as Node's documentation advises. No
          // answer had begun, so Prism never saw the request.
          if (upstream.reusedSocket && error.code === 'ECONNRESET') return send();
          if (refusal) return refuse(refusal);
          const unavailable = { responseCode: '-4', responseMessage: `Mock unavailable: ${error.message}` };
          res.writeHead(502, { 'content-type': protocol.answerType });
          res.end(protocol.writeAnswer(unavailable));
        });
        upstream.end(forwarded);
      };
      send();
    });
  });
}

/**
 * Prism's example, in the spec's own protocol, written in the protocol the request was in, with the
 * outcome of a scenario the request named laid on it.
 */
function writeTranslated(
  answer: http.IncomingMessage,
  res: http.ServerResponse,
  protocol: Protocol,
  op: ContractOperation | undefined,
  outcome: ScenarioOutcome | undefined,
): void {
  const parts: Buffer[] = [];
  answer.on('data', (c: Buffer) => parts.push(c));
  answer.on('end', () => {
    const read = protocols.canonical.readAnswer(Buffer.concat(parts).toString('utf8'));
    const example = 'ok' in read ? read.ok : {};
    const value = outcome ? (withOutcome(example, outcome) as Record<string, unknown>) : example;
    const shape = op && (Number(value.responseCode) < 0 ? op.shapes.refusal : op.shapes.result);
    const text = protocol.writeAnswer(value, shape);
    res.writeHead(answer.statusCode!, {
      'content-type': protocol.answerType,
      'content-length': Buffer.byteLength(text),
    });
    res.end(text);
  });
}

/** A refusal's message, read back in the protocol it is written in. */
function refusalMessage(answer: GatewayResponse): string | undefined {
  const read = protocols.answeredIn(answer.headers['content-type'])?.readAnswer(String(answer.body));
  const message = read && 'ok' in read ? read.ok.responseMessage : undefined;
  return typeof message === 'string' ? message : undefined;
}
