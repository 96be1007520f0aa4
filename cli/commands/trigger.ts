#!/usr/bin/env node
// payment-gateway trigger EVENT: makes the sandbox send a notification by doing what causes it on the
// real gateway (a payout to the account whose attempts end returned, a direct debit authorisation
// with a notifyURL, a batch, a merchant application), through the typed client, not a shortcut.
import {
  type CommandSpec,
  ownEntry,
  startCommand,
  type CommandOutput,
  sandboxDefaults,
  usageMistake,
} from '../../cli-kit/index.ts';
import { zipSync } from 'fflate';
import { createGatewayClient, type GatewayClient } from '../../generated/client.ts';
import { ACCOUNT_OPTIONS, sandboxAccount } from './sandbox-account.ts';
import { createControlClient, type ControlClient } from '../../sandbox/control-client.ts';

/** Payout test accounts whose attempts end in the status each payout kind names (sandbox/data.ts, gateway facts). */
const PAYOUT_ACCOUNTS = {
  payoutTransaction: '123321',
  payoutApproved: '123321',
  payoutReturned: '13131313',
  payoutReturnDeclined: '14141414',
} as const;

type Trigger = (
  client: GatewayClient,
  notifyURL: string,
  control: ControlClient,
) => Promise<{ did: string; answer: unknown }>;

const payout =
  (accNumber: string): Trigger =>
  async (client, notifyURL, control) => {
    const reference = `TRIG-${Date.now().toString(36)}`;
    const answer = await client.payouts.create({
      reference,
      notifyURL,
      transactions: [
        {
          payee: { name: 'Trigger Payee' },
          transaction: { reference: `${reference}-1`, amount: 1.5, bsb: '802950', accNumber },
        },
      ],
    });
    // Its attempts move with the sandbox clock (a DE attempt takes a day): the control API ends them now.
    const ended = await control.completePayout(reference).then(
      () => 'its attempts ended at once through the control API',
      () =>
        'its notification comes when its attempts end on the sandbox clock (the control API, which ends them at once, is off)',
    );
    return { did: `createPayouts ${reference} to BSB 802950 account ${accNumber}; ${ended}`, answer };
  };

const TRIGGERS: Record<string, Trigger> = {
  ...Object.fromEntries(Object.entries(PAYOUT_ACCOUNTS).map(([event, acc]) => [event, payout(acc)])),
  directDebitOutcome: async (client, notifyURL) => ({
    did: 'processDDebitAuth with a notifyURL (hashSalt "trigger")',
    answer: await client.processDDebitAuth({
      customerName: 'Trigger Payer',
      paymentAccountBSB: '802950',
      paymentAccountNumber: '123321',
      paymentAccountName: 'Trigger Payer',
      transactionAmount: '1.00',
      transactionCurrency: 'AUD',
      returnURL: notifyURL,
      notifyURL,
      hashSalt: 'trigger',
    } as never),
  }),
  batchNotify: async (client, notifyURL) => {
    const { paymentCardNumber, paymentCardExpiry } = sandboxDefaults().testCard;
    const card = (await client.token.addCard({
      cardName: 'Trigger',
      cardNumber: paymentCardNumber,
      cardExpiryMonth: paymentCardExpiry.slice(0, 2),
      cardExpiryYear: paymentCardExpiry.slice(2),
    })) as { cardID: string; cardKey: string };
    const csv = `transactionReferenceID,transactionAmount,transactionCurrency,transactionProduct,cardID,cardKey\nTRIG-1,1.00,AUD,Trigger,${card.cardID},${card.cardKey}\n`;
    const batchFile = btoa(String.fromCharCode(...zipSync({ 'batch.csv': new TextEncoder().encode(csv) })));
    return {
      did: 'addCard, then processBatch of one stored-card purchase with a batchNotifyURL',
      answer: await client.processBatch({ batchFile, batchNotifyURL: notifyURL }),
    };
  },
  merchantCreated: async (client) => ({
    did: "addMerchant as the sandbox partner (notified at the partner's registered address)",
    answer: await client.partner.addMerchant({
      merchantCompanyLegalName: 'Trigger Pty Ltd',
      merchantCompanyTradingName: 'Trigger',
      merchantCompanyRegNumber: '51824753556',
      merchantIndustry: 'Retail',
      merchantCountry: 'AU',
      merchantTimezone: 'Australia/Brisbane',
      merchantContactName: 'Sam',
      merchantContactEmail: 'sam@trigger.test',
      merchantCategoryCode: '5999',
      settlementAccountName: 'Trigger',
      settlementAccountBSB: '802950',
      settlementAccountNumber: '123321',
      status: 'approved',
    } as never),
  }),
};

const COMMAND: CommandSpec = {
  name: 'payment-gateway trigger',
  usage: 'EVENT [options]',
  summary: `Makes the sandbox send the notification EVENT by doing, through the gateway's own operations, what
causes it. EVENT is one of:
  payoutTransaction, payoutApproved  createPayouts to account 123321 (NPP approved)
  payoutReturned                     createPayouts to account 13131313 (NPP declined, DE returned)
  payoutReturnDeclined               createPayouts to account 14141414 (NPP declined, DE return declined)
  directDebitOutcome                 processDDebitAuth with a notifyURL
  batchNotify                        addCard, then processBatch with a batchNotifyURL
  merchantCreated                    addMerchant as the sandbox partner`,
  positionals: true,
  options: {
    'notify-url': {
      type: 'string',
      value: 'URL',
      default: 'https://merchant.example/hooks',
      help: 'the notifyURL the operation names (payment-gateway listen forwards the notification wherever it is addressed)',
    },
    ...ACCOUNT_OPTIONS,
  },
};

export async function run(argv: string[], options: CommandOutput = {}): Promise<number> {
  const { print, printError, parsed } = startCommand(COMMAND, argv, options);
  if (typeof parsed === 'number') return parsed;
  const { positionals } = parsed;
  const values = parsed.values as Record<string, string | undefined>;
  const event = positionals[0];
  const trigger = event === undefined ? undefined : ownEntry(TRIGGERS, event);
  if (!trigger || positionals.length !== 1)
    return usageMistake(
      COMMAND,
      `${event === undefined ? 'name an EVENT' : positionals.length > 1 ? 'name one EVENT' : `no event ${JSON.stringify(event)}`}; one of ${Object.keys(TRIGGERS).join(', ')}`,
      printError,
    );
  const a = sandboxAccount(values);
  const client = createGatewayClient({
    baseUrl: a.base,
    merchantUUID: a.merchantUUID,
    apiKey: a.apiKey,
    passphrase: a.passphrase,
    partner: { partnerUUID: a.partnerUUID, apiKey: a.apiKey, passphrase: a.passphrase },
  });
  try {
    const control = createControlClient({ baseUrl: a.base, accountId: a.merchantUUID, apiKey: a.apiKey });
    const { did, answer } = await trigger(client, values['notify-url'] ?? 'https://merchant.example/hooks', control);
    const code = Number((answer as { responseCode?: unknown }).responseCode);
    print(
      `${event}: ${did} -> responseCode ${code} ${(answer as { responseMessage?: string }).responseMessage ?? ''}`.trimEnd(),
    );
    return code >= 0 ? 0 : 1;
  } catch (error) {
    printError(`${COMMAND.name}: the sandbox at ${a.base} could not be driven: ${(error as Error).message}`);
    return 1;
  }
}

if (import.meta.main) process.exitCode = await run(process.argv.slice(2));
