// Turning what a handler returned into the response, held to the contract: the result hashes are
// added from their recipes, the body is validated against the operation's own result or refusal
// schema, and no unmasked card number may leave in it.
import { computeHash } from '../../runtime/signing.ts';
import { hashRecipes, resultValidators } from './contract.ts';
import { fieldName } from './refusals.ts';
import type { Account, ContractOperation, GatewayResponse } from './types.ts';

/** 13 to 19 digits in a row that pass the Luhn check: a card number, masked or not. */
export function findCardNumber(text: string): boolean {
  for (const match of text.matchAll(/(?<!\d)\d{13,19}(?!\d)/g)) {
    const digits = match[0];
    let sum = 0;
    for (let i = 0; i < digits.length; i++) {
      let d = digits.charCodeAt(digits.length - 1 - i) - 48;
      if (i % 2 === 1 && (d *= 2) > 9) d -= 9;
      sum += d;
    }
    if (sum % 10 === 0) return true;
  }
  return false;
}

/** A violation that is `sensitive` is never sent on, whatever the response validation mode. */
export type Answered = { response: GatewayResponse } | { violation: string; sensitive?: boolean };

const isRefusal = (value: Record<string, unknown>) => Number(value.responseCode) < 0;

export function answer(op: ContractOperation, account: Account, request: Record<string, unknown>, returned: unknown): Answered {
  if (op.resultType !== 'application/json' && (returned instanceof Uint8Array || typeof returned === 'string')) {
    const ok = op.resultType === 'application/zip' ? returned instanceof Uint8Array : typeof returned === 'string';
    if (!ok) return { violation: `${op.operationId} must answer ${op.resultType === 'application/zip' ? 'bytes' : 'text'} for ${op.resultType}` };
    return { response: { status: op.status, headers: { 'content-type': op.resultType }, body: returned } };
  }
  if (!returned || typeof returned !== 'object' || Array.isArray(returned)) return { violation: `${op.operationId} answered ${returned === null ? 'null' : typeof returned}, not an object` };

  const body = { ...(returned as Record<string, unknown>) };
  const refusal = isRefusal(body);
  if (!refusal) {
    for (const use of op.resultHashes) {
      const expected = computeHash(hashRecipes[use.recipe as keyof typeof hashRecipes], account.passphrase, { ...request, ...body, [use.name]: undefined });
      if (body[use.name] === undefined) body[use.name] = expected;
      else if (body[use.name] !== expected) return { violation: `Field '${use.name}' is not what recipe ${use.recipe} gives` };
    }
  }
  const schema = refusal ? op.refusal : op.result;
  const validate = resultValidators[schema]!;
  if (!validate(body)) {
    const e = validate.errors![0]!;
    const child = (e.params.missingProperty ?? e.params.additionalProperty) as string | undefined;
    const name = fieldName(e.instancePath, child);
    const what = e.keyword === 'required' ? 'is required' : e.keyword === 'additionalProperties' ? 'is not in the contract' : `is invalid: ${e.message}`;
    return { violation: `${name ? `Field '${name}' ${what}` : `The body ${what}`} (${schema})` };
  }
  const text = JSON.stringify(body);
  if (findCardNumber(text)) return { violation: 'A card number appears unmasked in the answer', sensitive: true };
  return { response: { status: op.status, headers: { 'content-type': 'application/json' }, body: text } };
}
