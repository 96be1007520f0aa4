// Drives a sandbox on an in-memory store through its gateway core (no HTTP), with requests signed as
// a client signs them: body hashes from the spec's recipes, header hashes by buildRequest.
import { zipSync } from 'fflate';
import { buildRequest, operation, sandbox } from '../../contract/index.ts';
import { hashRecipes } from '../../generated/hash-recipes.ts';
import { computeHash } from '../../runtime/signing.ts';
import { createSandbox, type RunningSandbox, type SandboxOptions } from '../../sandbox/index.ts';
import { bodyBytes, type GatewayRequest, type GatewayResponse } from '../../server-stubs/index.ts';
import { counts } from '../sandbox/support.ts';

export { counts };

export function hardeningSandbox(
  dbPath = ':memory:',
  env: NodeJS.ProcessEnv = {},
  options: Pick<SandboxOptions, 'control' | 'fetch' | 'resolve' | 'logger' | 'onRequest'> = {},
): Promise<RunningSandbox> {
  const sent: string[] = [];
  const fetch = async (url: string) => {
    sent.push(url);
    return new Response(null, { status: 204 });
  };
  return createSandbox({ dbPath, env, fetch: fetch as typeof globalThis.fetch, ...options });
}

/** The request for this operation, every body hash computed over the body given (when it names one). */
export function signed(
  operationId: string,
  body: Record<string, unknown> | undefined,
  options: { params?: Record<string, string>; query?: Record<string, string>; wire?: string } = {},
): GatewayRequest {
  const op = operation(operationId);
  let signedBody = body;
  if (body && typeof body === 'object' && !Array.isArray(body)) {
    signedBody = { ...body };
    for (const use of op.hashes.filter((h) => h.in === 'body')) {
      if (use.name in body && body[use.name] === undefined) continue;
      try {
        signedBody[use.name] = computeHash(hashRecipes[use.recipe], 'sandbox-passphrase', signedBody);
      } catch {
        // a body the recipe cannot read (batchFile that is not base64): sent unsigned
      }
    }
  }
  return buildRequest(op, { body: signedBody, ...options });
}

export interface Answer {
  status: number;
  json: any;
  response: GatewayResponse;
}

export async function send(sb: RunningSandbox, request: GatewayRequest): Promise<Answer> {
  const response = await sb.gateway.handle(request);
  // A streamed file is read whole here, so that tests see its bytes (and its production's yields).
  if (typeof response.body !== 'string' && !(response.body instanceof Uint8Array))
    response.body = await bodyBytes(response.body);
  let json: any;
  try {
    json = typeof response.body === 'string' ? JSON.parse(response.body) : undefined;
  } catch {
    json = undefined;
  }
  return { status: response.status, json, response };
}

export const merchant = { merchantUUID: sandbox.merchantUUID, apiKey: sandbox.apiKey };
export const visa = { ...sandbox.testCard, paymentCardName: sandbox.customer.customerName };
/** A Luhn-valid Mastercard number that is no sandbox test card. */
export const FOREIGN_CARD = '5555555555554444';
export const customer = sandbox.customer;
/** A processCard body that the sandbox approves; spread fields over it to vary one. */
export const purchase = (extra: Record<string, unknown> = {}) => ({
  method: 'processCard',
  ...merchant,
  transactionAmount: '10.00',
  transactionCurrency: 'AUD',
  transactionProduct: 'Test',
  ...visa,
  ...customer,
  ...extra,
});

/** A processBatch body: the CSV given zipped and base64-encoded. */
export function batchBody(csv: string | Uint8Array, extra: Record<string, unknown> = {}) {
  const bytes = typeof csv === 'string' ? new TextEncoder().encode(csv) : csv;
  return {
    method: 'processBatch',
    ...merchant,
    batchFile: Buffer.from(zipSync({ 'batch.csv': bytes })).toString('base64'),
    fileHash: 'x',
    ...extra,
  };
}
export const BATCH_HEADER =
  'transactionReferenceID,transactionAmount,transactionCurrency,transactionProduct,cardID,cardKey';

/** A stored card: its cardID and cardKey. */
export async function storedCard(
  sb: RunningSandbox,
): Promise<{ responseCode: string; cardID: string; cardKey: string }> {
  return (
    await send(
      sb,
      signed('addCard', {
        method: 'addCard',
        ...merchant,
        cardName: 'Jane',
        cardNumber: '4564710000000004',
        cardExpiryMonth: '02',
        cardExpiryYear: '29',
      }),
    )
  ).json;
}

/** A direct-debit authorisation whose outcome is notified to notifyURL. */
export const ddAuth = (notifyURL: string) =>
  signed('processDDebitAuth', {
    method: 'processDDebitAuth',
    ...merchant,
    paymentAccountBSB: '802950',
    paymentAccountNumber: '123321',
    paymentAccountName: 'Jane',
    customerName: 'Jane',
    transactionCurrency: 'AUD',
    transactionAmount: '1.00',
    notifyURL,
    urlHash: 'x',
    hash: 'x',
  });
