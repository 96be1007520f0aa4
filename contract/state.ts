// The suite builds the state an operation's success needs, for every operation, with no scenario
// written by hand: every approved answer (and the request it answered) leaves its identifiers in a
// pool, by field name (transactionID, cardID and cardKey, fingerprint, batchUUID, payId,
// agreementIdentification, requestReference, payoutId...). After the other checks, each operation
// whose success answer the run has not reached is sent again from its example, its identifier
// fields and path parameters taken from the pool, newest first, until one is answered with success.
import type { ContractOperation } from '../generated/operations.ts';
import type { Check } from './checks.ts';
import { judge } from './checks.ts';
import { formOf, send, signBody, type Answer } from './http.ts';
import { doc, requestExamples } from './requests.ts';
import { IDENTIFIER, OWN } from './state-pool.ts';
import { isSuccess, successWords } from './coverage.ts';

/** Sets of values tried per operation, from the best records and then name by name. */
const TRIES = 12;

const identifiers = (value: Record<string, unknown>) =>
  Object.keys(value).filter((k) => IDENTIFIER.test(k) && !OWN.has(k) && typeof value[k] === 'string');

/**
 * The request forms whose success each check reaches: every form of an operation that takes several
 * (card data, a payframe token, an external 3DS result, …: a server that refuses one of them
 * outright is not a server that takes the operation), each with its first example; one check
 * otherwise.
 */
function formsOf(op: ContractOperation): { form?: string; example: Record<string, unknown> | undefined }[] {
  if (!op.request) return [{ example: undefined }];
  const examples = requestExamples(op);
  if ((op.requestForms?.length ?? 0) < 2) return [{ example: examples[0]!.value }];
  return op.requestForms!.map((f) => ({
    form: f.schema,
    example: examples.find((e) => formOf(op, e.value) === f.schema)?.value,
  }));
}

/** What came instead of the success answer, in words: its code, its message, and what such a code is. */
function answered(op: ContractOperation, answer: Answer): string {
  const json = answer.json as { responseCode?: unknown; responseMessage?: unknown } | undefined;
  if (json?.responseCode === undefined) return `HTTP ${answer.status} without a responseCode`;
  const code = Number(json.responseCode);
  // 0 is every operation's success (isSuccess): what is neither that nor a refusal is a decline.
  const what = code < 0 ? ', a refusal' : !isSuccess(op, code) ? ', a decline' : '';
  return `responseCode ${String(json.responseCode)}${json.responseMessage !== undefined ? ` "${String(json.responseMessage)}"` : ''}${what}`;
}

/** The words a form is named by in a check's name: its schema's title, else its name. */
const formTitle = (form: string) => (doc.components.schemas[form]?.title as string | undefined) ?? form;

/** One check per operation, or per request form: its success answer reached, on state the run made (run last, one at a time). */
export function successChecks(operations: readonly ContractOperation[]): Check[] {
  return operations.flatMap((op) => formsOf(op).map(({ form, example }) => successCheck(op, form, example)));
}

function successCheck(
  op: ContractOperation,
  form: string | undefined,
  example: Record<string, unknown> | undefined,
): Check {
  return {
    operationId: op.operationId,
    tags: doc.paths[op.path][op.verb.toLowerCase()].tags ?? [],
    kind: 'state' as const,
    name: form
      ? `its success answer is reached with the form ${formTitle(form)}, on state the suite built`
      : 'its success answer is reached, on state the suite built',
    run: async (ctx) => {
      if (ctx.mock) return { skip: 'the mock keeps no state' };
      if (ctx.coverage?.successReached(op, form)) return;
      if (form && !example) return { skip: `the spec gives no request example of the form ${formTitle(form)}` };
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
        if (ctx.coverage?.successReached(op, form)) return;
        last = answered(op, answer);
      }
      throw new Error(
        `no success answer (${successWords(op)}) reached${form ? ` with the form ${formTitle(form)}` : ''}: the last of ${choices.length} tries with the run's state answered ${last} (fields from the run: ${[...fields, ...params].join(', ') || 'none'})`,
      );
    },
  };
}
