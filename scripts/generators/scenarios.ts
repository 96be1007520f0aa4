// The sandbox scenarios (x-sandbox-scenarios, spec/sandbox-scenarios.yaml) as the code reads them and
// as the docs show them: generated/scenarios.ts, every operation's outcomes (its descriptor's set, or
// its single outcome, its first result example's) with the faults and refusals, for the sandbox, the
// mock, the docs' console and the tests; and docs/SCENARIOS.md, the table of every outcome of every
// operation with the triggers that reach it. Never edited by hand: test/contract/scenarios.test.ts
// fails when either is stale.
import { protocolsOf } from '../lib/protocols.ts';
import type { ScenarioCatalogue, ScenarioOutcome } from '../../runtime/scenarios.ts';
import { exampleValue, resolvePointer, type Doc, type Operation } from '../lib/contract.ts';
import { tsHeader } from './banner.ts';

type Spec = {
  header: string;
  pathPrefix: string;
  switch: string;
  'x-defined': string;
  legacyWay: 'pathPrefix';
  faults: ScenarioCatalogue['faults'];
  refusals: ScenarioCatalogue['refusals'];
  outcomes: Record<string, (ScenarioOutcome & { 'x-inferred'?: string })[]>;
};

const specOf = (doc: Doc): Spec => (doc as unknown as { 'x-sandbox-scenarios': Spec })['x-sandbox-scenarios'];

/** An operation's single outcome, from its first result example: approved, pending, or ok. */
function singleOutcome(doc: Doc, op: Operation): ScenarioOutcome {
  if (op.resultType && op.resultType !== protocolsOf(doc).canonical.answerType)
    return { name: 'ok', responseCode: 0, responseMessage: `the ${op.resultType} file`, file: true };
  const example = exampleValue(doc, op.examples.result![0]!) as { responseCode: unknown; responseMessage: string };
  const code = Number(example.responseCode);
  const name = code === 10 ? 'pending' : example.responseMessage === 'Transaction approved' ? 'approved' : 'ok';
  return { name, responseCode: code, responseMessage: example.responseMessage };
}

/** Whether a request schema (or any of its forms) requires a field beyond `method`. */
function requiresAField(doc: Doc, pointer: string): boolean {
  const schema = resolvePointer(doc, pointer);
  const own = (schema.required ?? []).some((f: string) => f !== 'method');
  return own || (schema.oneOf ?? []).some((branch: { $ref: string }) => requiresAField(doc, branch.$ref));
}

/** The catalogue: every operation (webhooks aside) with its outcomes; throws on a name that is not unique. */
export function scenarioCatalogue(doc: Doc, ops: Operation[]): ScenarioCatalogue {
  const spec = specOf(doc);
  const byId = new Map(ops.map((o) => [o.operationId, o]));
  const operations: Record<string, { set?: string; outcomes: ScenarioOutcome[]; refusals: string[] }> = {};
  const reserved = new Set([...Object.keys(spec.faults), ...Object.keys(spec.refusals)]);
  for (const op of ops.filter((o) => !o.webhook)) {
    // A deprecated alias answers as the operation it repeats.
    const set = op.outcomes ?? (op.aliasOf ? byId.get(op.aliasOf)?.outcomes : undefined);
    if (set !== undefined && !spec.outcomes[set])
      throw new Error(`${op.operationId}: outcomes '${set}' is not a set of x-sandbox-scenarios.outcomes`);
    const outcomes = set
      ? spec.outcomes[set]!.map(({ 'x-inferred': _, ...o }) => o)
      : [singleOutcome(doc, op.aliasOf ? byId.get(op.aliasOf)! : op)];
    const names = outcomes.map((o) => o.name);
    if (new Set(names).size !== names.length) throw new Error(`${op.operationId}: two outcomes share a name`);
    const clash = names.find((n) => reserved.has(n));
    if (clash) throw new Error(`${op.operationId}: the outcome '${clash}' has the name of a fault or a refusal`);
    // The refusals it documents: -1 where it takes credentials, -2 where it takes a body, -3 where its
    // body has a field it requires (beyond its method), -4 everywhere.
    const refusals = Object.entries(spec.refusals)
      .filter(([, r]) =>
        r.responseCode === -1
          ? Boolean(op.credentials?.length || op.security.length)
          : r.responseCode === -2
            ? Boolean(op.request)
            : r.responseCode === -3
              ? Boolean(op.request) && requiresAField(doc, op.request!)
              : true,
      )
      .map(([name]) => name);
    operations[op.operationId] = { ...(set ? { set } : {}), outcomes, refusals };
  }
  const amounts = Object.values(spec.outcomes)
    .flat()
    .flatMap((o) => (o.amount ? [o.amount] : []));
  if (new Set(amounts).size !== amounts.length) throw new Error('x-sandbox-scenarios: two outcomes share an amount');
  return {
    header: spec.header,
    pathPrefix: spec.pathPrefix,
    switch: spec.switch,
    faults: spec.faults,
    refusals: spec.refusals,
    operations,
  };
}

/** Each set's outcomes, by name, from the operations that have one. */
function setsOf(c: ScenarioCatalogue): Record<string, readonly ScenarioOutcome[]> {
  const sets: Record<string, readonly ScenarioOutcome[]> = {};
  for (const o of Object.values(c.operations)) if (o.set) sets[o.set] = o.outcomes;
  return sets;
}

/** The catalogue as TypeScript, an operation of a set pointing at the set's list (`sets.card`). */
function withSetsNamed(c: ScenarioCatalogue): string {
  const MARK = '\u0000set:';
  const operations = Object.fromEntries(
    Object.entries(c.operations).map(([id, o]) => [id, o.set ? { ...o, outcomes: `${MARK}${o.set}` } : o]),
  );
  return JSON.stringify({ ...c, operations }, null, 2).replace(
    new RegExp(`"${MARK.replace('\u0000', '\\\\u0000')}([A-Za-z0-9]+)"`, 'g'),
    (_, set: string) => `sets.${set}`,
  );
}

const union = (names: Iterable<string>) =>
  [...new Set(names)]
    .sort()
    .map((n) => JSON.stringify(n))
    .join(' | ');

/** generated/scenarios.ts. */
export function scenariosModule(doc: Doc, ops: Operation[]): string {
  const c = scenarioCatalogue(doc, ops);
  const outcomeNames = Object.values(c.operations).flatMap((o) => o.outcomes.map((x) => x.name));
  const refusalScenarios = Object.entries(c.refusals)
    .filter(([, r]) => r.scenario)
    .map(([n]) => n);
  return `${tsHeader("The sandbox scenarios (x-sandbox-scenarios): each operation's documented outcomes, the faults and the refusals, for runtime/scenarios.ts.")}
import type { ScenarioCatalogue } from '../runtime/scenarios.ts';
import type { OperationId } from './operations.ts';

/** The outcome sets, each written once; the operations of a set share its list. */
const sets = ${JSON.stringify(setsOf(c), null, 2)} as const;

export const scenarios: ScenarioCatalogue<OperationId, ScenarioFaultName> = ${withSetsNamed(c)};

/** Every outcome's name, over every operation (an operation takes its own: scenarios.operations[id]). */
export type ScenarioOutcomeName = ${union(outcomeNames)};
export type ScenarioFaultName = ${union(Object.keys(c.faults))};
/** What a request may name in the header: an outcome, a refusal that is a scenario, a fault (with =VALUE where it takes one). */
export type ScenarioName = ScenarioOutcomeName | ${union(refusalScenarios)} | ScenarioFaultName | \`\${${union(
    Object.entries(c.faults)
      .filter(([, f]) => f.value)
      .map(([n]) => n),
  )}}=\${number}\`;
`;
}

const cell = (text: string) => text.replace(/\|/g, '\\|');
const fields = (o: ScenarioOutcome) =>
  [
    ...Object.entries(o.set ?? {}).map(([k, v]) => `\`${k}\` ${v === '' ? "''" : v}`),
    ...(o.unset ?? []).map((k) => `no \`${k}\``),
  ].join(', ');

/** docs/SCENARIOS.md. */
export function scenariosDoc(doc: Doc, ops: Operation[]): string {
  const spec = specOf(doc);
  const c = scenarioCatalogue(doc, ops);
  const base = doc.servers?.[0]?.variables?.base_url?.default ?? 'http://localhost:4010';
  const lines: string[] = [
    '<!-- Generated by scripts/generators/scenarios.ts from the spec (npm run generate). Do not edit. -->',
    '# Sandbox scenarios: every documented outcome, and how to reach it',
    '',
    "A request asks the sandbox for one of its operation's documented outcomes, or for a fault of the",
    'connection, by naming it in the request itself: only that request gets it, so two CI jobs on one',
    "account never see each other's. This page is written from the spec's `x-sandbox-scenarios`",
    "(`spec/sandbox-scenarios.yaml`) and each operation's `outcomes`; the sandbox, the mock, the docs'",
    'try-it console and the tests read the same. A guide with examples is in',
    '[CLIENT-TEAMS.md, "Testing your error handling"](CLIENT-TEAMS.md#testing-your-error-handling).',
    '',
    '## How a request names its scenario',
    '',
    `- **The header \`${c.header}\`** (any client that can add a header; the typed client's \`headers\`):`,
    `  \`${c.header}: expired\`, \`${c.header}: answerLost\`, or one outcome and one fault joined by a comma,`,
    `  \`${c.header}: expired,latency=1500\`.`,
    `- **The base URL** (the form/XML integrations, which cannot add a header: ActiveMerchant, Omnipay, the`,
    `  PHP, Python and Ruby examples): put \`${c.pathPrefix}/SCENARIO\` before the path, that is, configure the`,
    `  base URL \`${base}${c.pathPrefix}/expired/\`; every request made with it gets the scenario.`,
    '- **The amount** (card outcomes only, in either mode, with a test card): the `transactionAmount` in',
    "  the table's last column, as the real service's own test amount 102.33 gave 'Card has expired'.",
    '',
    'A scenario applies to a request the gateway processes: one refused before (a wrong hash, a missing',
    "field) is refused as usual. A name the operation does not have, or a fault's value out of its",
    `range, is refused \`-2\` naming where the request put it (the header, or the base URL) and the names it takes. An operator turns scenarios off for`,
    `a deployment with \`${c.switch}=off\` (and they are off with \`NODE_ENV=production\`): a request that`,
    'asks for one is then refused `-2`, never served as if it had not asked. Every answer to a request',
    `that got its scenario carries the header \`${c.header}\` with what was applied.`,
    '',
    `Why a header and a base URL: ${spec['x-defined']}`,
    '',
    '## Faults of the connection',
    '',
    'Any operation, alone or after an outcome. The sandbox honours each; the mock (which stores nothing)',
    'honours the outcomes only.',
    '',
    '| fault | what the client sees | stored first |',
    '|---|---|---|',
    ...Object.entries(c.faults).map(
      ([name, f]) =>
        `| \`${name}${f.value ? `=${f.value.name.toUpperCase()}` : ''}\` | ${cell(f.summary)}${f.value ? ` (${f.value.name}: ${f.value.minimum} to ${f.value.maximum}, default ${f.value.default})` : ''} | ${f.stores ? 'yes' : 'no'} |`,
    ),
    '',
    '## Refusals every operation documents',
    '',
    '| responseCode | name | how to reach it |',
    '|---|---|---|',
    ...Object.entries(c.refusals).map(
      ([name, r]) => `| ${r.responseCode} | ${r.scenario ? `\`${name}\` (scenario)` : name} | ${cell(r.trigger)} |`,
    ),
    '',
    '## Outcomes of each operation',
    '',
    "The first outcome of a set is not always the one a request gets without a scenario: that is the sandbox's",
    'own behaviour (docs/CLIENT-TEAMS.md, "The sandbox"). Each outcome below is reached by its header value,',
    `by \`${c.pathPrefix}/NAME/\` in the base URL, and where an amount is given, by that amount.`,
    '',
    '| operation | outcome (header value) | responseCode | responseMessage | fields it gives | amount |',
    '|---|---|---|---|---|---|',
  ];
  for (const [id, { outcomes }] of Object.entries(c.operations))
    for (const o of outcomes)
      lines.push(
        `| ${id} | \`${o.name}\` | ${o.file ? '(a file)' : o.responseCode} | ${cell(o.responseMessage)} | ${cell(fields(o))} | ${o.amount ?? ''} |`,
      );
  const count = Object.values(c.operations).reduce((n, o) => n + o.outcomes.length, 0);
  const refusals = Object.values(c.operations).reduce((n, o) => n + o.refusals.length, 0);
  lines.push(
    '',
    `${Object.keys(c.operations).length} operations, ${count} outcomes and ${refusals} refusals (each operation's: -1 where it takes credentials, -2 where it takes a body, -3 where its body requires a field, -4 all): `,
    '`test/sandbox/scenario-coverage.test.ts` reaches every one on the sandbox through the trigger named',
    'here and counts them.',
    '',
  );
  return lines.join('\n');
}
