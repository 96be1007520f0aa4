// Authentication from the contract: the credentials an operation declares (in the body, or in
// headers through its security requirement) and every message hash, checked with its recipe in
// constant time. A failure answers -1 and says no more than which credential is missing.
import { canonicalParameters, computeHash, constantTimeEqual, hashesEqual } from '../../runtime/signing.ts';
import { bodyCredentials, hashRecipes } from './contract.ts';
import { nodeDigests } from './digests.ts';
import { refuse, type Refusal } from './refusals.ts';
import type { Steps } from './steps.ts';
import type { Account, Accounts, ContractOperation, GatewayRequest } from './types.ts';

const DENIED = 'Invalid authentication credentials';
/** A -1, with the check that failed for the request log (no secret in it). */
const denied = (reason: string): Refusal => ({ ...refuse(-1, DENIED), reason });

// Compare equal lengths only, and always compare, so that timing does not tell the length apart.
const sameSecret = (given: string, expected: string) => constantTimeEqual(given.length === expected.length ? given : expected, expected) && given.length === expected.length;

const text = (value: unknown): string | undefined => (typeof value === 'string' && value.length ? value : undefined);

const headerOf = (headers: GatewayRequest['headers'], name: string | undefined) => (name === undefined ? undefined : headers[name.toLowerCase()]);

export interface AuthInput {
  headers: GatewayRequest['headers'];
  body: Record<string, unknown> | undefined;
  params: Record<string, string>;
  query: Record<string, string>;
}

/** Yields each account lookup (a value or a promise, as the implementation answers); see steps.ts. */
export function* authenticate(op: ContractOperation, input: AuthInput, accounts: Accounts): Steps<{ account: Account } | { refusal: Refusal }> {
  let account: Account | undefined;
  const body = input.body ?? {};

  if (op.headers) {
    for (const role in op.headers) {
      if (!text(headerOf(input.headers, op.headers[role]))) return { refusal: refuse(-3, `Header '${op.headers[role]}' is required`) };
    }
    const id = headerOf(input.headers, op.headers.accountId)!;
    account = yield accounts.find('merchant', id);
    const key = headerOf(input.headers, op.headers.apiKey);
    if (!account) return { refusal: denied(`unknown merchant '${id}' (header ${op.headers.accountId})`) };
    if (key !== undefined && !sameSecret(key, account.apiKey)) return { refusal: denied(`header ${op.headers.apiKey} is not the api key of merchant '${id}'`) };
  }

  for (const kind of op.credentials) {
    const fields = bodyCredentials[kind] as { account: Account['kind']; id?: string; key?: string; token?: string };
    let found: Account | undefined;
    if (fields.token) {
      const token = text(body[fields.token]);
      if (!token) continue;
      found = yield accounts.findByAccessToken(token);
      if (!found) return { refusal: denied(`${fields.token} is unknown or expired`) };
    } else {
      const id = text(body[fields.id!]);
      if (!id) continue;
      found = yield accounts.find(fields.account, id);
      const key = text(body[fields.key!]);
      if (!found) return { refusal: denied(`unknown ${fields.account} '${id}' (${fields.id})`) };
      if (!key || !sameSecret(key, found.apiKey)) return { refusal: denied(`${fields.key} ${key ? 'is not the api key' : 'is missing'} of ${fields.account} '${id}'`) };
    }
    // An access token must stand for the merchant the body names, when it names one.
    if (account && (account.kind !== found.kind || account.id !== found.id)) return { refusal: denied(`the credentials name two accounts: ${account.kind} '${account.id}' and ${found.kind} '${found.id}'`) };
    account = found;
  }
  if (!account) return { refusal: denied(`no credentials: send ${op.credentials.map((k) => bodyCredentials[k as keyof typeof bodyCredentials].account).join(' or ')} credentials`) };

  for (const use of op.hashes) {
    const recipe = hashRecipes[use.recipe as keyof typeof hashRecipes];
    if (use.in === 'header') {
      const given = input.headers[use.name.toLowerCase()]!;
      const expected = computeHash(recipe, account.passphrase, canonicalParameters({ params: input.params, query: input.query, body }), nodeDigests);
      if (!hashesEqual(given, expected)) return { refusal: denied(`header ${use.name} does not match recipe '${use.recipe}' under the passphrase of ${account.kind} '${account.id}' (payment-gateway sign ${op.operationId} --preimage shows what is hashed)`) };
    } else if (use.name in body) {
      const given = text(body[use.name]) ?? '';
      if (!hashesEqual(given, computeHash(recipe, account.passphrase, body, nodeDigests))) return { refusal: denied(`'${use.name}' does not match recipe '${use.recipe}' under the passphrase of ${account.kind} '${account.id}' (payment-gateway sign ${op.operationId} --preimage shows what is hashed)`) };
    }
  }
  return { account };
}
