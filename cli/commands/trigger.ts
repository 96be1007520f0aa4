#!/usr/bin/env node
// payment-gateway trigger EVENT: makes the sandbox send a notification by doing what causes it on the
// real gateway (a payout to the account whose attempts end returned, a direct debit authorisation
// with a notifyURL, a batch, a merchant application), through the typed client, not a shortcut.
// With --for ID, the notification of an object the account already has, with --set the fields the
// spec lets a trigger set (checked here against the notification's schema before anything is sent),
// through the sandbox's control API.
import {
  type CommandSpec,
  ownEntry,
  packageFile,
  startCommand,
  type CommandOutput,
  sandboxDefaults,
  usageMistake,
} from '../../cli-kit/index.ts';
import type { GatewayClient } from '../../generated/client.ts';
import { readFileSync } from 'node:fs';
import { notificationKinds, webhooks, type WebhookName } from '../../notifications/index.ts';
import type { ControlClient } from '../../sandbox/control-client.ts';
import type { Overrides } from '../../sandbox/notification-overrides.ts';
import { ACCOUNT_OPTIONS, controlClient, controlFailure, sandboxAccount, sandboxFetch } from './sandbox-account.ts';

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
    const { zipSync } = await import('fflate');
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

/** The webhook an EVENT names (a webhook, or a finer kind of one) and the field value a kind implies. */
function eventOf(name: string): { webhook: WebhookName; implied: Overrides } | undefined {
  if (Object.hasOwn(webhooks, name)) return { webhook: name as WebhookName, implied: {} };
  if (!Object.hasOwn(notificationKinds, name)) return undefined;
  const webhook = notificationKinds[name as keyof typeof notificationKinds] as WebhookName;
  const kinds = (webhooks[webhook] as { kinds?: { by: string; names: Record<string, string> } }).kinds!;
  const value = Object.entries(kinds.names).find(([, kind]) => kind === name)![0];
  return { webhook, implied: { [kinds.by]: value } };
}

const COMMAND: CommandSpec = {
  name: 'payment-gateway trigger',
  usage: 'EVENT [--for ID [--set FIELD=VALUE]...] [options]',
  summary: `Makes the sandbox send the notification EVENT by doing, through the gateway's own operations, what
causes it. EVENT is one of:
  payoutTransaction, payoutApproved  createPayouts to account 123321 (NPP approved)
  payoutReturned                     createPayouts to account 13131313 (NPP declined, DE returned)
  payoutReturnDeclined               createPayouts to account 14141414 (NPP declined, DE return declined)
  directDebitOutcome                 processDDebitAuth with a notifyURL
  batchNotify                        addCard, then processBatch with a batchNotifyURL
  merchantCreated                    addMerchant as the sandbox partner

With --for ID, the notification of an object the account already has, as its state gives it, sent
to the object's own notification address (or --notify-url), through the control API:
  directDebitOutcome   a direct debit (its transactionID) or an authorisation (its fingerprint)
  batchNotify          a batch (its batchUUID) or a card purchase made in one (its transactionID)
  payoutTransaction    a payout transaction, or a whole payout (each of its transactions), by id or
                       reference; payoutReturned and the other kinds set its last attempt's status
  merchantCreated      a completed merchant request (its reference), with --partner
--set FIELD=VALUE changes a field first: only those the spec lets a trigger set, each held to its rule:
${(Object.keys(webhooks) as WebhookName[]).map((w) => `  ${w.padEnd(20)} ${webhooks[w].settable.join(', ')}`).join('\n')}`,
  positionals: true,
  options: {
    for: { type: 'string', value: 'ID', help: 'an object the account has: the notification is about it' },
    set: {
      type: 'string',
      value: 'FIELD=VALUE',
      multiple: true,
      help: 'with --for: a field of the notification set to VALUE (JSON where the field is no string), repeatable',
    },
    'notify-url': {
      type: 'string',
      value: 'URL',
      default: "the object's own with --for; else https://merchant.example/hooks",
      help: 'where the notification goes (payment-gateway listen forwards the notification wherever it is addressed)',
    },
    ...ACCOUNT_OPTIONS,
    partner: { type: 'boolean', help: 'with --for: act as the sandbox partner (merchantCreated)' },
  },
};

/** --set's pairs typed as their fields take them, or the first mistake (the field and the rule). */
async function overridesOf(webhook: WebhookName, pairs: string[], implied: Overrides): Promise<Overrides | string> {
  // Loaded here, as the client below: --help and a mistake in the arguments need neither Ajv nor the stubs.
  const { NotificationOverrides } = await import('../../sandbox/notification-overrides.ts');
  const judge = new NotificationOverrides(JSON.parse(readFileSync(packageFile('openapi.json'), 'utf8')));
  const set: Overrides = { ...implied };
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq < 1) return `--set takes FIELD=VALUE, not '${pair}'`;
    const field = pair.slice(0, eq);
    set[field] = judge.coerce(webhook, field, pair.slice(eq + 1));
  }
  const wrong = judge.refusal(webhook, set);
  return wrong ? `--set ${wrong.field}: ${wrong.rule}` : set;
}

/** trigger EVENT --for ID: the control API's notification about the object. */
async function triggerFor(
  name: string,
  id: string,
  values: Record<string, unknown>,
  print: (line: string) => void,
  printError: (line: string) => void,
): Promise<number> {
  const event = eventOf(name);
  if (!event)
    return usageMistake(
      COMMAND,
      `no event ${JSON.stringify(name)} for --for; one of ${[...Object.keys(webhooks), ...Object.keys(notificationKinds)].join(', ')}`,
      printError,
    );
  const set = await overridesOf(event.webhook, (values.set as string[] | undefined) ?? [], event.implied);
  if (typeof set === 'string') return usageMistake(COMMAND, set, printError);
  const notifyURL = values['notify-url'] as string | undefined;
  if (notifyURL !== undefined && !/^https?:\/\//.test(notifyURL))
    return usageMistake(COMMAND, `--notify-url needs an http(s) URL, not '${notifyURL}'`, printError);
  const a = sandboxAccount(values);
  const control = controlClient(a, values.partner ? a.partnerUUID : a.merchantUUID);
  try {
    const answer = await control.triggerNotification({
      event: event.webhook,
      for: id,
      ...(notifyURL ? { notifyURL } : {}),
      ...(Object.keys(set).length ? { set } : {}),
    });
    const changed = Object.entries(set).map(([f, v]) => `${f}=${typeof v === 'string' ? v : JSON.stringify(v)}`);
    for (const delivery of answer.deliveries) {
      const { delivery: d } = await control.delivery(delivery);
      print(
        `${name} for ${id}: queued delivery #${d.id} (${d.event} ${d.subject}${changed.length ? `, ${changed.join(', ')}` : ''}) to ${d.url}`,
      );
    }
    return 0;
  } catch (error) {
    printError(`${COMMAND.name}: ${controlFailure(a, error)}`);
    return 1;
  }
}

export async function run(argv: string[], options: CommandOutput = {}): Promise<number> {
  const { print, printError, parsed } = startCommand(COMMAND, argv, options);
  if (typeof parsed === 'number') return parsed;
  const { positionals } = parsed;
  const values = parsed.values as Record<string, string | undefined>;
  const event = positionals[0];
  if (values.for !== undefined && event !== undefined && positionals.length === 1)
    return values.for.trim()
      ? triggerFor(event, values.for, parsed.values, print, printError)
      : usageMistake(COMMAND, '--for needs the ID of an object the account has', printError);
  if (values.set !== undefined || values.partner !== undefined)
    return usageMistake(COMMAND, `--${values.set !== undefined ? 'set' : 'partner'} needs --for ID`, printError);
  const trigger = event === undefined ? undefined : ownEntry(TRIGGERS, event);
  if (!trigger || positionals.length !== 1)
    return usageMistake(
      COMMAND,
      `${event === undefined ? 'name an EVENT' : positionals.length > 1 ? 'name one EVENT' : `no event ${JSON.stringify(event)}`}; one of ${Object.keys(TRIGGERS).join(', ')}`,
      printError,
    );
  const a = sandboxAccount(values);
  const { createGatewayClient } = await import('../../generated/client.ts');
  const client = createGatewayClient({
    baseUrl: a.base,
    merchantUUID: a.merchantUUID,
    apiKey: a.apiKey,
    passphrase: a.passphrase,
    partner: { partnerUUID: a.partnerUUID, apiKey: a.apiKey, passphrase: a.passphrase },
    fetch: sandboxFetch(a),
  });
  try {
    const control = controlClient(a, a.merchantUUID);
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
