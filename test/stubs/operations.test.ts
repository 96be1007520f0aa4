// For every operation of the contract: its example requests pass validation and reach its own
// handler; a request missing each required field, or breaking each field, is refused with the
// contract's code and a message naming the field, and reaches no handler.
import { describe, expect, it } from 'vitest';
import { breaking, buildRequest, requestExamples } from '../../contract/index.ts';
import { createGateway, type GatewayResponse } from '../../server-stubs/index.ts';
import { doc, errorsOf, validatorFor } from '../support/contract.ts';
import { accounts, echoHandlers, type Call } from '../fixtures/example-handlers.ts';
import { operations, type ContractOperation } from '../../generated/operations.ts';

const calls: Call[] = [];
const gateway = createGateway({ handlers: echoHandlers(calls), accounts });
const strict = createGateway({ handlers: echoHandlers(calls), accounts, unknownFields: 'refuse' });

const json = (r: GatewayResponse) => JSON.parse(String(r.body));
const schemaOf = (name: string) => doc.components.schemas[name];

/** The form of the operation that accepts this example (the request schema itself when it has no forms). */
function formOf(op: ContractOperation, example: unknown): string {
  return (op.forms ?? [op.request!]).find((f) => validatorFor(`#/components/schemas/${f}`)(example))!;
}

async function send(op: ContractOperation, body: unknown, server = gateway) {
  calls.length = 0;
  const response = await server.handle(buildRequest(op, { body }));
  return { response, reached: calls.length };
}

for (const op of operations) {
  describe(`${op.operationId} (${op.verb} ${op.path}${op.method ? ` ${op.method}` : ''})`, () => {
    const examples = op.request
      ? requestExamples(op)
      : [{ name: 'no body', value: undefined as unknown as Record<string, unknown> }];

    for (const example of examples) {
      it(`example ${example.name} passes and reaches ${op.aliasOf ?? op.operationId} with its own request`, async () => {
        const { response } = await send(op, example.value);
        expect(response.status).toBe(op.status);
        expect(calls).toHaveLength(1);
        expect(calls[0]!.operationId).toBe(op.aliasOf ?? op.operationId);
        expect(calls[0]!.input.body).toEqual(example.value);
        expect(calls[0]!.context.operation.operationId).toBe(op.operationId);
        if (op.resultType === 'application/json') {
          const v = validatorFor(`#/components/schemas/${op.result}`);
          expect(v(json(response)), errorsOf(v)).toBe(true);
        } else {
          expect(response.headers['content-type']).toBe(op.resultType);
        }
      });
    }

    if (!op.request) return;
    const example = examples[0]!.value;
    const form = schemaOf(formOf(op, example));

    for (const field of (form.required ?? []) as string[]) {
      it(`without ${field}: -3 naming it, nothing reaches the handler`, async () => {
        const { [field]: _removed, ...body } = example;
        const { response, reached } = await send(op, body);
        const answer = json(response);
        expect(Number(answer.responseCode)).toBe(-3);
        expect(answer.responseMessage).toContain(`'${field}'`);
        expect(reached).toBe(0);
        expect(response.status).toBe(op.status);
      });
    }

    for (const field of Object.keys(example).filter((f) => f !== 'method')) {
      const bad = breaking(form.properties[field]);
      if (bad === undefined) continue;
      it(`with ${field} broken: -2 naming it, nothing reaches the handler`, async () => {
        const { response, reached } = await send(op, { ...example, [field]: bad });
        const answer = json(response);
        expect(Number(answer.responseCode)).toBe(-2);
        expect(answer.responseMessage).toMatch(new RegExp(`'${field}(\\.|\\[|')`));
        expect(reached).toBe(0);
      });
    }

    it('an unknown field is ignored: the handler gets the request without it (x-unknown-fields: ignore)', async () => {
      const { response, reached } = await send(op, { ...example, transactionAmmount: '1.00' });
      if (op.resultType === 'application/json') expect(Number(json(response).responseCode)).toBeGreaterThanOrEqual(0);
      else expect(response.headers['content-type']).toBe(op.resultType);
      expect(reached).toBe(1);
      expect(calls[0]!.input.body).toEqual(example);
    });

    it('with unknownFields: refuse, an unknown field is refused with -2 naming it', async () => {
      const { response, reached } = await send(op, { ...example, transactionAmmount: '1.00' }, strict);
      expect(json(response)).toMatchObject({ responseMessage: "Field 'transactionAmmount' is not allowed" });
      expect(Number(json(response).responseCode)).toBe(-2);
      expect(reached).toBe(0);
    });

    if (op.method) {
      it('an unknown method is refused naming method and the allowed values', async () => {
        const { response, reached } = await send(op, { ...example, method: 'processRefund' });
        const answer = json(response);
        expect(Number(answer.responseCode)).toBe(-2);
        expect(answer.responseMessage).toMatch(/^Field 'method' is invalid: must be one of /);
        expect(answer.responseMessage).toContain(op.method);
        expect(reached).toBe(0);
      });
    }
  });
}
