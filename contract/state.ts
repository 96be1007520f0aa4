// The suite builds the state an operation's success needs, for every operation, with no scenario
// written by hand: every approved answer (and the request it answered) leaves its identifiers in a
// pool, by field name (transactionID, cardID and cardKey, fingerprint, batchUUID, payId,
// agreementIdentification, requestReference, payoutId...). After the other checks, each operation
// whose success answer the run has not reached is sent again from its example, its identifier
// fields and path parameters taken from the pool, newest first, until one is answered with success.
import type { ContractOperation } from '../generated/operations.ts';
import type { Check } from './checks.ts';
import { judge } from './checks.ts';
import { formOf, send, signBody } from './http.ts';
import { doc, requestExamples } from './requests.ts';
import { IDENTIFIER, OWN } from './state-pool.ts';

/** Sets of values tried per operation, from the best records and then name by name. */
const TRIES = 12;

const identifiers = (value: Record<string, unknown>) =>
  Object.keys(value).filter((k) => IDENTIFIER.test(k) && !OWN.has(k) && typeof value[k] === 'string');

/** One check per operation: its success answer reached, on state the run made (run last, one at a time). */
export function successChecks(operations: readonly ContractOperation[]): Check[] {
  return operations.map((op) => ({
    operationId: op.operationId,
    tags: doc.paths[op.path][op.verb.toLowerCase()].tags ?? [],
    kind: 'state' as const,
    name: 'its success answer is reached, on state the suite built',
    run: async (ctx) => {
      if (ctx.mock) return { skip: 'the mock keeps no state' };
      if (ctx.coverage?.successReached(op)) return;
      const example = op.request ? requestExamples(op)[0]!.value : undefined;
      const fields = example ? identifiers(example) : [];
      const params = op.parameters.filter((p) => p.in === 'path').map((p) => p.name);
      const choices = ctx.pool!.choices([...fields, ...params], op.path, TRIES);
      let last = '';
      for (const chosen of choices.length ? choices : [new Map<string, string>()]) {
        const value = example && Object.fromEntries(Object.entries(example).map(([k, v]) => [k, chosen.get(k) ?? v]));
        const body = value && signBody(op, formOf(op, value), value, ctx.creds);
        const pathParams = Object.fromEntries(
          params.map((p) => [p, chosen.get(p) ?? String(op.parameters.find((x) => x.name === p)!.example)]),
        );
        const answer = await send(ctx.base, { op, body, params: pathParams }, ctx.creds);
        const problem = judge(op, body, answer, ctx, pathParams);
        if (problem) throw new Error(problem);
        if (ctx.coverage?.successReached(op)) return;
        last = `${answer.json?.responseCode} ${answer.json?.responseMessage ?? ''}`;
      }
      throw new Error(
        `no success answer reached: ${choices.length} tries with the run's state, the last answered ${last} (fields from the run: ${[...fields, ...params].join(', ') || 'none'})`,
      );
    },
  }));
}
