// A client reads a refusal's field and rule back out of its message (runtime/refusal-text.ts), since
// the answer carries only responseCode and responseMessage: the docs' try-it console shows them so.
// Every form the stubs and the sandbox word refusals with reads back to the field and rule it was
// made from, and a message that names no field reads as its own rule.
import type { ErrorObject } from 'ajv';
import { describe, expect, it } from 'vitest';
import { buildRequest, operation, requestExamples } from '../../contract/index.ts';
import { forms, readRefusal } from '../../runtime/refusal-text.ts';
import { refusalFor, refusals } from '../../server-stubs/core/refusals.ts';
import { createGateway } from '../../server-stubs/index.ts';
import { sandboxRefusals } from '../../sandbox/refusals.ts';
import { accounts, echoHandlers } from '../fixtures/example-handlers.ts';

describe('readRefusal', () => {
  it('reads back the field and the rule of every message form', () => {
    expect(readRefusal(forms.required('transactionAmount'))).toEqual({
      kind: 'Field',
      field: 'transactionAmount',
      rule: 'is required',
    });
    expect(readRefusal(forms.required('payer.name', " when 'x' is sent"))).toEqual({
      kind: 'Field',
      field: 'payer.name',
      rule: "is required when 'x' is sent",
    });
    expect(readRefusal(forms.invalid('SVC-API-VERSION', 'must be 2.0', 'Header'))).toEqual({
      kind: 'Header',
      field: 'SVC-API-VERSION',
      rule: 'must be 2.0',
    });
    expect(readRefusal(forms.notAllowed('limit', 'Parameter'))).toEqual({
      kind: 'Parameter',
      field: 'limit',
      rule: 'is not allowed',
    });
    expect(readRefusal(forms.body('must be an object'))).toEqual({ rule: 'The body must be an object' });
    expect(readRefusal(refusals.credentials('wrong hash').message)).toEqual({
      rule: 'Invalid authentication credentials',
    });
  });

  it("reads the validator's refusals as refusalFor made them: the same field, the rule in words", () => {
    const missing = refusalFor([
      {
        keyword: 'required',
        params: { missingProperty: 'bsb' },
        instancePath: '/payer/account',
        schemaPath: '',
      } as ErrorObject,
    ]);
    expect(readRefusal(missing.message)).toMatchObject({ field: missing.field, rule: 'is required' });
    const invalid = refusalFor([
      {
        keyword: 'enum',
        params: { allowedValues: ['AUD', 'NZD'] },
        instancePath: '/currency',
        schemaPath: '',
      } as ErrorObject,
    ]);
    expect(readRefusal(invalid.message)).toEqual({ kind: 'Field', field: 'currency', rule: 'must be one of AUD, NZD' });
    expect(readRefusal(sandboxRefusals.conflictsWithStored('transactionReferenceID').message)).toEqual({
      kind: 'Field',
      field: 'transactionReferenceID',
      rule: 'conflicts with a stored record',
    });
  });

  it("reads a real refusal of the gateway's answer", async () => {
    const gateway = createGateway({ handlers: echoHandlers(), accounts, logger: false });
    const op = operation('processCard');
    const body = { ...requestExamples(op)[0]!.value, transactionAmount: 'ten dollars' };
    const answer = JSON.parse(String((await gateway.handle(buildRequest(op, { body }))).body));
    expect(answer.responseCode).toBe('-2');
    expect(readRefusal(answer.responseMessage)).toMatchObject({ kind: 'Field', field: 'transactionAmount' });
    expect(readRefusal(answer.responseMessage).rule).toMatch(/^must be /);
  });
});
