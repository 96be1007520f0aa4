// Turning what a handler returned into the response, held to the contract: the result hashes are
// added from their recipes, the body is validated against the operation's own result or refusal
// schema, and no unmasked card number may leave in it.
import { unzipSync } from 'fflate';
import { computeHash } from '../../runtime/signing.ts';
import { hashRecipes, resultValidators } from './contract.ts';
import { nodeDigests } from './digests.ts';
import { fieldName } from './refusals.ts';
import type { Account, ContractOperation, GatewayResponse } from './types.ts';

/**
 * A card number standing alone (not glued to letters, as the digits of a hex hash or a token are):
 * 13 to 19 digits, starting as payment cards do (2 to 6, ISO/IEC 7812), passing the Luhn check.
 * Without those conditions a millisecond timestamp (13 digits, Luhn-valid one time in ten) or a run
 * inside a hex customHash would be taken for one and a good answer refused. The lookarounds make
 * each match a whole digit run, so the regular expression engine does the scanning.
 */
const CARD_LIKE = /(?<![0-9A-Za-z])[2-6]\d{12,18}(?![0-9A-Za-z])/g;

export function findCardNumber(text: string): boolean {
  CARD_LIKE.lastIndex = 0;
  for (let m = CARD_LIKE.exec(text); m; m = CARD_LIKE.exec(text)) if (luhn(m[0])) return true;
  return false;
}

/** Whether any entry of a zip holds a card number; bytes that are not a zip are scanned as they are. */
function zipHoldsCardNumber(bytes: Uint8Array): boolean {
  const decoder = new TextDecoder();
  let entries: Record<string, Uint8Array>;
  try {
    entries = unzipSync(bytes);
  } catch {
    return findCardNumber(decoder.decode(bytes));
  }
  return Object.values(entries).some((entry) => findCardNumber(decoder.decode(entry)));
}

export function luhn(digits: string): boolean {
  let sum = 0;
  for (let i = digits.length - 1, odd = false; i >= 0; i--, odd = !odd) {
    let d = digits.charCodeAt(i) - 48;
    if (odd && (d *= 2) > 9) d -= 9;
    sum += d;
  }
  return sum % 10 === 0;
}

/** A violation that is `sensitive` is never sent on, whatever the response validation mode. */
export type Answered = { response: GatewayResponse; refusal?: boolean } | { violation: string; sensitive?: boolean };

const isRefusal = (value: Record<string, unknown>) => Number(value.responseCode) < 0;

/**
 * The first layer of a result hash's input: the hash's own field, undefined, so that a value the
 * handler put there is not hashed into itself. Made once per hash: a fresh object with a computed
 * key on every answer costs V8 a dictionary-mode object each time.
 */
const masks = new WeakMap<ContractOperation['resultHashes'][number], Record<string, undefined>>();
function maskOf(use: ContractOperation['resultHashes'][number]): Record<string, undefined> {
  let mask = masks.get(use);
  if (!mask) masks.set(use, (mask = Object.freeze({ [use.name]: undefined })));
  return mask;
}

export function answer(op: ContractOperation, account: Account, request: Record<string, unknown>, returned: unknown): Answered {
  if (op.resultType !== 'application/json' && (returned instanceof Uint8Array || typeof returned === 'string')) {
    const ok = op.resultType === 'application/zip' ? returned instanceof Uint8Array : typeof returned === 'string';
    if (!ok) return { violation: `${op.operationId} must answer ${op.resultType === 'application/zip' ? 'bytes' : 'text'} for ${op.resultType}` };
    // Files are scanned like JSON: a zip entry by entry (a settlement CSV), text as it is.
    const leaks = typeof returned === 'string' ? findCardNumber(returned) : zipHoldsCardNumber(returned as Uint8Array);
    if (leaks) return { violation: 'A card number appears unmasked in the answer', sensitive: true };
    return { response: { status: op.status, headers: { 'content-type': op.resultType }, body: returned } };
  }
  if (!returned || typeof returned !== 'object' || Array.isArray(returned)) return { violation: `${op.operationId} answered ${returned === null ? 'null' : typeof returned}, not an object` };

  // The handler's object is copied only when a result hash is added to it: it stays the handler's.
  let body = returned as Record<string, unknown>;
  const refusal = isRefusal(body);
  if (!refusal) {
    for (const use of op.resultHashes) {
      const expected = computeHash(hashRecipes[use.recipe as keyof typeof hashRecipes], account.passphrase, [maskOf(use), body, request], nodeDigests);
      if (body[use.name] === undefined) {
        if (body === returned) body = { ...body };
        body[use.name] = expected;
      } else if (body[use.name] !== expected) return { violation: `Field '${use.name}' is not what recipe ${use.recipe} gives` };
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
  return { response: { status: op.status, headers: { 'content-type': 'application/json' }, body: text }, refusal };
}
