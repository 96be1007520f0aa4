// Authentication from the contract: the credentials an operation declares (in the body, or in
// headers through its security requirement) and every message hash, checked with its recipe in
// constant time. A failure answers -1 and says no more than which credential is missing.
import { randomBytes } from 'node:crypto';
import {
  canonicalParameters,
  computeHash,
  constantTimeEqual,
  hashesEqual,
  legacyRecipe,
  PASSPHRASE_PLACEHOLDER,
  redactedPreimage,
  type HashRecipe,
} from '../../runtime/recipe-hashes.ts';
import { recipeFormula } from '../../runtime/recipe-text.ts';
import { maskCardNumbers } from '../../runtime/card-numbers.ts';
import { bodyCredentials, hashRecipes } from './contract.ts';
import { nodeDigests } from './digests.ts';
import { refusals, type Refusal } from './refusals.ts';
import { CLI_COMMAND } from '../../runtime/command.ts';
import { isThenable } from './steps.ts';
import type { Account, Accounts, ContractOperation, GatewayRequest } from './types.ts';

/**
 * Why a -1 was answered, for the request log of the account it was made with: the check that failed
 * first, the field, and for a hash its recipe and the text it was computed over with every secret part
 * a placeholder. Never the expected hash, nor anything derived from the passphrase.
 */
export interface CredentialExplanation {
  check: 'account' | 'apiKey' | 'accessToken' | 'accounts' | 'credentials' | 'hash';
  field?: string;
  recipe?: string;
  /** The recipe in words (its legacy form too, where the gateway accepts it). */
  formula?: string;
  preimage?: string;
  /** What keys an HMAC recipe. */
  key?: string;
}

/** The fields with every card number in a text value masked (a recipe hashes some: the blacklist's). */
const cardsMasked = (fields: Record<string, unknown>): Record<string, unknown> =>
  Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, typeof v === 'string' ? maskCardNumbers(v) : v]));
const merged = (layers: ReturnType<typeof canonicalParameters>): Record<string, unknown> =>
  Array.isArray(layers) ? Object.assign({}, ...[...layers].reverse()) : (layers as Record<string, unknown>);

/** What an explanation says when only the check failed (no field to name). */
const failure = (check: CredentialExplanation['check'], field?: string) => (): CredentialExplanation =>
  field === undefined ? { check } : { check, field };

/** The body of a request that sent none. */
const NO_FIELDS: Record<string, unknown> = Object.freeze({});

/** A -1, with the check that failed for the request log (no secret in it). */
const denied = (reason: string): Refusal => refusals.credentials(reason);

// Compare equal lengths only, and always compare, so that timing does not tell the length apart.
const sameSecret = (given: string, expected: string) =>
  constantTimeEqual(given.length === expected.length ? given : expected, expected) && given.length === expected.length;

const text = (value: unknown): string | undefined => (typeof value === 'string' && value.length ? value : undefined);

/**
 * The header names an operation reads, made once per operation: as the spec writes them (for the
 * refusals and the log) and lower-cased as adapters key them. A name lower-cased on every request is
 * a new string each time, and looking a header up by a new string costs a string-table lookup.
 */
interface HeaderPlan {
  /** The credential headers in the order of op.headers: the role, its name, its key in the request's headers. */
  readonly roles: readonly { readonly name: string; readonly key: string }[];
  readonly accountId: string | undefined;
  readonly apiKey: string | undefined;
  /** For each hash of op.hashes, its header's key (undefined for a hash in the body). */
  readonly hashKeys: readonly (string | undefined)[];
}
const headerPlans = new WeakMap<ContractOperation, HeaderPlan>();
function headerPlanOf(op: ContractOperation): HeaderPlan {
  let plan = headerPlans.get(op);
  if (!plan) {
    const key = (name: string | undefined) => (name === undefined ? undefined : name.toLowerCase());
    plan = {
      roles: Object.values(op.headers ?? {}).map((name) => ({ name: String(name), key: String(name).toLowerCase() })),
      accountId: key(op.headers?.accountId),
      apiKey: key(op.headers?.apiKey),
      hashKeys: op.hashes.map((use) => (use.in === 'header' ? use.name.toLowerCase() : undefined)),
    };
    headerPlans.set(op, plan);
  }
  return plan;
}

const headerOf = (headers: GatewayRequest['headers'], key: string | undefined) =>
  key === undefined ? undefined : headers[key];

/** What a hash refusal tells the log of whom it was checked for (a function: made only when a hash fails). */
const signedBy = (op: ContractOperation, account: Account) =>
  `under the passphrase of ${account.kind} '${account.id}' (${CLI_COMMAND} sign ${op.operationId} --preimage shows what is hashed)`;

export interface AuthInput {
  headers: GatewayRequest['headers'];
  body: Record<string, unknown> | undefined;
  params: Record<string, string>;
  query: Record<string, string>;
}

/** The current form of the recipe, or its legacy form where the recipe has one and it is accepted. */
// The legacy form is computed whenever the request can still be refused: after a failed check (an
// unknown account, a wrong key), and when the current form does not match. So every refusal costs the
// same, and a right hash behind a wrong key is not told apart by its time. It is skipped only when
// everything so far has passed and the current form matches: that request is accepted, which its
// answer says anyway (the bench's mix: one digest a request fewer, docs/BENCHMARKS.md).
function bodyHashMatches(
  given: string,
  recipe: HashRecipe,
  passphrase: string,
  body: Record<string, unknown>,
  acceptLegacy: boolean,
  refusedAlready: boolean,
): boolean {
  const current = hashesEqual(given, computeHash(recipe, passphrase, body, nodeDigests));
  if (current && !refusedAlready) return true;
  const legacy = acceptLegacy ? legacyRecipe(recipe) : undefined;
  const older = legacy !== undefined && hashesEqual(given, computeHash(legacy, passphrase, body, nodeDigests));
  return current || older;
}

/**
 * Stands in for an account that is not found, so that an unknown merchant costs what a known one with
 * a wrong key costs: the key is compared and every hash computed, against secrets nobody holds.
 */
const DECOY: Account = {
  kind: 'merchant',
  id: '',
  apiKey: randomBytes(12).toString('base64url'),
  passphrase: randomBytes(24).toString('base64url'),
};

/** What authentication concludes: the account, or the -1 (with why, for the log, and the account the request was made with). */
export type Authenticated =
  | { account: Account }
  | { refusal: Refusal; explain?: () => CredentialExplanation; account?: Account };

type Lookup = Account | undefined | PromiseLike<Account | undefined>;
/** A body credential the request does not send: nothing to look up. */
const NOT_SENT = Symbol('not sent');

/** The lookup a body credential asks for, or NOT_SENT. */
function credentialLookup(kind: string, body: Record<string, unknown>, accounts: Accounts): Lookup | typeof NOT_SENT {
  const fields = bodyCredentials[kind as keyof typeof bodyCredentials] as {
    account: Account['kind'];
    id?: string;
    token?: string;
  };
  if (fields.token) {
    const token = text(body[fields.token]);
    return token ? accounts.findByAccessToken(token) : NOT_SENT;
  }
  const id = text(body[fields.id!]);
  return id ? accounts.find(fields.account, id) : NOT_SENT;
}

/**
 * Every account the credentials name, looked up one after the other in the order they are checked:
 * the header's merchant, then each body credential sent. The list itself when every lookup answers
 * at once; else a promise of it, each lookup made once the one before has answered.
 */
function lookUp(
  op: ContractOperation,
  input: AuthInput,
  headers: HeaderPlan | undefined,
  body: Record<string, unknown>,
  accounts: Accounts,
): (Account | undefined)[] | Promise<(Account | undefined)[]> {
  const found: (Account | undefined)[] = [];
  if (headers) {
    const lookup = accounts.find('merchant', headerOf(input.headers, headers.accountId)!);
    if (isThenable(lookup)) return lookUpLater(op, body, accounts, found, lookup, 0);
    found.push(lookup);
  }
  for (let i = 0; i < op.credentials.length; i++) {
    const lookup = credentialLookup(op.credentials[i]!, body, accounts);
    if (lookup === NOT_SENT) continue;
    if (isThenable(lookup)) return lookUpLater(op, body, accounts, found, lookup, i + 1);
    found.push(lookup);
  }
  return found;
}

async function lookUpLater(
  op: ContractOperation,
  body: Record<string, unknown>,
  accounts: Accounts,
  found: (Account | undefined)[],
  pending: PromiseLike<Account | undefined>,
  next: number,
): Promise<(Account | undefined)[]> {
  found.push(await pending);
  for (let i = next; i < op.credentials.length; i++) {
    const lookup = credentialLookup(op.credentials[i]!, body, accounts);
    if (lookup === NOT_SENT) continue;
    found.push(isThenable(lookup) ? await lookup : lookup);
  }
  return found;
}

/**
 * The account the request's credentials stand for, or the -1: at once when every account lookup
 * answers at once (a value), else a promise (the implementation's lookups may answer either way).
 * Every check runs whatever failed before it, and the refusal comes at the end: an unknown account,
 * a wrong key and a wrong hash all cost the same work, so timing does not tell them apart.
 */
export function authenticate(
  op: ContractOperation,
  input: AuthInput,
  accounts: Accounts,
  acceptLegacy = true,
): Authenticated | Promise<Authenticated> {
  const headers = op.headers ? headerPlanOf(op) : undefined;
  if (headers) {
    for (const role of headers.roles) {
      if (!text(input.headers[role.key])) return { refusal: refusals.headerRequired(role.name) };
    }
  }
  const body = input.body ?? NO_FIELDS;
  const found = lookUp(op, input, headers, body, accounts);
  return found instanceof Promise
    ? found.then((list) => checked(op, input, headers, body, list, acceptLegacy))
    : checked(op, input, headers, body, found, acceptLegacy);
}

/** The checks, once the accounts the credentials name are known (`found`, in the order lookUp made them). */
function checked(
  op: ContractOperation,
  input: AuthInput,
  headers: HeaderPlan | undefined,
  body: Record<string, unknown>,
  found: readonly (Account | undefined)[],
  acceptLegacy: boolean,
): Authenticated {
  let account: Account | undefined;
  // The first check that failed, for the log (never the answer); every check still runs.
  let reason: string | undefined;
  // What it was, for the log of the account the request was made with: made only when the log asks
  // (after the answer), so that every refusal costs the same work whichever check failed.
  let explain: (() => CredentialExplanation) | undefined;
  // Whether the account's id and api key checked out: the request is then that account's (its log's).
  let keyMatched = true;
  const deny = (why: string, what: () => CredentialExplanation) => {
    if (reason !== undefined) return;
    reason = why;
    explain = what;
    if (hashFailure === undefined || what !== hashFailure) keyMatched = false;
  };
  // Set where a hash fails, to what it was: until then the closures a failure takes are not made.
  let hashFailure: (() => CredentialExplanation) | undefined;
  // The next of the accounts looked up.
  let looked = 0;

  if (op.headers && headers) {
    const id = headerOf(input.headers, headers.accountId)!;
    const merchant = found[looked++];
    account = merchant ?? DECOY;
    const key = headerOf(input.headers, headers.apiKey);
    if (!merchant)
      deny(`unknown merchant '${id}' (header ${op.headers.accountId})`, failure('account', op.headers.accountId));
    if (!sameSecret(key ?? '', account.apiKey) && key !== undefined)
      deny(`header ${op.headers.apiKey} is not the api key of merchant '${id}'`, failure('apiKey', op.headers.apiKey));
  }

  for (const kind of op.credentials) {
    const fields = bodyCredentials[kind] as { account: Account['kind']; id?: string; key?: string; token?: string };
    let named: Account | undefined;
    if (fields.token) {
      const token = text(body[fields.token]);
      if (!token) continue;
      named = found[looked++];
      if (!named) {
        deny(`${fields.token} is unknown or expired`, failure('accessToken', fields.token));
        named = DECOY;
      }
    } else {
      const id = text(body[fields.id!]);
      if (!id) continue;
      named = found[looked++];
      if (!named) {
        deny(`unknown ${fields.account} '${id}' (${fields.id})`, failure('account', fields.id));
        named = DECOY;
      }
      const key = text(body[fields.key!]) ?? '';
      if (!sameSecret(key, named.apiKey))
        deny(
          `${fields.key} ${key ? 'is not the api key' : 'is missing'} of ${fields.account} '${id}'`,
          failure('apiKey', fields.key),
        );
    }
    // An access token must stand for the merchant the body names, when it names one.
    if (account && account !== DECOY && named !== DECOY && (account.kind !== named.kind || account.id !== named.id)) {
      deny(
        `the credentials name two accounts: ${account.kind} '${account.id}' and ${named.kind} '${named.id}'`,
        failure('accounts'),
      );
    }
    account = named;
  }
  if (!account)
    return {
      refusal: denied(
        `no credentials: send ${op.credentials.map((k) => bodyCredentials[k as keyof typeof bodyCredentials].account).join(' or ')} credentials`,
      ),
      explain: failure('credentials'),
    };

  for (let i = 0; i < op.hashes.length; i++) {
    const use = op.hashes[i]!;
    const recipe = hashRecipes[use.recipe];
    if (use.in === 'header') {
      const given = input.headers[(headers ?? headerPlanOf(op)).hashKeys[i]!]!;
      const expected = computeHash(
        recipe,
        account.passphrase,
        canonicalParameters({ params: input.params, query: input.query, body }),
        nodeDigests,
      );
      if (!hashesEqual(given, expected)) {
        const canonical = canonicalParameters({ params: input.params, query: input.query, body });
        hashFailure = () => ({
          check: 'hash',
          field: use.name,
          recipe: use.recipe,
          formula: recipeFormula(recipe),
          preimage: redactedPreimage(recipe, cardsMasked(merged(canonical)), nodeDigests),
          key: PASSPHRASE_PLACEHOLDER,
        });
        deny(`header ${use.name} does not match recipe '${use.recipe}' ${signedBy(op, account)}`, hashFailure);
      }
    } else if (use.name in body) {
      const given = text(body[use.name]) ?? '';
      let matches: boolean;
      try {
        matches = bodyHashMatches(given, recipe, account.passphrase, body, acceptLegacy, reason !== undefined);
      } catch {
        // The only part a recipe can fail to read is one it decodes: a field the schema takes as a
        // string but that is not base64 (atob throws). That is the field's fault, not the server's.
        const decoded =
          (recipe as HashRecipe).file?.field ?? (recipe as HashRecipe).parts?.find((p) => p.decode)?.field;
        return { refusal: refusals.notHashable(decoded === undefined ? undefined : String(decoded)) };
      }
      if (!matches) {
        const legacy = acceptLegacy ? legacyRecipe(recipe) : undefined;
        hashFailure = () => ({
          check: 'hash',
          field: use.name,
          recipe: use.recipe,
          formula: `${recipeFormula(recipe)}${legacy ? `, or in its legacy form ${recipeFormula(legacy)}` : ''}`,
          preimage: redactedPreimage(recipe, cardsMasked(body), nodeDigests),
        });
        deny(`'${use.name}' does not match recipe '${use.recipe}' ${signedBy(op, account)}`, hashFailure);
      }
    }
  }
  if (reason === undefined) return { account };
  // The request is the account's when its id and api key (or access token) checked out: only a hash failed.
  return keyMatched && account !== DECOY
    ? { refusal: denied(reason), explain: explain!, account }
    : { refusal: denied(reason), explain: explain! };
}
