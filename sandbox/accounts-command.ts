// payment-gateway sandbox accounts: the operator's command for the accounts of a sandbox's database
// (docs/DEPLOY.md, "Per-team merchants and credentials"). `add` makes a merchant with secrets of its
// own, one per team, and prints them once; `list` shows the accounts by kind and id, never a secret;
// `rotate` gives a merchant new secrets. It works on the store the sandbox runs on (PGW_DB, --db)
// while instances serve it: they look an account up at each request, so what it writes holds at their
// next request. It opens that store as it is (open-store.ts, openMadeStore): a database a sandbox made
// and seeded at this code's schema version, else refused before anything is written; nothing
// migrated (older instances may serve it), and no vault key read or made (accounts hold no card).
import { randomInt } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { type CommandOutput, type CommandSpec, type OptionSpec, startCommand, UsageError } from '../cli-kit/index.ts';
import { findCardNumber } from '../runtime/card-numbers.ts';
import { addSurchargeRates } from './accounts.ts';
import { Clock } from './clock.ts';
import { DEFAULT_SURCHARGE_BP } from './data.ts';
import { cardFree, merchantId } from './ids.ts';
import { openMadeStore, storePlace } from './open-store.ts';
import type { Store } from './store.ts';

const DB: OptionSpec = {
  type: 'string',
  value: 'FILE',
  env: 'PGW_DB',
  default: './data/sandbox.db',
  help: "the sandbox's database: its SQLite file, or the postgres:// URL its instances share",
};
const JSON_OUTPUT: OptionSpec = { type: 'boolean', help: 'print JSON (for scripts)' };

const ACTIONS = {
  add: 'make a merchant with secrets of its own (one per team) and print them, this once',
  list: 'list the accounts: kind, id, partner, when made; never a secret',
  rotate: 'give a merchant new secrets and print them, this once: the old ones stop working at once',
} as const;
type Action = keyof typeof ACTIONS;

/** The command's help, and each action's. */
export function accountsSpecs(name: string): { overview: CommandSpec } & Record<Action, CommandSpec> {
  return {
    overview: {
      name,
      usage: '<add|list|rotate> [options]',
      summary:
        "The accounts of the sandbox's database, for its operator: each team gets a merchant of its own, whose secrets no other team has. It works on the database the sandbox runs on (--db, PGW_DB, as the sandbox reads them), while instances serve it: each takes a change at its next request. It needs no PGW_SANDBOX_DATA_KEY (accounts hold no card), and refuses, writing nothing, a database that is not a sandbox's at this version's schema.",
      options: {},
      notes: [
        'Commands:',
        ...Object.entries(ACTIONS).map(([action, text]) => `  ${action.padEnd(8)}${text}`),
        '',
        `${name} <command> --help tells more about each.`,
      ],
    },
    add: {
      name: `${name} add`,
      usage: '[--merchant-uuid UUID] [--partner UUID] [--db FILE] [--json]',
      summary:
        'Makes a merchant account with a merchantUUID, an apiKey and a passphrase of its own (random, from node:crypto), the surcharge rates a new merchant gets, and prints them this once: give them to one team. The control API (HTTP Basic merchantUUID:apiKey) and the gateway answer that merchant to these secrets only, so a team cannot sign as another, read its data, reset it or move its clock.',
      options: {
        'merchant-uuid': {
          type: 'string',
          value: 'UUID',
          default: '13 hex digits, drawn',
          help: 'its merchantUUID; refused if an account has that id already',
        },
        partner: {
          type: 'string',
          value: 'UUID',
          default: 'none',
          help: 'the partner account it belongs to (its partner API then reaches it; the secrets stay its own)',
        },
        db: DB,
        json: JSON_OUTPUT,
      },
      notes: [`Example: ${name} add --json > team-a.json`],
    },
    list: {
      name: `${name} list`,
      usage: '[--db FILE] [--json]',
      summary: 'Lists the accounts of the database, partners first: kind, id, partner, when made. Never a secret.',
      options: { db: DB, json: JSON_OUTPUT },
    },
    rotate: {
      name: `${name} rotate`,
      usage: 'MERCHANT_UUID [--db FILE] [--json]',
      summary:
        'Gives a merchant a new apiKey and passphrase and prints them this once; its old ones, and the access tokens they were issued, stop working at the next request. Its data stays. (The seeded merchant shares its secrets with the seeded partner: rotated, it no longer does.)',
      options: { db: DB, json: JSON_OUTPUT },
      positionals: true,
    },
  };
}

const LOWER = 'abcdefghijklmnopqrstuvwxyz';
const drawn = (alphabet: string, length: number) =>
  Array.from({ length }, () => alphabet[randomInt(alphabet.length)]).join('');
/** 24 lowercase letters (113 bits): the seeded key's alphabet, and never a card number. */
export const newApiKey = () => drawn(LOWER, 24);
/** 32 lowercase letters and digits (165 bits), drawn again in the rare case it holds a card number. */
export const newPassphrase = cardFree(() => drawn(`${LOWER}0123456789`, 32));

/**
 * What the spec allows a merchantUUID (its MerchantUUID schema's minLength and maxLength, read from the
 * bundled document the sandbox loads, when a merchantUUID is chosen), narrowed to the characters every
 * credential carrier takes as is.
 */
function merchantUUIDShape(): { pattern: RegExp; minLength: number; maxLength: number } {
  const file = createRequire(import.meta.url).resolve('payment-gateway-contract/openapi.json');
  const { minLength, maxLength } = JSON.parse(readFileSync(file, 'utf8')).components.schemas.MerchantUUID as {
    minLength: number;
    maxLength: number;
  };
  return { pattern: new RegExp(`^[A-Za-z0-9._-]{${minLength},${maxLength}}$`), minLength, maxLength };
}

interface Secrets {
  kind: 'merchant';
  merchantUUID: string;
  apiKey: string;
  passphrase: string;
  partnerUUID: string | null;
}

const noDatabase = (shown: string) =>
  new UsageError(
    `there is no sandbox database at ${shown}: start the sandbox on it once (it makes and seeds it), or name the sandbox's with --db or PGW_DB`,
  );

/** The store the sandbox runs on, opened as it is once checked (openMadeStore); `work` runs on it, then it is closed. */
async function onStore<T>(
  values: Record<string, unknown>,
  env: NodeJS.ProcessEnv,
  work: (store: Store, shown: string) => Promise<T>,
): Promise<T> {
  const dbPath = (values.db as string | undefined) ?? (env.PGW_DB || './data/sandbox.db');
  if (dbPath === ':memory:')
    throw new UsageError(
      "--db :memory: is a database of one process, no sandbox's: name the sandbox's own (its file, or its postgres:// URL)",
    );
  const store = await openMadeStore(dbPath, env, noDatabase);
  try {
    return await work(store, storePlace(dbPath).shown);
  } finally {
    await store.close();
  }
}

async function add(name: string, values: Record<string, unknown>, store: Store): Promise<Secrets> {
  const chosen = values['merchant-uuid'] as string | undefined;
  const shape = chosen === undefined ? undefined : merchantUUIDShape();
  if (chosen !== undefined && shape && !shape.pattern.test(chosen))
    throw new UsageError(
      `--merchant-uuid must be ${shape.minLength} to ${shape.maxLength} letters, digits, '.', '_' or '-' (a merchantUUID travels in bodies, headers and HTTP Basic), not '${chosen}'`,
    );
  // The gateway refuses any field that holds a card number (guard.ts): such a merchant could not be used.
  if (chosen !== undefined && findCardNumber(chosen))
    throw new UsageError(
      '--merchant-uuid must not read as a card number: the gateway refuses any field that holds one',
    );
  const partner = (values.partner as string | undefined) ?? null;
  if (
    partner !== null &&
    !(await store.get("SELECT 1 AS held FROM accounts WHERE kind = 'partner' AND id = ?", partner))
  )
    throw new UsageError(
      `there is no partner ${partner} in the database (${name.replace(/ add$/, ' list')} shows its accounts)`,
    );
  const apiKey = newApiKey();
  const passphrase = newPassphrase();
  const now = new Clock().timestamp();
  const merchantUUID = await store.transaction(async () => {
    // An id no account has, of either kind: the control API finds an account by id and apiKey alone.
    for (let attempt = 0; attempt < 32; attempt++) {
      const id = chosen ?? merchantId();
      const taken = await store.get<{ kind: string }>('SELECT kind FROM accounts WHERE id = ?', id);
      const inserted =
        !taken &&
        (
          await store.run(
            'INSERT OR IGNORE INTO accounts (kind, id, api_key, passphrase, partner_id, created_at) VALUES (?, ?, ?, ?, ?, ?)',
            'merchant',
            id,
            apiKey,
            passphrase,
            partner,
            now,
          )
        ).changes === 1;
      if (inserted) {
        await addSurchargeRates(store, id, DEFAULT_SURCHARGE_BP);
        return id;
      }
      if (chosen !== undefined)
        throw new UsageError(
          taken?.kind === 'partner'
            ? `${chosen} is a partner's id already: choose another --merchant-uuid, or none (one is drawn)`
            : `merchant ${chosen} exists already: choose another --merchant-uuid, or none (one is drawn); ${name.replace(/ add$/, ' rotate')} gives it new secrets`,
        );
    }
    throw new Error('no free merchantUUID in 32 draws');
  });
  return { kind: 'merchant', merchantUUID, apiKey, passphrase, partnerUUID: partner };
}

async function rotate(name: string, merchant: string, store: Store): Promise<Secrets> {
  const apiKey = newApiKey();
  const passphrase = newPassphrase();
  const row = await store.transaction(async () => {
    const found = await store.get<{ partner_id: string | null }>(
      "SELECT partner_id FROM accounts WHERE kind = 'merchant' AND id = ? FOR UPDATE",
      merchant,
    );
    if (!found) return undefined;
    await store.run(
      "UPDATE accounts SET api_key = ?, passphrase = ? WHERE kind = 'merchant' AND id = ?",
      apiKey,
      passphrase,
      merchant,
    );
    // A token stands for the merchant's credentials: those issued under the old ones go with them.
    await store.run('DELETE FROM access_tokens WHERE merchant_id = ?', merchant);
    return found;
  });
  if (!row)
    throw new UsageError(
      `there is no merchant ${merchant} in the database (${name.replace(/ rotate$/, ' list')} shows its accounts)`,
    );
  return { kind: 'merchant', merchantUUID: merchant, apiKey, passphrase, partnerUUID: row.partner_id };
}

/** The secrets as a person reads them: said once, each on a line of its own. */
function secretsText(secrets: Secrets, said: string): string {
  return [
    said,
    `  merchantUUID  ${secrets.merchantUUID}`,
    `  apiKey        ${secrets.apiKey}`,
    `  passphrase    ${secrets.passphrase}`,
    ...(secrets.partnerUUID ? [`  partnerUUID   ${secrets.partnerUUID}`] : []),
    "Every instance on the database takes them at its next request. They are not shown again: keep them in the team's secret store.",
  ].join('\n');
}

interface Listed {
  kind: string;
  id: string;
  partner: string | null;
  createdAt: string;
}

async function list(store: Store): Promise<Listed[]> {
  const rows = await store.all<{ kind: string; id: string; partner_id: string | null; created_at: string }>(
    "SELECT kind, id, partner_id, created_at FROM accounts ORDER BY CASE kind WHEN 'partner' THEN 0 ELSE 1 END, created_at, rowid",
  );
  return rows.map((r) => ({ kind: r.kind, id: r.id, partner: r.partner_id, createdAt: r.created_at }));
}

function listText(accounts: Listed[]): string {
  const rows = [
    ['kind', 'id', 'partner', 'made'],
    ...accounts.map((a) => [a.kind, a.id, a.partner ?? '-', a.createdAt]),
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((cell, i) => (i < r.length - 1 ? cell.padEnd(widths[i]!) : cell)).join('  ')).join('\n');
}

/**
 * `name` as the user typed it (payment-gateway sandbox accounts); argv after it. Answers the exit
 * code: 0, 2 after a mistake (one line on stderr), 1 after anything else (one line too).
 */
export async function run(
  name: string,
  argv: string[],
  options: CommandOutput & { env?: NodeJS.ProcessEnv } = {},
): Promise<number> {
  const specs = accountsSpecs(name);
  const [action, ...rest] = argv;
  if (action === undefined || action.startsWith('-')) {
    const { printError, parsed } = startCommand(specs.overview, argv, options);
    if (typeof parsed === 'number') return parsed;
    printError(`${name}: add, list or rotate is missing (see ${name} --help)`);
    return 2;
  }
  if (!Object.hasOwn(ACTIONS, action)) {
    const { printError } = startCommand(specs.overview, [], options);
    printError(`${name}: unknown accounts command '${action}': use add, list or rotate (see ${name} --help)`);
    return 2;
  }
  const spec = specs[action as Action];
  const { print, printError, parsed } = startCommand(spec, rest, options);
  if (typeof parsed === 'number') return parsed;
  const values = parsed.values as Record<string, unknown>;
  const env = options.env ?? process.env;
  try {
    if (action === 'rotate' && parsed.positionals.length !== 1)
      throw new UsageError(
        parsed.positionals.length
          ? `rotate takes one merchantUUID, not ${parsed.positionals.length} (see ${spec.name} --help)`
          : `rotate needs the merchantUUID of the merchant whose secrets it replaces (see ${spec.name} --help)`,
      );
    await onStore(values, env, async (store, shown) => {
      if (action === 'list') {
        const accounts = await list(store);
        print(values.json ? JSON.stringify(accounts, null, 2) : listText(accounts));
        return;
      }
      const secrets =
        action === 'add' ? await add(spec.name, values, store) : await rotate(spec.name, parsed.positionals[0]!, store);
      print(
        values.json
          ? JSON.stringify(secrets, null, 2)
          : secretsText(
              secrets,
              action === 'add'
                ? `Merchant ${secrets.merchantUUID} added to ${shown}, with secrets of its own:`
                : `Merchant ${secrets.merchantUUID} of ${shown} has new secrets (the old ones no longer work):`,
            ),
      );
    });
    return 0;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    printError(`${spec.name}: ${message}`);
    return error instanceof UsageError ? 2 : 1;
  }
}
