// The rules of a result that follow from the request alone (spec/extensions/rules.schema.yaml): an
// echo of what was sent (x-echo, masked where the mark says so), a sum of the answer's own amounts
// (x-sum). Read once from a result schema's properties; the contract suite checks an answer against
// them (contract/rules.ts) and the mock makes its answer keep them (mock/answers.ts): one reading of
// the marks for both, so the judge and the mock cannot drift apart.
import { maskCardNumber } from './card-numbers.ts';

/** A property that is the request's field as sent. */
export interface EchoRule {
  /** The answer's property. */
  name: string;
  /** The request's field it echoes. */
  field: string;
  /** Only the first six and last four digits of the card sent come back (maskCardNumber). */
  masked: boolean;
  /** A custom echo (CustomEcho): a field not sent comes back as [] (seed §2). */
  custom: boolean;
  /** The result schema requires the property: an answer carries it whether or not the field was sent. */
  required: boolean;
}

/** An amount that is the sum of other amounts of the same answer, to the cent. */
export interface SumRule {
  name: string;
  parts: string[];
}

export interface AnswerRules {
  echoes: EchoRule[];
  sums: SumRule[];
}

type Mark = string | { field: string; masked?: boolean };
interface PropertyNode {
  'x-echo'?: Mark;
  'x-sum'?: string[];
  $ref?: string;
}

type ResultSchema = { properties?: Record<string, unknown>; required?: string[] };
const read = new WeakMap<ResultSchema, AnswerRules>();

/** The rules a result schema's properties carry (a schema as the bundled document holds it), read once. */
export function answerRulesOf(schema: ResultSchema | undefined): AnswerRules {
  if (!schema) return { echoes: [], sums: [] };
  let rules = read.get(schema);
  if (!rules) {
    rules = rulesIn(schema);
    read.set(schema, rules);
  }
  return rules;
}

function rulesIn(schema: { properties?: Record<string, unknown>; required?: string[] } | undefined): AnswerRules {
  const rules: AnswerRules = { echoes: [], sums: [] };
  const required = new Set(schema?.required ?? []);
  for (const [name, node] of Object.entries((schema?.properties ?? {}) as Record<string, PropertyNode>)) {
    const echo = node['x-echo'];
    if (echo !== undefined)
      rules.echoes.push({
        name,
        field: typeof echo === 'string' ? echo : echo.field,
        masked: typeof echo === 'object' && echo.masked === true,
        custom: node.$ref?.endsWith('/CustomEcho') === true,
        required: required.has(name),
      });
    if (node['x-sum']) rules.sums.push({ name, parts: node['x-sum'] });
  }
  return rules;
}

const sent = (value: unknown) => value !== undefined && value !== null;

/**
 * What the echoed property must be for this request: the value sent (masked where the rule says), []
 * for a custom field not sent, or nothing to require (`undefined`) when a field that is not a custom
 * one was not sent.
 */
export function echoOf(rule: EchoRule, request: Record<string, unknown>): { value: unknown } | undefined {
  const value = request[rule.field];
  if (!sent(value)) return rule.custom ? { value: [] } : undefined;
  return { value: rule.masked ? maskCardNumber(String(value)) : value };
}

/** An amount as whole cents (amounts are two-decimal strings). */
export const cents = (amount: unknown): number => Math.round(Number(amount) * 100);
/** Whole cents as the contract writes an amount: two decimals, no separator. */
export const amountOf = (total: number): string => (total / 100).toFixed(2);

/** The sum a rule's parts give in this answer, in cents; undefined when a part is missing. */
export function sumOf(rule: SumRule, answer: Record<string, unknown>): number | undefined {
  if (!rule.parts.every((part) => part in answer)) return undefined;
  return rule.parts.reduce((total, part) => total + cents(answer[part]), 0);
}

/** Each rule this answer breaks, in words; a refusal (responseCode below 0) has none. */
export function ruleBreaches(
  rules: AnswerRules,
  request: Record<string, unknown> | undefined,
  answer: Record<string, unknown>,
): string[] {
  if (Number(answer.responseCode) < 0) return [];
  const problems: string[] = [];
  for (const rule of request === undefined ? [] : rules.echoes) {
    if (!(rule.name in answer)) continue;
    const expected = echoOf(rule, request!);
    if (expected === undefined) continue;
    if (JSON.stringify(answer[rule.name]) === JSON.stringify(expected.value)) continue;
    problems.push(
      sent(request![rule.field])
        ? `${rule.name} is ${JSON.stringify(answer[rule.name])}, not ${JSON.stringify(expected.value)} as sent`
        : `${rule.name} is ${JSON.stringify(answer[rule.name])}; a custom field not sent comes back as []`,
    );
  }
  for (const rule of rules.sums) {
    const total = sumOf(rule, answer);
    if (total === undefined || !(rule.name in answer) || cents(answer[rule.name]) === total) continue;
    problems.push(`${rule.name} ${String(answer[rule.name])} is not ${rule.parts.join(' + ')} (${amountOf(total)})`);
  }
  return problems;
}

/**
 * The answer made to keep the rules for this request (a copy; a refusal is returned as it is): each
 * echoed property is what was sent, a property echoing a field not sent is left out unless the schema
 * requires it, and each sum is recomputed from its parts after the echoes.
 */
export function withRules(
  rules: AnswerRules,
  request: Record<string, unknown>,
  answer: Record<string, unknown>,
): Record<string, unknown> {
  if (Number(answer.responseCode) < 0) return answer;
  const out = { ...answer };
  for (const rule of rules.echoes) {
    const expected = echoOf(rule, request);
    if (expected !== undefined) out[rule.name] = expected.value;
    else if (!rule.required) delete out[rule.name];
  }
  for (const rule of rules.sums) {
    const total = sumOf(rule, out);
    if (total !== undefined) out[rule.name] = amountOf(total);
  }
  return out;
}
