// Scenarios per request (x-sandbox-scenarios, docs/SCENARIOS.md): a request names an outcome of its
// operation or a fault of its connection in the header SVC-SANDBOX-SCENARIO (or, from a form client's
// base URL, the path prefix /_scenario/NAME/), and only that request gets it. Three places, each small:
// - the edge (scenarioEdge): the path prefix read into the header, and the answer's connection faulted
//   (reset, closed, cut, held) where the answer says the scenario was applied;
// - the gateway's answer (respondWithScenario): the request run with its scenario in an
//   AsyncLocalStorage, a latency waited, a 503 made;
// - the handlers (withScenarios): the scenario checked against the operation once it is authenticated
//   and valid, an outcome laid on its answer; the card bank, 3D Secure and PayTo read the outcome
//   themselves (askedOutcome) so that what they store is what they answer.
// Nothing of this costs a request that names no scenario more than one header lookup.
import { AsyncLocalStorage } from 'node:async_hooks';
import type http from 'node:http';
import { scenarios } from '../generated/scenarios.ts';
import {
  parseScenario,
  refusedWhere,
  scenarioInPath,
  withOutcome,
  type Scenario,
  type ScenarioAsked,
  type ScenarioOutcome,
} from '../runtime/scenarios.ts';
import type { GatewayHandlers, GatewayRequest, GatewayResponse, HandlerContext } from '../server-stubs/index.ts';
import { refusals as stubRefusals } from '../server-stubs/index.ts';
import { refusedAs, sandboxRefusals as refusals } from './refusals.ts';

/** The header, in the lower case node:http gives headers. */
export const SCENARIO_HEADER = scenarios.header.toLowerCase();

/** The scenario of the request being answered, once the handlers' wrapper has checked it. */
interface ScenarioState {
  text: string;
  /** Where the request named it, for a refusal to say so. */
  asked: ScenarioAsked;
  scenario?: Scenario;
  /** The outcome set of the operation it was checked against. */
  set?: string | undefined;
}
const current = new AsyncLocalStorage<ScenarioState>();

/**
 * The outcome the request being answered asked for, for a handler that makes (and stores) it itself:
 * only an outcome of `set`, so that work the request started for another operation (a batch's lines)
 * never takes it.
 */
export function askedOutcome(set: string): ScenarioOutcome | undefined {
  const state = current.getStore();
  return state?.set === set ? state.scenario?.outcome : undefined;
}

/** Whether scenarios are honoured: not when PGW_SANDBOX_SCENARIOS=off, never when NODE_ENV=production. */
export function scenariosAllowed(env: NodeJS.ProcessEnv): { on: boolean; why: string } {
  if (env.NODE_ENV === 'production') return { on: false, why: 'NODE_ENV=production' };
  if (/^(0|off|false|no)$/i.test(env[scenarios.switch] ?? '')) return { on: false, why: `${scenarios.switch}=off` };
  return { on: true, why: 'on' };
}

/** The scenario as the answer's header says it was applied: outcome first, then fault (made once for each). */
const appliedTexts = new WeakMap<Scenario, string>();
function appliedText(s: Scenario): string {
  let text = appliedTexts.get(s);
  if (text === undefined) {
    text = [
      s.outcome?.name ?? (s.internalError ? 'internalError' : undefined),
      s.fault && (s.fault.value === undefined ? s.fault.name : `${s.fault.name}=${s.fault.value}`),
    ]
      .filter(Boolean)
      .join(',');
    appliedTexts.set(s, text);
  }
  return text;
}

const processed = (answer: unknown) =>
  typeof answer === 'object' &&
  answer !== null &&
  'responseCode' in answer &&
  Number((answer as { responseCode: unknown }).responseCode) >= 0;

/**
 * A scenario read once for each operation and text (a CI job sends the same few again and again): the
 * parse costs about a microsecond a request otherwise. At most CACHED kept; past that, parsed anew.
 */
const CACHED = 2000;
const parsedOnce = new Map<string, ReturnType<typeof parseScenario>>();
function parsedScenario(text: string, operationId: string): ReturnType<typeof parseScenario> {
  const key = `${operationId}\n${text}`;
  let parsed = parsedOnce.get(key);
  if (parsed === undefined) {
    parsed = parseScenario(text, scenarios, operationId);
    if (parsedOnce.size < CACHED) parsedOnce.set(key, parsed);
  }
  return parsed;
}

/**
 * The handlers with the request's scenario honoured: checked against the operation (a name it does
 * not have is refused -2 naming the header), then internalError and the faults that store nothing
 * answered without running the handler, and an outcome laid on what the handler answers when it
 * processed the request (a refusal of its own stands).
 */
export function withScenarios(
  handlers: GatewayHandlers<HandlerContext>,
  allowed: { on: boolean; why: string },
): GatewayHandlers<HandlerContext> {
  const wrapped: Record<string, unknown> = {};
  for (const [operationId, handler] of Object.entries(handlers) as [
    string,
    (input: unknown, ctx: HandlerContext) => unknown,
  ][]) {
    wrapped[operationId] = (input: unknown, ctx: HandlerContext) => {
      const state = current.getStore();
      if (!state) return handler(input, ctx);
      const refuse = refusedAs.bind(null, ctx.operation.refusalCode);
      const operationId = ctx.operation.operationId;
      if (!allowed.on) {
        const { header, pathPrefix } = refusedWhere(state.asked, scenarios, operationId, '');
        return refuse(refusals.scenarioOff(header, pathPrefix, allowed.why));
      }
      const parsed = parsedScenario(state.text, operationId);
      if ('why' in parsed) {
        // Named where the request put it: the header, the base URL's path prefix, or both.
        const { header, pathPrefix, why } = refusedWhere(state.asked, scenarios, operationId, parsed.why);
        return refuse(stubRefusals.scenarioInvalid(header, pathPrefix, why));
      }
      const s = parsed.scenario;
      state.scenario = s;
      state.set = scenarios.operations[ctx.operation.operationId]?.set;
      if (s.internalError) return refuse(stubRefusals.scenarioInternalError());
      if (s.fault?.name === 'unavailable') return refuse(refusals.scenarioUnavailable(s.fault.value!));
      if (s.fault?.name === 'resetBeforeCommit') return refuse(refusals.scenarioNotProcessed(s.fault.name));
      const answer = handler(input, ctx);
      if (!s.outcome) return answer;
      // The handler's answer is its own, made for this request: the outcome is laid on it in place.
      const shaped = (a: unknown) => (processed(a) ? withOutcome(a, s.outcome!, true) : a);
      return answer instanceof Promise ? answer.then(shaped) : shaped(answer);
    };
  }
  return wrapped as unknown as GatewayHandlers<HandlerContext>;
}

/**
 * The gateway's answer to a request that names a scenario: run with it, then a latency waited or a
 * 503 made, and the header saying what was applied (which tells the edge what to do to the connection).
 * Synchronous where the gateway answered so (no promise, no microtask more than a request naming none).
 */
export function respondWithScenario(
  text: string,
  request: GatewayRequest,
  respond: (request: GatewayRequest) => GatewayResponse | Promise<GatewayResponse>,
): GatewayResponse | Promise<GatewayResponse> {
  const state: ScenarioState = { text, asked: askedAt.get(request.headers) ?? { header: text } };
  const found = current.run(state, () => respond(request));
  return found instanceof Promise ? found.then((response) => applied(response, state)) : applied(found, state);
}

function applied(response: GatewayResponse, state: ScenarioState): GatewayResponse | Promise<GatewayResponse> {
  const s = state.scenario;
  if (!s) return response;
  // The core makes a response, and its headers, for each request: changed in place, nothing copied.
  response.headers[SCENARIO_HEADER] = appliedText(s);
  if (s.fault?.name === 'unavailable') {
    response.status = 503;
    response.headers['retry-after'] = String(s.fault.value);
  }
  return s.fault?.name === 'latency'
    ? new Promise((resolve) => setTimeout(() => resolve(response), s.fault!.value))
    : response;
}

/**
 * Where a request named its scenario, when the edge moved a path prefix's into the header: by the
 * request's headers object, which the node adapter hands the gateway as it is. A request absent here
 * named it in the header alone.
 */
const askedAt = new WeakMap<object, ScenarioAsked>();

/** The faults done to the connection, by the name the answer's header gives. */
const CONNECTION_FAULTS = new Set(['noAnswer', 'resetBeforeCommit', 'resetAfterCommit', 'answerLost', 'truncated']);
const CONNECTION_FAULT_NAMED = new RegExp(`(^|[\\s,])(${[...CONNECTION_FAULTS].join('|')})(\\s*$|\\s*,)`);

/**
 * At the HTTP edge, before the gateway reads the request: a scenario in the path prefix is moved to the
 * header (joined to one the header names), and when the request names one, its answer is watched: an
 * answer whose header says a connection fault was applied is not written as it is. `held` keeps the
 * sockets of noAnswer, so that the server's close ends them.
 */
export function scenarioEdge(req: http.IncomingMessage, res: http.ServerResponse, held: Set<http.ServerResponse>) {
  const inPath = req.url?.startsWith(scenarios.pathPrefix) ? scenarioInPath(req.url, scenarios.pathPrefix) : undefined;
  if (inPath) {
    req.url = inPath.url;
    const given = req.headers[SCENARIO_HEADER];
    req.headers[SCENARIO_HEADER] = given === undefined ? inPath.text : `${given},${inPath.text}`;
    askedAt.set(req.headers, { header: given === undefined ? undefined : String(given), path: inPath.text });
  }
  const asked = req.headers[SCENARIO_HEADER];
  // Only a request that names a fault of the connection has its answer watched.
  if (asked === undefined || !CONNECTION_FAULT_NAMED.test(String(asked))) return;
  const writeHead = res.writeHead.bind(res) as (status: number, headers: http.OutgoingHttpHeaders) => unknown;
  const fault = (headers: http.OutgoingHttpHeaders | undefined) =>
    String(headers?.[SCENARIO_HEADER] ?? '')
      .split(',')
      .map((p) => p.split('=')[0]!)
      .find((name) => CONNECTION_FAULTS.has(name));
  const silence = () => {
    res.write = (() => true) as never;
    res.end = (() => res) as never;
  };
  res.writeHead = ((status: number, headers: http.OutgoingHttpHeaders) => {
    const name = fault(headers);
    const socket = req.socket;
    switch (name) {
      case 'resetBeforeCommit':
      case 'resetAfterCommit':
        silence();
        socket.resetAndDestroy();
        return res;
      case 'answerLost':
        silence();
        // A clean close with nothing written: the client reads the end of the connection, no answer.
        socket.end();
        return res;
      case 'noAnswer': {
        silence();
        held.add(res);
        const timer = setTimeout(() => socket.destroy(), (scenarios.faults.noAnswer.holdSeconds ?? 120) * 1000);
        timer.unref();
        socket.once('close', () => {
          clearTimeout(timer);
          held.delete(res);
        });
        return res;
      }
      case 'truncated': {
        writeHead(status, headers);
        // Half the body, then the connection ended once it is written: the client's read comes up short of
        // the Content-Length (a streamed answer: its chunks, without the chunk that ends them).
        res.end = ((body?: unknown) => {
          const bytes = typeof body === 'string' ? Buffer.from(body) : body instanceof Uint8Array ? body : undefined;
          res.write(bytes ? bytes.subarray(0, Math.floor(bytes.length / 2)) : new Uint8Array(0), () =>
            socket.destroy(),
          );
          return res;
        }) as never;
        return res;
      }
      default:
        return writeHead(status, headers);
    }
  }) as never;
}
