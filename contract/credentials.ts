// Before any check, the suite proves that the credentials it was given are accepted: one signed
// request of each kind (merchant, partner, access token, header hash). A `-1` to any of them would
// turn every later "valid request" check into a refusal the suite cannot tell from a server's bug,
// so the run stops there with one line naming the credential refused.
import { createGatewayClient } from '../generated/client.ts';
import type { Credentials } from './http.ts';

/** The credentials of one kind were refused: the run cannot judge anything with them. */
export class CredentialsRefused extends Error {
  override readonly name = 'CredentialsRefused';
}

const codeOf = (answer: unknown) => Number((answer as { responseCode?: unknown } | null)?.responseCode);
const said = (answer: unknown) => String((answer as { responseMessage?: unknown } | null)?.responseMessage ?? '');

/**
 * Sends one request of each credential kind; answers the access token it was issued (the access-token
 * operations need it) or throws CredentialsRefused naming the first kind refused.
 */
export async function proveCredentials(base: string, c: Credentials): Promise<string> {
  const client = createGatewayClient({
    baseUrl: base,
    merchantUUID: c.merchantUUID,
    apiKey: c.apiKey,
    passphrase: c.passphrase,
    partner: { partnerUUID: c.partnerUUID, apiKey: c.partnerApiKey, passphrase: c.partnerPassphrase },
  });
  const refused = (kind: string, who: string, answer: unknown, options: string) => {
    throw new CredentialsRefused(
      `the ${kind} credentials were refused (${who}: responseCode ${codeOf(answer)}, "${said(answer)}"): give the server's own test account with ${options}`,
    );
  };
  const merchant = `merchantUUID ${c.merchantUUID}`;
  const token = await client.getAccessToken({ transactionAmount: '10.00', transactionCurrency: 'AUD' });
  if (codeOf(token) === -1 || !(token as { accessToken?: string }).accessToken)
    refused('merchant', `getAccessToken as ${merchant}`, token, '--merchant-uuid, --api-key and --passphrase');
  const accessToken = (token as { accessToken: string }).accessToken;
  const quote = await client.getSurcharge({
    accessToken,
    transactionAmount: '10.00',
    transactionCurrency: 'AUD',
    paymentCardNumber: '4564710000000004',
  } as never);
  if (codeOf(quote) === -1)
    refused(
      'access token',
      `getSurcharge with the token getAccessToken issued`,
      quote,
      'a server that accepts the access tokens it issues',
    );
  const partner = await client.partner.checkMerchant({ requestReference: `contract-preflight-${Date.now()}` } as never);
  if (codeOf(partner) === -1)
    refused(
      'partner',
      `checkMerchant as partnerUUID ${c.partnerUUID}`,
      partner,
      '--partner-uuid, --partner-api-key and --partner-passphrase',
    );
  const headers = await client.payid.list();
  if (codeOf(headers) === -1)
    refused(
      'header-hash',
      `GET /npp/payid as ${merchant}, signed in SVC-MESSAGEHASH`,
      headers,
      '--merchant-uuid, --api-key and --passphrase (the header hash is keyed by the passphrase)',
    );
  return accessToken;
}
