// The accounts the mock knows, for the server stubs' own authentication (server-stubs' Accounts): the
// spec's sandbox merchant and partner (info.x-sandbox, as the sandbox seeds them) and any the operator
// gives (--accounts FILE). A request made with any other account is refused as the sandbox refuses an
// unknown one: -1, with the same words. The mock keeps no state, so its access tokens carry their own
// proof: a token getAccessToken answers names its merchant and is keyed with the merchant's
// passphrase, and is taken back by any mock that knows that merchant, restarted or not. The spec's
// example token stands for the sandbox merchant, so that every example request works as it stands.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Account, Accounts } from '../server-stubs/index.ts';

/** What the spec's info.x-sandbox holds of the sandbox's accounts. */
export interface SandboxCredentials {
  merchantUUID: string;
  partnerUUID: string;
  apiKey: string;
  passphrase: string;
}

/** The sandbox's merchant and partner, keyed as the sandbox seeds them (sandbox/accounts.ts). */
export const sandboxAccounts = (x: SandboxCredentials): Account[] => [
  { kind: 'merchant', id: x.merchantUUID, apiKey: x.apiKey, passphrase: x.passphrase },
  { kind: 'partner', id: x.partnerUUID, apiKey: x.apiKey, passphrase: x.passphrase },
];

const TOKEN_PREFIX = 'mock.';

const mac = (account: Account) =>
  createHmac('sha256', account.passphrase).update(`access-token:${account.id}`).digest('base64url').slice(0, 32);

/** The access token the mock issues to a merchant (AccessToken: at most 128 characters). */
export const accessTokenOf = (account: Account): string =>
  `${TOKEN_PREFIX}${Buffer.from(account.id).toString('base64url')}.${mac(account)}`;

export interface MockAccounts extends Accounts {
  /** Every account the mock knows (the banner and the docs list them). */
  readonly known: readonly Account[];
}

export function mockAccounts(accounts: readonly Account[], exampleTokens: readonly string[] = []): MockAccounts {
  const byKey = new Map(accounts.map((a) => [`${a.kind}:${a.id}`, a]));
  const merchant = accounts.find((a) => a.kind === 'merchant');
  const examples = new Set(exampleTokens);
  return {
    known: accounts,
    find: (kind, id) => byKey.get(`${kind}:${id}`),
    findByAccessToken(token) {
      if (examples.has(token)) return merchant;
      if (!token.startsWith(TOKEN_PREFIX)) return undefined;
      const [id, proof] = token.slice(TOKEN_PREFIX.length).split('.');
      if (id === undefined || proof === undefined) return undefined;
      const account = byKey.get(`merchant:${Buffer.from(id, 'base64url').toString()}`);
      if (!account) return undefined;
      const expected = Buffer.from(mac(account));
      const given = Buffer.from(proof);
      return given.length === expected.length && timingSafeEqual(given, expected) ? account : undefined;
    },
  };
}

/**
 * The accounts of an operator's file: a JSON array of { kind: merchant|partner, id, apiKey,
 * passphrase }. A file that is not one throws, naming the entry and the field.
 */
export function accountsFromFile(file: string): Account[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new Error(`--accounts ${file}: ${(error as Error).message}`);
  }
  if (!Array.isArray(parsed)) throw new Error(`--accounts ${file}: must hold a JSON array of accounts`);
  return parsed.map((entry, i) => {
    const a = entry as Partial<Account>;
    if (a.kind !== 'merchant' && a.kind !== 'partner')
      throw new Error(`--accounts ${file}: entry ${i}: kind must be merchant or partner`);
    for (const field of ['id', 'apiKey', 'passphrase'] as const)
      if (typeof a[field] !== 'string' || !a[field])
        throw new Error(`--accounts ${file}: entry ${i}: ${field} must be a non-empty string`);
    return { kind: a.kind, id: a.id!, apiKey: a.apiKey!, passphrase: a.passphrase! };
  });
}
