// Sandbox scenarios (x-sandbox-scenarios): what one request may ask the sandbox for, read from its
// header (or the path prefix a form client puts in its base URL), checked against its operation's
// documented outcomes and the faults, and an outcome's fields laid on an answer. The catalogue is
// generated (generated/scenarios.ts); the sandbox, the mock and the tests read it through here. No
// node: import: the typed client's tests and the docs' console run it too.

/** One documented outcome of an operation: its answer's code and message, and the fields it gives. */
export interface ScenarioOutcome {
  name: string;
  responseCode: number;
  responseMessage: string;
  /** Answer fields by dotted path (-1: the last item of an array). */
  set?: Readonly<Record<string, string>>;
  /** Answer fields left out. */
  unset?: readonly string[];
  /** A transactionAmount that gives it with no header (card outcomes). */
  amount?: string;
  /** A file answer (a zip or a CSV): no responseCode on the wire, the file itself. */
  file?: true;
}

/** What happens to the connection (x-sandbox-scenarios.faults). */
export interface ScenarioFault {
  summary: string;
  /** Whether the request is processed and stored before the fault. */
  stores: boolean;
  holdSeconds?: number;
  value?: { name: string; minimum: number; maximum: number; default: number };
}

/** The catalogue; generated/scenarios.ts names its operations and faults (Op, Fault). */
export interface ScenarioCatalogue<Op extends string = string, Fault extends string = string> {
  /** The request header that names a scenario. */
  header: string;
  /** The path prefix that names one for a client that cannot add a header: /_scenario/NAME/… */
  pathPrefix: string;
  /** The environment variable that turns scenarios off for a deployment. */
  switch: string;
  faults: Readonly<Record<Fault, ScenarioFault>>;
  refusals: Readonly<Record<string, { responseCode: number; trigger: string; scenario?: true }>>;
  /** Each operation's outcomes (its set's, or its single one), by operationId. */
  operations: Readonly<Record<Op, { set?: string; outcomes: readonly ScenarioOutcome[]; refusals: readonly string[] }>>;
}

/** A scenario a request asked for, checked against its operation. */
export interface Scenario {
  /** As the request named it (trimmed). */
  text: string;
  outcome?: ScenarioOutcome;
  /** internalError: the -4 refusal, nothing processed. */
  internalError?: true;
  fault?: { name: string; value?: number };
}

/** The longest scenario text read: anything longer is refused unread. */
export const MAX_SCENARIO_LENGTH = 100;

/** The refusal's own name that is a scenario (internalError). */
const refusalScenarios = (c: ScenarioCatalogue) =>
  Object.entries(c.refusals)
    .filter(([, r]) => r.scenario)
    .map(([name]) => name);

/**
 * The scenario `text` names for `operationId`, or why it names none: one outcome of the operation (or
 * internalError) and one fault at most, joined by a comma; a fault's value after `=`.
 */
export function parseScenario(
  text: string,
  catalogue: ScenarioCatalogue,
  operationId: string,
): { scenario: Scenario } | { why: string } {
  const trimmed = text.trim();
  if (trimmed.length > MAX_SCENARIO_LENGTH) return { why: `must be at most ${MAX_SCENARIO_LENGTH} characters` };
  const own = (catalogue.operations as ScenarioCatalogue['operations'])[operationId]?.outcomes ?? [];
  const faults = Object.keys(catalogue.faults);
  const scenario: Scenario = { text: trimmed };
  const parts = trimmed.split(',').map((p) => p.trim());
  if (!trimmed || parts.some((p) => !p)) return { why: 'must name a scenario: an outcome, a fault, or both' };
  for (const part of parts) {
    const [name = '', value, ...extra] = part.split('=');
    const fault = Object.hasOwn(catalogue.faults, name)
      ? (catalogue.faults as ScenarioCatalogue['faults'])[name]
      : undefined;
    if (fault) {
      if (scenario.fault) return { why: `names two faults (${scenario.fault.name}, ${name}); one at most` };
      if (extra.length) return { why: `'${part}' has more than one '='` };
      if (value === undefined) {
        scenario.fault = { name, ...(fault.value ? { value: fault.value.default } : {}) };
        continue;
      }
      if (!fault.value) return { why: `the fault ${name} takes no value` };
      const n = /^[0-9]{1,9}$/.test(value) ? Number(value) : Number.NaN;
      if (!(n >= fault.value.minimum && n <= fault.value.maximum))
        return {
          why: `${name}=${value.slice(0, 20)}: its ${fault.value.name} must be a whole number from ${fault.value.minimum} to ${fault.value.maximum}`,
        };
      scenario.fault = { name, value: n };
      continue;
    }
    if (value !== undefined) return { why: `'${name.slice(0, 40)}' takes no value` };
    const outcome = own.find((o) => o.name === name);
    const internal = refusalScenarios(catalogue).includes(name);
    if (!outcome && !internal)
      return {
        why: `'${name.slice(0, 40)}' is neither an outcome of ${operationId} (${[...own.map((o) => o.name), ...refusalScenarios(catalogue)].join(', ')}) nor a fault (${faults.join(', ')})`,
      };
    if (scenario.outcome || scenario.internalError)
      return { why: `names two outcomes (${scenario.outcome?.name ?? 'internalError'}, ${name}); one at most` };
    if (outcome) scenario.outcome = outcome;
    else scenario.internalError = true;
  }
  return { scenario };
}

/**
 * Where a request named its scenario: the header's text, the text of the path prefix of a form
 * client's base URL, or both (read as one scenario, the header's part first).
 */
export interface ScenarioAsked {
  header?: string | undefined;
  path?: string | undefined;
}

/** The one scenario text a request names, wherever it named it (undefined: none). */
export const askedText = (asked: ScenarioAsked): string | undefined =>
  asked.header === undefined ? asked.path : asked.path === undefined ? asked.header : `${asked.header},${asked.path}`;

/**
 * Where a refused scenario was put, for the refusal to name it as the caller sent it: the header
 * (its name), the base URL's path prefix, or both. Of both, the one whose part is refused on its own
 * (with that part's reason), else both: only their combination is wrong (two outcomes, two faults).
 * `refusal` is why one part alone is refused: by default, that it does not parse (a server that
 * refuses more, as the mock refuses faults, gives its own rule).
 */
export function refusedWhere(
  asked: ScenarioAsked,
  catalogue: ScenarioCatalogue,
  operationId: string,
  why: string,
  refusal: (part: string) => string | undefined = (part) => {
    const parsed = parseScenario(part, catalogue, operationId);
    return 'why' in parsed ? parsed.why : undefined;
  },
): { header: string | undefined; pathPrefix: string | undefined; why: string } {
  const inHeader = { header: catalogue.header, pathPrefix: undefined };
  const inPath = { header: undefined, pathPrefix: catalogue.pathPrefix };
  if (asked.path === undefined) return { ...inHeader, why };
  if (asked.header === undefined) return { ...inPath, why };
  const path = refusal(asked.path);
  if (path !== undefined) return { ...inPath, why: path };
  const header = refusal(asked.header);
  if (header !== undefined) return { ...inHeader, why: header };
  return { header: catalogue.header, pathPrefix: catalogue.pathPrefix, why };
}

/** The scenario text a path names under the prefix (/_scenario/TEXT/rest), and the rest of the path. */
export function scenarioInPath(url: string, prefix: string): { text: string; url: string } | undefined {
  if (!url.startsWith(`${prefix}/`)) return undefined;
  const end = url.indexOf('/', prefix.length + 1);
  const segment = url.slice(prefix.length + 1, end < 0 ? undefined : end);
  let text: string;
  try {
    text = decodeURIComponent(segment);
  } catch {
    text = segment;
  }
  return { text, url: end < 0 ? '/' : url.slice(end) };
}

/**
 * The answer with the outcome's code, message and fields laid on it: a copy of the answer and of each
 * object on a path the outcome sets (the rest shared, not copied), or, `inPlace`, the answer itself
 * changed (one made for this request); paths that are not there are skipped.
 */
export function withOutcome<T>(answer: T, outcome: ScenarioOutcome, inPlace = false): T {
  if (typeof answer !== 'object' || answer === null || Array.isArray(answer)) return answer;
  const out = inPlace ? (answer as Record<string, unknown>) : { ...(answer as Record<string, unknown>) };
  // The answer's own type of responseCode: a string on the body APIs, an integer on the NPP and payout paths.
  if ('responseCode' in out)
    out.responseCode = typeof out.responseCode === 'number' ? outcome.responseCode : String(outcome.responseCode);
  if ('responseMessage' in out) out.responseMessage = outcome.responseMessage;
  if (outcome.set) for (const path in outcome.set) setPath(out, path.split('.'), outcome.set[path]!, inPlace);
  if (outcome.unset) for (const name of outcome.unset) delete out[name];
  return out as T;
}

/** Sets a dotted path, copying each object or array on the way unless in place (a copy is never shared with the answer given). */
function setPath(target: Record<string, unknown>, path: string[], value: string, inPlace: boolean): void {
  let node: Record<string | number, unknown> | unknown[] = target;
  for (const [i, key] of path.entries()) {
    const at: string | number = Array.isArray(node) ? (key === '-1' ? node.length - 1 : Number(key)) : key;
    if (Array.isArray(node) && !(typeof at === 'number' && at >= 0 && at < node.length)) return;
    const holder = node as Record<string | number, unknown>;
    if (i === path.length - 1) {
      holder[at] = value;
      return;
    }
    const next: unknown = holder[at];
    if (typeof next !== 'object' || next === null) return;
    const copy: Record<string, unknown> | unknown[] = inPlace
      ? (next as Record<string, unknown>)
      : Array.isArray(next)
        ? [...next]
        : { ...(next as Record<string, unknown>) };
    holder[at] = copy;
    node = copy;
  }
}

/** Whether an answer is the outcome's: its code, and each field it sets (the coverage test's check). */
export function isOutcome(answer: unknown, outcome: ScenarioOutcome): boolean {
  if (typeof answer !== 'object' || answer === null) return false;
  const a = answer as Record<string, unknown>;
  if (Number(a.responseCode) !== outcome.responseCode || a.responseMessage !== outcome.responseMessage) return false;
  for (const [path, value] of Object.entries(outcome.set ?? {})) {
    let node: unknown = a;
    for (const key of path.split('.')) {
      if (typeof node !== 'object' || node === null) return false;
      node = Array.isArray(node) ? node[key === '-1' ? node.length - 1 : Number(key)] : (node as never)[key];
    }
    if (node !== value) return false;
  }
  return (outcome.unset ?? []).every((name) => !(name in a));
}
