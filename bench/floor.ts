// The floor: only the work the contract asks of any server for one request, with the functions the
// core calls and none of its routing, refusals or bookkeeping: validate the body against the
// method's branch, recompute its hashes by recipe, add the result hashes, validate and serialise the
// answer, look for a card number. bench/in-process.ts times it in a loop; servers/floor.ts serves it
// over HTTP, as the best any implementation of these checks can do on this machine.
import { buildRequest, requestExamples, requestValidators, resultValidators } from '../contract/index.ts';
import { operations, type ContractOperation } from '../generated/operations.ts';
import { computeHash } from '../runtime/signing.ts';
import { echoHandlers, merchant } from '../test/fixtures/example-handlers.ts';
import { hashRecipes } from '../generated/hash-recipes.ts';
import { cardNumberPath } from '../runtime/card-numbers.ts';
import { protocols } from '../generated/protocols.ts';
import { nodeDigests } from '../server-stubs/index.ts';

const handlers = echoHandlers() as Record<string, (input: unknown, context: unknown) => Record<string, unknown>>;
const recipe = (name: string) => hashRecipes[name as keyof typeof hashRecipes];

/** One request of the benchmark mix: every JSON operation's first example request, signed. */
export interface MixEntry {
  op: ContractOperation;
  verb: string;
  url: string;
  headers: Record<string, string>;
  text: string | undefined;
  /** What the echo handler answers, hashes left for the server to add. */
  result: Record<string, unknown>;
}

export const mix: MixEntry[] = operations
  .filter((op) => op.resultType === protocols.canonical.answerType && !op.aliasOf)
  .map((op) => {
    const r = buildRequest(op, { body: op.request ? requestExamples(op)[0]!.value : undefined });
    return {
      op,
      verb: r.verb,
      url: r.url,
      headers: r.headers as Record<string, string>,
      text: r.body as string | undefined,
      result: handlers[op.operationId]!({}, {}),
    };
  });

/** The answer's text, or an error when any check fails (the mix is valid: none should). */
export function floorAnswer(
  op: ContractOperation,
  result: Record<string, unknown>,
  body: Record<string, unknown>,
): string {
  const ok = op.request ? (op.forms ?? [op.request]).some((form) => requestValidators[form]!(body)) : true;
  let hashed = true;
  for (const use of op.hashes)
    hashed = computeHash(recipe(use.recipe), merchant.passphrase, body, nodeDigests).length > 0 && hashed;
  let answer = result;
  if (op.resultHashes.length) answer = { ...result };
  for (const use of op.resultHashes)
    answer[use.name] = computeHash(recipe(use.recipe), merchant.passphrase, [answer, body], nodeDigests);
  const valid = resultValidators[op.result]!(answer);
  const text = JSON.stringify(answer);
  // Each value read on its own, the answer's own hashes not read (server-stubs/core/answer.ts does the same).
  const hashes = op.resultHashes.map((h) => h.name);
  if (!ok || !hashed || !valid || cardNumberPath(answer, (name) => hashes.includes(name)) !== undefined)
    throw new Error(`${op.operationId}: the floor met a failing request`);
  return text;
}
