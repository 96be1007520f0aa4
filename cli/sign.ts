// payment-gateway sign: a message hash from a shell, for curl and for finding out why the gateway
// answers -1. It computes with the same recipes (x-hash-recipes) and code the client and server use.
import { readFileSync } from 'node:fs';
import { hashRecipes } from '../generated/hash-recipes.ts';
import { apiVersion, operations, type ContractOperation } from '../generated/operations.ts';
import { FIELD_RULES, recipeFormula } from '../runtime/recipe-text.ts';
import {
  type HashRecipe,
  messageHash,
  portableDigests,
  type PreimageObserver,
  signBodyHashes,
} from '../runtime/signing.ts';
import { ownEntry, parse, UsageError, type CommandSpec, sandboxDefaults } from '../cli-kit/index.ts';
import { protocols } from '../generated/protocols.ts';

export const signSpec = (name: string): CommandSpec => ({
  name,
  usage: '<recipe | operationId> [--body JSON | --field NAME=VALUE ...] [options]',
  summary:
    'Computes a message hash: by a recipe of x-hash-recipes (transaction, query, message...), or every hash an operation takes (processCard, retrieveBatchResponse...). Prints the hash, one per line as NAME HASH when an operation takes several.',
  positionals: true,
  options: {
    passphrase: {
      type: 'string',
      value: 'TEXT',
      env: 'PGW_PASSPHRASE',
      default: "the sandbox's",
      help: 'the account passphrase that keys the hash',
    },
    body: { type: 'string', value: 'JSON', help: 'the request body: JSON text, @file, or - for stdin' },
    field: {
      type: 'string',
      short: 'f',
      multiple: true,
      value: 'NAME=VALUE',
      help: 'a body field, added to the body or replacing it (repeatable)',
    },
    param: {
      type: 'string',
      multiple: true,
      value: 'NAME=VALUE',
      help: 'a path parameter, for the header HMAC (repeatable)',
    },
    query: {
      type: 'string',
      multiple: true,
      value: 'NAME=VALUE',
      help: 'a query parameter, for the header HMAC (repeatable)',
    },
    preimage: { type: 'boolean', help: 'also print the exact text hashed (it holds md5(passphrase): keep it private)' },
    'signed-body': {
      type: 'boolean',
      help: 'with an operationId: print the body with method and hashes filled in, for curl -d @-',
    },
    list: { type: 'boolean', help: 'list the recipes and the formula of each' },
  },
  notes: [
    'Examples:',
    `  ${name} transaction --field merchantUUID=${sandboxDefaults().merchantUUID} --field transactionAmount=10.00 --field transactionCurrency=AUD`,
    `  ${name} processCard --body @request.json --signed-body | curl -s -H 'content-type: ${protocols.canonical.requestType}' -H '${apiVersion.name}: ${apiVersion.value}' -d @- http://127.0.0.1:4010/post`,
    `  ${name} message --param batchUUID=1336583d3a953ce2d --preimage`,
  ],
});

function pairs(list: string[] | undefined, option: string): Record<string, string> {
  // No prototype: --field __proto__=x is a field named __proto__, as the body would carry it.
  const out: Record<string, string> = Object.create(null);
  for (const item of list ?? []) {
    const at = item.indexOf('=');
    if (at < 1) throw new UsageError(`--${option} takes NAME=VALUE, not '${item}'`);
    out[item.slice(0, at)] = item.slice(at + 1);
  }
  return out;
}

function readBody(text: string | undefined): Record<string, unknown> {
  if (text === undefined) return {};
  let source = text;
  try {
    if (text === '-') source = readFileSync(0, 'utf8');
    else if (text.startsWith('@')) source = readFileSync(text.slice(1), 'utf8');
  } catch (error) {
    throw new UsageError(
      `--body: cannot read ${text === '-' ? 'stdin' : text.slice(1)}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(source);
  } catch (error) {
    throw new UsageError(`--body is not JSON: ${(error as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new UsageError('--body must be a JSON object');
  return value as Record<string, unknown>;
}

export function recipeList(): string {
  const rows = Object.entries(hashRecipes as Record<string, HashRecipe>).map(
    ([name, r]) => `  ${name.padEnd(16)}${recipeFormula(r)}\n  ${''.padEnd(16)}${r.summary ?? ''}`,
  );
  return [`Recipes (${Object.keys(hashRecipes).length}):`, ...rows, '', FIELD_RULES].join('\n');
}

export interface SignInput {
  target: string;
  passphrase: string;
  body: Record<string, unknown>;
  params: Record<string, string>;
  query: Record<string, string>;
}

export interface Signature {
  name: string;
  recipe: string;
  hash: string;
  preimage: string;
}

/**
 * The hashes of a recipe, or of every hash an operation takes, for this input: signed by the one
 * signer the client uses (runtime/signing.ts), the body's hashes first, then the header hash over
 * the body as sent, each with the text it hashed.
 */
export function sign({ target, passphrase, body, params, query }: SignInput): {
  signatures: Signature[];
  body: Record<string, unknown>;
} {
  const recipes = hashRecipes as Record<string, HashRecipe>;
  const op: ContractOperation | undefined = operations.find((o) => o.operationId === target);
  const recipe = ownEntry(recipes, target);
  const uses: { name: string; recipe: string; in: string }[] = op
    ? [...op.hashes]
    : recipe
      ? [{ name: target, recipe: target, in: recipe.algorithm === 'hmac-sha256' ? 'header' : 'body' }]
      : [];
  if (!uses.length) {
    if (op) throw new UsageError(`${target} takes no message hash`);
    throw new UsageError(`'${target}' is neither a recipe (${Object.keys(recipes).join(', ')}) nor an operationId`);
  }
  const filled: Record<string, unknown> = op?.method && op.request ? { method: op.method, ...body } : { ...body };
  const seen = new Map<string, Signature>();
  const observe =
    (recipe: string): PreimageObserver =>
    (name, preimage, hash) =>
      seen.set(name, { name, recipe, hash, preimage });
  for (const use of uses.filter((u) => u.in === 'body'))
    signBodyHashes(
      filled,
      [{ name: use.name, recipe: recipes[use.recipe]! }],
      passphrase,
      portableDigests,
      observe(use.recipe),
    );
  for (const use of uses.filter((u) => u.in === 'header')) {
    messageHash(
      recipes[use.recipe]!,
      passphrase,
      { params, query, body: op && !op.request ? undefined : filled },
      portableDigests,
      observe(use.recipe),
      use.name,
    );
  }
  return { signatures: uses.map((use) => seen.get(use.name)!), body: filled };
}

export function signCommand(name: string, argv: string[]): void {
  const parsed = parse(signSpec(name), argv);
  if (parsed === 'exit') return;
  const v = parsed.values;
  if (v.list) return void console.log(recipeList());
  const [target, ...extra] = parsed.positionals;
  if (!target)
    throw new UsageError(`name a recipe or an operationId, e.g. ${name} transaction (--list shows the recipes)`);
  if (extra.length) throw new UsageError(`one recipe or operationId at a time, not '${parsed.positionals.join(' ')}'`);
  const body = { ...readBody(v.body as string | undefined), ...pairs(v.field as string[] | undefined, 'field') };
  const passphrase = (v.passphrase as string | undefined) ?? process.env.PGW_PASSPHRASE ?? sandboxDefaults().passphrase;
  const result = sign({
    target,
    passphrase,
    body,
    params: pairs(v.param as string[] | undefined, 'param'),
    query: pairs(v.query as string[] | undefined, 'query'),
  });
  if (v['signed-body']) {
    if (!operations.some((o) => o.operationId === target && o.request))
      throw new UsageError('--signed-body needs an operationId that takes a body');
    return void console.log(JSON.stringify(result.body));
  }
  for (const s of result.signatures) {
    if (v.preimage) console.log(`preimage ${s.name} (${s.recipe}): ${s.preimage}`);
    console.log(result.signatures.length > 1 || v.preimage ? `${s.name} ${s.hash}` : s.hash);
  }
}
