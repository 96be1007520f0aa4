// Scenarios on the mock (x-sandbox-scenarios, docs/SCENARIOS.md): what a stateless server can honour.
// An outcome of the operation is laid on the example Prism answers (its code, message and fields), and
// internalError answered at once; a fault of the connection is the sandbox's (a stored purchase whose
// answer is lost needs a store), so the mock refuses it -2 naming where the request put it (the
// header, or the base URL), as it refuses a name the operation does not have. The request names it as
// it names it to the sandbox: the header, or the path prefix of a form client's base URL.
import { scenarios } from '../generated/scenarios.ts';
import {
  askedText,
  parseScenario,
  refusedWhere,
  scenarioInPath,
  type ScenarioAsked,
  type ScenarioOutcome,
} from '../runtime/scenarios.ts';
import { refusals, type Refusal } from '../server-stubs/index.ts';

const HEADER = scenarios.header.toLowerCase();

/**
 * The scenario a request names, and its URL with the scenario's path prefix taken off (as the
 * sandbox's edge does): the header, the path prefix of a form client's base URL, or both (`asked`:
 * where; undefined when it names none).
 */
export function askedScenario(
  url: string,
  headers: Readonly<Record<string, string | undefined>>,
): { url: string; asked: ScenarioAsked | undefined } {
  const inPath = url.startsWith(scenarios.pathPrefix) ? scenarioInPath(url, scenarios.pathPrefix) : undefined;
  const header = headers[HEADER];
  if (!inPath) return { url, asked: header === undefined ? undefined : { header } };
  return { url: inPath.url, asked: { header, path: inPath.text } };
}

const faultWhy = (fault: string) => `the mock keeps no state: the fault ${fault} is the sandbox's (docs/SCENARIOS.md)`;

/** What the mock does for it: an outcome to lay on the example, the -4 of internalError, or a refusal. */
export function mockScenario(
  asked: ScenarioAsked,
  operationId: string,
): { outcome: ScenarioOutcome } | { refusal: Refusal } | undefined {
  const parsed = parseScenario(askedText(asked) ?? '', scenarios, operationId);
  // Named where the request put it: the header, the base URL's path prefix, or both; a part is refused
  // alone when it does not parse, or names a fault (the mock keeps no state).
  const refused = (why: string) => {
    const where = refusedWhere(asked, scenarios, operationId, why, (part) => {
      const one = parseScenario(part, scenarios, operationId);
      return 'why' in one ? one.why : one.scenario.fault ? faultWhy(one.scenario.fault.name) : undefined;
    });
    return { refusal: refusals.scenarioInvalid(where.header, where.pathPrefix, where.why) };
  };
  if ('why' in parsed) return refused(parsed.why);
  const s = parsed.scenario;
  if (s.fault) return refused(faultWhy(s.fault.name));
  if (s.internalError) return { refusal: refusals.scenarioInternalError() };
  return s.outcome ? { outcome: s.outcome } : undefined;
}
