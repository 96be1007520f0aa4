// The seed's rules that a schema cannot state, checked on every answer the suite receives, read from
// the spec: echoes of what was sent (x-echo), sums (x-sum) and the hashes a result carries, recomputed
// from their recipes (resultHashes). Nothing here is listed per operation.
import { hashRecipes } from '../generated/hash-recipes.ts';
import type { ContractOperation } from '../generated/operations.ts';
import { computeHash } from '../runtime/signing.ts';
import type { Credentials } from './http.ts';
import { doc } from './requests.ts';

type Echo = string | { field: string; masked?: boolean };

const properties = (schema: string): Record<string, { 'x-echo'?: Echo; 'x-sum'?: string[]; $ref?: string }> =>
  doc.components.schemas[schema]?.properties ?? {};

const isCustomEcho = (property: { $ref?: string }) => property.$ref?.endsWith('/CustomEcho') === true;
const cents = (amount: unknown) => Math.round(Number(amount) * 100);
const masked = (pan: string) => `${pan.slice(0, 6)}XXXXXX${pan.slice(-4)}`;

/** The passphrase the answer's hashes are keyed with: the partner's on /partner, else the merchant's. */
const passphraseFor = (op: ContractOperation, creds: Credentials) =>
  op.credentials.includes('partner') ? creds.partnerPassphrase : creds.passphrase;

/**
 * Each rule of the operation's result that this answer breaks, given the request it answers. An
 * answer recorded from another server (a public client's fixture) has neither: without the request
 * its echoes are not checked, without the credentials its result hashes are not.
 */
export function ruleViolations(
  op: ContractOperation,
  request: Record<string, unknown> | undefined,
  answer: Record<string, unknown>,
  creds: Credentials | undefined,
): string[] {
  if (Number(answer.responseCode) < 0) return [];
  const sent = request ?? {};
  const problems: string[] = [];
  for (const [name, property] of Object.entries(properties(op.result))) {
    const echo = property['x-echo'];
    if (echo !== undefined && request !== undefined && name in answer) {
      const field = typeof echo === 'string' ? echo : echo.field;
      const value = sent[field];
      if (value === undefined || value === null) {
        if (isCustomEcho(property) && !(Array.isArray(answer[name]) && (answer[name] as unknown[]).length === 0)) {
          problems.push(`${name} is ${JSON.stringify(answer[name])}; a custom field not sent comes back as []`);
        }
      } else {
        const expected = typeof echo === 'object' && echo.masked ? masked(String(value)) : value;
        if (answer[name] !== expected)
          problems.push(`${name} is ${JSON.stringify(answer[name])}, not ${JSON.stringify(expected)} as sent`);
      }
    }
    const sum = property['x-sum'];
    if (sum && name in answer && sum.every((part) => part in answer)) {
      const total = sum.reduce((acc, part) => acc + cents(answer[part]), 0);
      if (cents(answer[name]) !== total)
        problems.push(`${name} ${String(answer[name])} is not ${sum.join(' + ')} (${(total / 100).toFixed(2)})`);
    }
  }
  for (const use of creds ? op.resultHashes : []) {
    if (!(use.name in answer)) continue;
    const expected = computeHash(hashRecipes[use.recipe], passphraseFor(op, creds!), [
      { [use.name]: undefined },
      answer,
      sent,
    ]);
    if (answer[use.name] !== expected)
      problems.push(`${use.name} is not what recipe ${use.recipe} gives (${expected})`);
  }
  return problems;
}
