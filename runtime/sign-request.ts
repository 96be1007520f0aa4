// Signs one request of an operation as the client table describes it (runtime/client.ts's
// ClientOperation): the body's method, credentials and hashes by the form it is in, the version
// header, and the header credentials with their message hash. The typed client and the docs' try-it
// console both sign through it, so what the console shows is what the client sends. Runs in browsers.
import { chooseForm, type FormFields, formHashes, type RequestForm } from './forms.ts';
import {
  type HashRecipes,
  type PreimageObserver,
  type SigningAccount,
  signBodyHashes,
  signHeaders,
} from './signing.ts';

/** What signing reads of an operation: a compact form of OperationModel (the client table's entries). */
export interface SignableOperation {
  method?: string;
  forms?: readonly (FormFields & Pick<RequestForm, 'fill' | 'hashes'>)[];
  /** Header names by role (accountId, apiKey, messageHash), with the message hash's `recipe`. */
  headers?: Readonly<Record<string, string>>;
}

/** What signing reads of the contract: the recipes, the version header, the body credential fields. */
export interface SigningContract {
  recipes: HashRecipes;
  apiVersion: { name: string; value: string };
  credentials: Readonly<
    Record<string, { account: string; id?: string | undefined; key?: string | undefined; token?: string | undefined }>
  >;
}

export interface UnsignedRequest {
  params?: Readonly<Record<string, string>>;
  query?: Readonly<Record<string, string>> | undefined;
  /** The caller's body, less what is filled in here (method, credentials, hash fields). */
  body?: Readonly<Record<string, unknown>> | undefined;
}

/**
 * The body and headers to send. `accountFor` gives the account of a body credential kind (merchant,
 * partner); header credentials are the merchant's. `observe` is told each hash's preimage.
 */
export function signRequest(
  op: SignableOperation,
  contract: SigningContract,
  accountFor: (kind: string) => SigningAccount,
  request: UnsignedRequest,
  observe?: PreimageObserver,
): { body: Record<string, unknown> | undefined; headers: Record<string, string> } {
  let body: Record<string, unknown> | undefined;
  if (op.forms) {
    const input = request.body ?? {};
    const form = chooseForm(op.forms, input);
    body = op.method ? { method: op.method, ...input } : { ...input };
    let passphrase = accountFor('merchant').passphrase;
    for (const kind of form.fill) {
      const fields = contract.credentials[kind]!;
      const account = accountFor(kind);
      body[fields.id!] = account.id;
      body[fields.key!] = account.apiKey;
      passphrase = account.passphrase;
    }
    const uses = formHashes(form, body).map((h) => ({ name: h.name, recipe: contract.recipes[h.recipe]! }));
    signBodyHashes(body, uses, passphrase, undefined, observe);
  }
  const headers: Record<string, string> = { [contract.apiVersion.name]: contract.apiVersion.value };
  if (op.headers) {
    const names = {
      accountId: op.headers.accountId!,
      apiKey: op.headers.apiKey!,
      messageHash: op.headers.messageHash!,
    };
    const signed = { params: request.params, query: request.query, body };
    const recipe = contract.recipes[op.headers.recipe!]!;
    Object.assign(headers, signHeaders(names, recipe, accountFor('merchant'), signed, undefined, observe));
  }
  return { body, headers };
}
