// Refusals as the contract documents them: a negative responseCode (-1 credentials, -2 invalid,
// -3 missing, -4 internal) and a message that names the field and the rule, never a value.
import type { ErrorObject } from 'ajv';
import type { ContractOperation, GatewayResponse } from './types.ts';

export interface Refusal {
  code: -1 | -2 | -3 | -4;
  message: string;
  /** HTTP status; the operation's success status unless the request could not be read. */
  status?: number;
  /** For the request log only, never the answer: which check failed (a -1 says no more to the caller). */
  reason?: string;
}

export const refuse = (code: Refusal['code'], message: string, status?: number): Refusal =>
  status === undefined ? { code, message } : { code, message, status };

/** The refusal body, with responseCode typed as the operation's refusal schema sends it. */
export function refusalResponse(op: ContractOperation | undefined, refusal: Refusal): GatewayResponse {
  const responseCode = op?.refusalCode === 'integer' ? refusal.code : String(refusal.code);
  return {
    status: refusal.status ?? op?.status ?? 200,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ responseCode, responseMessage: refusal.message }),
  };
}

/** '/payer/account/bsb' → 'payer.account.bsb'; '/transactions/0/bsb' → 'transactions[0].bsb'. */
export function fieldName(instancePath: string, child?: string): string {
  const parts = instancePath.split('/').slice(1).map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (child !== undefined) parts.push(child);
  return parts.reduce((name, part) => (/^\d+$/.test(part) ? `${name}[${part}]` : name ? `${name}.${part}` : part), '');
}

function rule(error: ErrorObject): string {
  if (error.keyword === 'enum') {
    const allowed = error.params.allowedValues as unknown[];
    return allowed.length <= 12 ? `must be one of ${allowed.map(String).join(', ')}` : 'must be one of the allowed values';
  }
  if (error.keyword === 'const') return `must be ${JSON.stringify(error.params.allowedValue)}`;
  return error.message ?? error.keyword;
}

/** Keywords that only say that a subschema failed; the subschema's own errors say why. */
const WRAPPERS = new Set(['if', 'then', 'else', 'oneOf', 'anyOf', 'allOf', 'not', '$ref']);

/** The refusal for a failed validation: a missing field first (-3), else the first invalid one (-2). */
export function refusalFor(errors: readonly ErrorObject[], prefix = 'Field'): Refusal {
  const missing = errors.find((e) => e.keyword === 'required' || e.keyword === 'dependentRequired');
  if (missing) {
    const name = fieldName(missing.instancePath, missing.params.missingProperty as string);
    const because = missing.keyword === 'dependentRequired' ? ` when '${fieldName(missing.instancePath, missing.params.property as string)}' is sent` : '';
    return refuse(-3, `${prefix} '${name}' is required${because}`);
  }
  const extra = errors.find((e) => e.keyword === 'additionalProperties');
  if (extra) return refuse(-2, `${prefix} '${fieldName(extra.instancePath, extra.params.additionalProperty as string)}' is not allowed`);
  const invalid = errors.find((e) => !WRAPPERS.has(e.keyword)) ?? errors[0];
  if (!invalid) return refuse(-2, 'The request is invalid');
  const name = fieldName(invalid.instancePath);
  return refuse(-2, name ? `${prefix} '${name}' is invalid: ${rule(invalid)}` : `The request is invalid: ${rule(invalid)}`);
}
