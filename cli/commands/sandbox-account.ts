// What the listen and trigger commands share: the sandbox account they act as (flags, then the
// environment the sandbox reads, then the sandbox's defaults in the spec's info.x-sandbox).
import { type OptionSpec, sandboxDefaults, UsageError } from '../../cli-kit/index.ts';
import { createControlClient, type ControlClient } from '../../sandbox/control-client.ts';
import { boundedFetch, commandClient } from './http-client.ts';

export interface SandboxAccount {
  base: string;
  merchantUUID: string;
  apiKey: string;
  passphrase: string;
  partnerUUID: string;
  /** How long the sandbox may take to answer one call (a long poll: its wait, and this). */
  timeoutSeconds: number;
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
    timeoutSeconds: secondsOf(text(flags['sandbox-timeout-seconds']) ?? env.PGW_SANDBOX_TIMEOUT_SECONDS),
  };
}

const DEFAULT_TIMEOUT_SECONDS = 30;

function secondsOf(value: string | undefined): number {
  if (value === undefined) return DEFAULT_TIMEOUT_SECONDS;
  if (!/^[1-9]\d{0,2}$/.test(value.trim()))
    throw new UsageError(`--sandbox-timeout-seconds must be a whole number of seconds from 1 to 999, not '${value}'`);
  return Number(value);
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
  'sandbox-timeout-seconds': {
    type: 'string',
    value: 'S',
    env: 'PGW_SANDBOX_TIMEOUT_SECONDS',
    default: String(DEFAULT_TIMEOUT_SECONDS),
    help: 'how long the sandbox may take to answer (a long poll: its wait and this)',
  },
};

/** The most of a control API answer read (100 deliveries with their bodies and attempts fit many times). */
const CONTROL_ANSWER_BYTES = 16 << 20;

/** Control calls in a row without an answer after which a command stops calling (listen then ends). */
export const CONTROL_GIVE_UP_AFTER = 3;

/**
 * The control API as the commands call it (runtime/bounded-fetch.ts): no redirect followed, answers
 * read up to a cap, each call ended by its deadline (the account's timeoutSeconds, after a long
 * poll's wait), and after CONTROL_GIVE_UP_AFTER calls in a row without an answer every later call fails at
 * once with the same line (`gaveUp`): a silent sandbox costs a few time-outs, not a wait forever.
 */
export function controlClient(
  account: SandboxAccount,
  accountId: string,
  signal?: AbortSignal,
): ControlClient & { readonly gaveUp: string | undefined } {
  const client = commandClient(CONTROL_GIVE_UP_AFTER);
  const control = createControlClient({
    baseUrl: account.base,
    accountId,
    apiKey: account.apiKey,
    fetch: boundedFetch(client, (request) => {
      const wait = Number(new URL(request.url).searchParams.get('waitSeconds') ?? 0);
      return {
        timeoutMs: (wait + account.timeoutSeconds) * 1000,
        maxBytes: CONTROL_ANSWER_BYTES,
        ...(signal ? { signal } : {}),
      };
    }),
  });
  return Object.defineProperty(control, 'gaveUp', { get: () => client.gaveUp }) as ControlClient & {
    readonly gaveUp: string | undefined;
  };
}

/** The gateway's own API of the sandbox as the commands call it (trigger's typed client): bounded as the control API is. */
export const sandboxFetch = (
  account: SandboxAccount,
  signal?: AbortSignal,
): ((request: Request) => Promise<Response>) =>
  boundedFetch(commandClient(CONTROL_GIVE_UP_AFTER), () => ({
    timeoutMs: account.timeoutSeconds * 1000,
    maxBytes: CONTROL_ANSWER_BYTES,
    ...(signal ? { signal } : {}),
  }));

/** A control API failure as one line: the sandbox's refusal, or why it could not be reached. */
export const controlFailure = (account: SandboxAccount, error: unknown): string =>
  `the sandbox at ${account.base} ${
    error instanceof Error && error.name === 'ControlError' ? 'refused' : 'could not be reached'
  }: ${error instanceof Error ? error.message : String(error)}`;
