// What the listen and trigger commands share: the sandbox account they act as (flags, then the
// environment the sandbox reads, then the sandbox's defaults in the spec's info.x-sandbox).
import { type OptionSpec, sandboxDefaults } from '../../cli-kit/index.ts';
import { createControlClient, type ControlClient } from '../../sandbox/control-client.ts';
import { boundedFetch } from './http-client.ts';

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

/** The most of a control API answer read (100 deliveries with their bodies and attempts fit many times). */
const CONTROL_ANSWER_BYTES = 16 << 20;

/**
 * The control API as the commands call it: no redirect followed, answers read up to a cap, each call
 * ended by its deadline (a long poll's wait and 15 s more; 30 s for any other).
 */
export function controlClient(account: SandboxAccount, accountId: string, signal?: AbortSignal): ControlClient {
  return createControlClient({
    baseUrl: account.base,
    accountId,
    apiKey: account.apiKey,
    fetch: boundedFetch((request) => {
      const wait = Number(new URL(request.url).searchParams.get('waitSeconds') ?? 0);
      return {
        timeoutMs: (wait + (wait ? 15 : 30)) * 1000,
        maxBytes: CONTROL_ANSWER_BYTES,
        ...(signal ? { signal } : {}),
      };
    }),
  });
}

/** A control API failure as one line: the sandbox's refusal, or why it could not be reached. */
export const controlFailure = (account: SandboxAccount, error: unknown): string =>
  `the sandbox at ${account.base} ${
    error instanceof Error && error.name === 'ControlError' ? 'refused' : 'could not be reached'
  }: ${error instanceof Error ? error.message : String(error)}`;
