// What the listen and trigger commands share: the sandbox account they act as (flags, then the
// environment the sandbox reads, then the sandbox's defaults in the spec's info.x-sandbox).
import { type OptionSpec, sandboxDefaults } from '../../cli-kit/index.ts';

export interface SandboxAccount {
  base: string;
  merchantUUID: string;
  apiKey: string;
  passphrase: string;
  partnerUUID: string;
}

const text = (value: unknown) => (typeof value === 'string' ? value : undefined);

export function sandboxAccount(flags: Record<string, unknown>, env: NodeJS.ProcessEnv = process.env): SandboxAccount {
  const d = sandboxDefaults();
  return {
    base: (text(flags.base) ?? env.PGW_SANDBOX_URL ?? 'http://localhost:4010').replace(/\/$/, ''),
    merchantUUID: text(flags.merchant) ?? env.PGW_SANDBOX_MERCHANT_UUID ?? d.merchantUUID,
    apiKey: text(flags['api-key']) ?? env.PGW_SANDBOX_API_KEY ?? d.apiKey,
    passphrase: text(flags.passphrase) ?? env.PGW_SANDBOX_PASSPHRASE ?? d.passphrase,
    partnerUUID: env.PGW_SANDBOX_PARTNER_UUID ?? d.partnerUUID,
  };
}

export const ACCOUNT_OPTIONS: Record<string, OptionSpec> = {
  base: { type: 'string', value: 'URL', env: 'PGW_SANDBOX_URL', default: 'http://localhost:4010', help: 'the sandbox' },
  merchant: {
    type: 'string',
    value: 'UUID',
    env: 'PGW_SANDBOX_MERCHANT_UUID',
    default: "the sandbox's own",
    help: 'the merchant to act as',
  },
  'api-key': { type: 'string', value: 'KEY', env: 'PGW_SANDBOX_API_KEY', default: "the sandbox's", help: 'its apiKey' },
  passphrase: {
    type: 'string',
    value: 'TEXT',
    env: 'PGW_SANDBOX_PASSPHRASE',
    default: "the sandbox's",
    help: 'its passphrase',
  },
};
