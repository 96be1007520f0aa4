// The seed's rules that a schema cannot state, checked on every answer the suite receives, read from
// the spec: echoes of what was sent (x-echo) and sums (x-sum), as runtime/answer-rules.ts reads them
// (the mock keeps them from the same reading), and the hashes a result carries, recomputed from their
// recipes (resultHashes). Nothing here is listed per operation.
import { hashRecipes } from '../generated/hash-recipes.ts';
import type { ContractOperation } from '../generated/operations.ts';
import { answerRulesOf, ruleBreaches } from '../runtime/answer-rules.ts';
import { computeHash } from '../runtime/signing.ts';
import type { Credentials } from './http.ts';
import { doc } from './requests.ts';

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
  const problems = ruleBreaches(answerRulesOf(doc.components.schemas[op.result]), request, answer);
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
