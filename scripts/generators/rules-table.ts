// docs/RULES.md, written whole from the spec's rule marks (spec/extensions/rules.schema.yaml): each
// rule about values the spec states, where it stands, the operations whose answers carry it, and
// which part of the contract-test suite checks it. Never edited by hand: `npm run generate` writes it
// and test/contract/rules.test.ts fails when it is stale.
import { requestRulesSection } from './request-rules.ts';
import { businessDayOnOrAfter, dayAfter, transactionIdTime, wallTime } from '../../runtime/gateway-time.ts';
import type { Doc, Operation } from '../lib/contract.ts';

/** The rule marks, in the order the table lists them, with what each says and who checks it. */
export const RULE_MARKS = {
  'x-echo': {
    checkedBy: 'contract/rules.ts (read by runtime/answer-rules.ts, which the mock keeps it by)',
    says: (m: any) =>
      typeof m === 'string'
        ? `the request's \`${m}\` as sent`
        : `the request's \`${m.field}\`${m.masked ? ', masked (first six, XXXXXX, last four)' : ''}`,
  },
  'x-sum': {
    checkedBy: 'contract/rules.ts (read by runtime/answer-rules.ts, which the mock keeps it by)',
    says: (m: string[]) => `the sum of ${m.map((f) => `\`${f}\``).join(' + ')}, to the cent`,
  },
  'x-time': {
    checkedBy:
      'contract/value-rules.ts (a time that exists in the zone; recorded: against the answer), contract/scenarios.ts (a payout made now)',
    says: (m: any) => `written in ${m.zone}${m.recorded ? ', never later than the answer (its Date header)' : ''}`,
  },
  'x-settlement-date': {
    checkedBy: 'contract/value-rules.ts',
    says: (m: any) =>
      `a business day (ISO weekdays ${m.businessDays.join(',')}) in ${m.zone}${m.firstOnOrAfter ? "; the first on or after the answer's day" : ''}${m.cutOff ? `, or the first after it when the answer comes after the cut-off (by ${m.cutOff.sameDayUntil} its own day, from ${m.cutOff.nextDayFrom} the next, either in between; the sandbox cuts off at ${m.cutOff.sandbox}: see the evidence below)` : ''}`,
  },
  'x-settlement-file': {
    checkedBy: 'contract/value-rules.ts',
    says: (m: any) =>
      `rows whose \`${m.dateColumn}\` is within \`${m.from}\`..\`${m.to}\`, not after the day asked (${m.zone}), on a business day, \`${m.statusColumn}\` one of ${m.statuses.join(', ')}`,
  },
  'x-status-progression': {
    checkedBy: 'contract/value-rules.ts (through x-attempts, x-rollup)',
    says: (m: any) =>
      `from ${m.initial}: ${Object.entries(m.transitions)
        .map(([f, t]) => `${f} → ${(t as string[]).join('/')}`)
        .join(
          '; ',
        )}; final ${m.final.join(', ')}${m.retriedBy ? `; another attempt only after ${m.retriedBy.join(', ')}` : ''}`,
  },
  'x-attempts': {
    checkedBy: 'contract/value-rules.ts',
    says: (m: any) =>
      `attempts in order on rails ${m.rails.join(' then ')}, each made after the one before ended (\`${m.createdAt}\` ≥ its \`${m.lastUpdated}\`)`,
  },
  'x-rollup': {
    checkedBy: 'contract/value-rules.ts',
    says: (m: any) =>
      `\`${m.whenAllFinal}\` when every \`${m.items}[].${m.itemStatus}\` is final, else \`${m.otherwise}\``,
  },
} as const;

export interface RuleUse {
  mark: keyof typeof RULE_MARKS;
  value: unknown;
  /** Schema.property.path where the mark stands. */
  where: string;
}

/** Every rule mark in the bundled document's schemas, with where it stands. */
export function ruleUses(doc: Doc): RuleUse[] {
  const uses: RuleUse[] = [];
  const visit = (node: any, where: string) => {
    if (!node || typeof node !== 'object') return;
    for (const mark of Object.keys(RULE_MARKS) as (keyof typeof RULE_MARKS)[])
      if (mark in node) uses.push({ mark, value: node[mark], where });
    for (const [name, property] of Object.entries<any>(node.properties ?? {})) visit(property, `${where}.${name}`);
    if (node.items) visit(node.items, `${where}[]`);
  };
  for (const [name, schema] of Object.entries<any>(doc.components.schemas)) visit(schema, name);
  return uses;
}

/** The schema names each operation's result reaches through $refs. */
function operationsBySchema(doc: Doc, ops: Operation[]): Map<string, Set<string>> {
  const by = new Map<string, Set<string>>();
  for (const op of ops) {
    const seen = new Set<string>();
    const walk = (node: any) => {
      if (!node || typeof node !== 'object') return;
      if (typeof node.$ref === 'string') {
        const name = node.$ref.split('/').at(-1)!;
        if (seen.has(name)) return;
        seen.add(name);
        walk(doc.components.schemas[name]);
        return;
      }
      for (const v of Object.values(node)) walk(v);
    };
    walk({ $ref: `#/components/schemas/${op.result}` });
    for (const name of seen) {
      if (!by.has(name)) by.set(name, new Set());
      by.get(name)!.add(op.operationId);
    }
  }
  return by;
}

export function rulesDoc(doc: Doc, ops: Operation[]): string {
  const by = operationsBySchema(doc, ops);
  const cell = (s: string) => s.replace(/\|/g, '\\|');
  const rows = ruleUses(doc).map(({ mark, value, where }) => {
    const schema = where.split(/[.[]/)[0]!;
    const operations = [...(by.get(schema) ?? [])].sort();
    const shown =
      operations.length > 4
        ? `${operations.slice(0, 4).join(', ')} and ${operations.length - 4} more`
        : operations.join(', ');
    return `| \`${mark}\` | \`${where}\` | ${cell((RULE_MARKS[mark].says as (m: unknown) => string)(value))} | ${shown || '(webhooks)'} | ${RULE_MARKS[mark].checkedBy} |`;
  });
  return [
    ...rulesHead(rows),
    ...ruleUses(doc)
      .filter((u) => u.mark === 'x-settlement-date' && (u.value as any).cutOff)
      .flatMap((u) => cutOffEvidence(u.where, u.value as SettlementMark)),
    ...requestRulesSection(doc, ops),
    '',
  ].join('\n');
}

interface SettlementMark {
  zone: string;
  businessDays: number[];
  cutOff: {
    sameDayUntil: string;
    nextDayFrom: string;
    sandbox: string;
    evidence: { source: string; also?: string[]; operation: string; transactionID: string; answered: string }[];
    excluded?: { source: string; transactionID: string; answered: string; why: string }[];
  };
}

const WEEKDAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const weekday = (day: string) => WEEKDAYS[new Date(`${day}T00:00:00Z`).getUTCDay()];

/** What a recorded answer shows: its time (read from its transactionID) and the day it answered, against its own day. */
function evidenceRow(mark: SettlementMark, e: { transactionID: string; answered: string }) {
  const made = transactionIdTime(e.transactionID);
  if (!made)
    throw new Error(`x-settlement-date evidence ${e.transactionID} is not a version-1 UUID: its time cannot be read`);
  const local = wallTime(made, mark.zone);
  const own = businessDayOnOrAfter(local.slice(0, 10), mark.businessDays);
  const next = businessDayOnOrAfter(dayAfter(local.slice(0, 10)), mark.businessDays);
  const shows = e.answered === own ? 'own day' : e.answered === next ? 'next business day' : 'neither';
  return { made, utc: wallTime(made, 'UTC'), local, time: local.slice(11), shows } as const;
}

/** The cut-off's evidence table: each recorded answer, its time and the day it answered, and what was left out. */
function cutOffEvidence(where: string, mark: SettlementMark): string[] {
  const cell = (s: string) => s.replace(/\|/g, '\\|');
  const cut = mark.cutOff;
  const rows = cut.evidence.map((e) => {
    const r = evidenceRow(mark, e);
    const sources = [e.source, ...(e.also ?? [])].map((x) => `\`${x}\``).join(', also ');
    return `| ${e.operation} | \`${e.transactionID}\` | ${r.utc} | ${weekday(r.local.slice(0, 10))} ${r.local} | ${e.answered} | ${r.shows} | ${cell(sources)} |`;
  });
  return [
    '',
    `## Settlement dates: the cut-off and its evidence (\`${where}\`)`,
    '',
    `The seed shows no settlement day. The real service's recorded answers that carry a settlement date`,
    `and a time are below: each transactionID is a version-1 UUID, whose time is read from it, shown in`,
    `UTC and in ${mark.zone}. A transaction made at ${cut.sameDayUntil} or earlier (${mark.zone} time) answered its own`,
    `day; one made at ${cut.nextDayFrom} answered the next business day. Between the two the evidence allows`,
    'either day, and the contract-test suite accepts either; outside it, only the day the evidence shows.',
    `The sandbox cuts off at ${cut.sandbox}. A weekend's transactions settle on Monday; public holidays are not modelled.`,
    '',
    `| operation | transactionID | made (UTC) | made (${mark.zone}) | answered | the day it shows | source |`,
    '|---|---|---|---|---|---|---|',
    ...rows,
    '',
    ...(cut.excluded?.length
      ? [
          'Read and not used:',
          '',
          '| transactionID | answered | why | source |',
          '|---|---|---|---|',
          ...cut.excluded.map(
            (x) => `| \`${x.transactionID}\` | ${x.answered} | ${cell(x.why)} | \`${cell(x.source)}\` |`,
          ),
          '',
        ]
      : []),
  ];
}

function rulesHead(rows: string[]): string[] {
  return [
    '<!-- Generated by scripts/generators/rules-table.ts from the spec (npm run generate). Do not edit. -->',
    '# The rules about values',
    '',
    'A JSON Schema says what shape a value has; some of what the seed and the spec say about values it',
    'cannot say: that a field is an echo of the request, that an amount is a sum, the zone a time is',
    'written in, which days a settlement date may be, which rows a settlement file lists, how a',
    "payout's attempts follow one another. Each such rule is a mark in the spec (an `x-` extension,",
    'declared in `spec/extensions/rules.schema.yaml`). Every mark below is kept by the sandbox and',
    'checked by the contract-test suite on every answer it receives (the file named), and the lint rule',
    '`contract/rule-in-prose` fails a schema whose description states such a rule with no mark.',
    '',
    'Times: payout times are Australian Eastern time as the seed says ("AEDT"), written as',
    "Australia/Sydney's wall clock, so +11:00 while daylight saving runs and +10:00 from April to",
    "October; a card transaction's settlement date is its Sydney business day, or the next one when it",
    'is made after the evening cut-off (below). The suite reads "now" from each answer\'s HTTP `Date`',
    "header, allowing a minute of clock skew; the sandbox writes that header from the caller's clock.",
    '',
    `${rows.length} rules:`,
    '',
    '| mark | where | the rule | operations | checked by |',
    '|---|---|---|---|---|',
    ...rows,
  ];
}
