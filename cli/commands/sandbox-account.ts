// What the listen and trigger commands share: the sandbox account they act as (flags, then the
// environment the sandbox reads, then the sandbox's defaults in the spec's info.x-sandbox).
import { readFileSync } from 'node:fs';

export interface SandboxAccount {
  base: string;
  merchantUUID: string;
  apiKey: string;
  passphrase: string;
  partnerUUID: string;
}

const defaults = () => JSON.parse(readFileSync(new URL('../../generated/openapi.json', import.meta.url), 'utf8')).info['x-sandbox'] as Omit<SandboxAccount, 'base'>;

export function sandboxAccount(flags: { base?: string | undefined; merchant?: string | undefined; 'api-key'?: string | undefined; passphrase?: string | undefined }, env: NodeJS.ProcessEnv = process.env): SandboxAccount {
  const d = defaults();
  return {
    base: (flags.base ?? env.PGW_SANDBOX_URL ?? 'http://localhost:4010').replace(/\/$/, ''),
    merchantUUID: flags.merchant ?? env.PGW_SANDBOX_MERCHANT_UUID ?? d.merchantUUID,
    apiKey: flags['api-key'] ?? env.PGW_SANDBOX_API_KEY ?? d.apiKey,
    passphrase: flags.passphrase ?? env.PGW_SANDBOX_PASSPHRASE ?? d.passphrase,
    partnerUUID: env.PGW_SANDBOX_PARTNER_UUID ?? d.partnerUUID,
  };
}

export const accountFlags = {
  base: { type: 'string' },
  merchant: { type: 'string' },
  'api-key': { type: 'string' },
  passphrase: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

export const ACCOUNT_HELP = `  --base URL          the sandbox (default PGW_SANDBOX_URL, else http://localhost:4010)
  --merchant UUID     the merchant to act as (default PGW_SANDBOX_MERCHANT_UUID, else the sandbox's own)
  --api-key KEY       its apiKey (default PGW_SANDBOX_API_KEY, else the sandbox's)
  --passphrase TEXT   its passphrase (default PGW_SANDBOX_PASSPHRASE, else the sandbox's)`;
