// What the mock makes of Prism's example for one request: the rules of the result that need no state,
// read from the spec's marks as the contract suite reads them (runtime/answer-rules.ts): each echoed
// field is what was sent (the card masked as the sandbox masks it), each sum adds up, an access token
// is one the mock takes back (mock/accounts.ts); the result hashes are left to the stubs' core, which
// computes them from their recipes with the account's passphrase, as it does for the sandbox.
import { bodyCredentials, type ContractOperation } from '../generated/operations.ts';
import { answerRulesOf, withRules } from '../runtime/answer-rules.ts';
import type { Account } from '../server-stubs/index.ts';
import { accessTokenOf, type SandboxCredentials } from './accounts.ts';

/** What the mock reads of the published document. */
export interface MockDocument {
  info: { 'x-sandbox': SandboxCredentials };
  components: {
    schemas: Record<string, { properties?: Record<string, unknown>; required?: string[] }>;
    examples?: unknown;
  };
  paths?: unknown;
}

const TOKEN = bodyCredentials.accessToken.token;

/** The example as this request's answer: the rules kept, the result hashes left for the core to compute. */
export function exampleAnswer(
  doc: MockDocument,
  op: ContractOperation,
  request: Record<string, unknown>,
  example: Record<string, unknown>,
  account: Account,
): Record<string, unknown> {
  if (Number(example.responseCode) < 0) return example;
  const answer = withRules(answerRulesOf(doc.components.schemas[op.result]), request, example);
  if (TOKEN in answer && account.kind === 'merchant') answer[TOKEN] = accessTokenOf(account);
  for (const use of op.resultHashes) delete answer[use.name];
  return answer;
}
