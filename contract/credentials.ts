// Before any check, the suite proves that the credentials it was given are accepted: one signed
// request of each kind the run's operations take (merchant, partner, access token, header hash). A
// `-1` to any of them would turn every later "valid request" check into a refusal the suite cannot
// tell from a server's bug, so the run stops there with one line naming the credential refused. A
// server that issues no access token (one that has not written getAccessToken yet) refuses nothing:
// the run says so in one line and sends the spec's example token.
import { createGatewayClient } from '../generated/client.ts';
import { type ContractOperation, operations } from '../generated/operations.ts';
import { type Credentials, exchange } from './http.ts';
import { doc } from './requests.ts';

/** The credential kinds a run's operations take. */
export type CredentialKind = 'merchant' | 'partner' | 'accessToken' | 'header';

export function credentialKinds(operations: readonly ContractOperation[]): Set<CredentialKind> {
  const kinds = new Set<CredentialKind>();
  for (const op of operations) {
    for (const c of op.credentials) kinds.add(c as CredentialKind);
    if (op.headers) kinds.add('header');
  }
  return kinds;
}

export interface Proof {
  /** The access token the server issued, when it issued one. */
  accessToken?: string;
  /** What the run should say before its checks (a token not issued). */
  notes: string[];
}

/** The credentials of one kind were refused: the run cannot judge anything with them. */
export class CredentialsRefused extends Error {
  override readonly name = 'CredentialsRefused';
}

const codeOf = (answer: unknown) => Number((answer as { responseCode?: unknown } | null)?.responseCode);
const said = (answer: unknown) => String((answer as { responseMessage?: unknown } | null)?.responseMessage ?? '');

/**
 * Sends one request of each credential kind the run needs; answers the access token it was issued
 * (the access-token operations need it) or throws CredentialsRefused naming the first kind refused.
 */
/** The tags of the operations a partner signs: what --skip takes to leave them out of a run. */
const partnerTags = () => [
  ...new Set(operations.filter((op) => op.credentials.includes('partner')).flatMap((op) => op.tags ?? [])),
];

export async function proveCredentials(base: string, c: Credentials, kinds: Set<CredentialKind>): Promise<Proof> {
  const client = createGatewayClient({
    baseUrl: base,
    merchantUUID: c.merchantUUID,
    apiKey: c.apiKey,
    passphrase: c.passphrase,
    partner: { partnerUUID: c.partnerUUID, apiKey: c.partnerApiKey, passphrase: c.partnerPassphrase },
    fetch: exchange,
  });
  const refused = (kind: string, who: string, answer: unknown, options: string) => {
    throw new CredentialsRefused(
      `the ${kind} credentials were refused (${who}: responseCode ${codeOf(answer)}, "${said(answer)}"): give the server's own test account with ${options}`,
    );
  };
  const merchant = `merchantUUID ${c.merchantUUID}`;
  const proof: Proof = { notes: [] };
  if (kinds.has('merchant') || kinds.has('accessToken')) {
    const token = await client.getAccessToken({ transactionAmount: '10.00', transactionCurrency: 'AUD' });
    if (codeOf(token) === -1)
      refused('merchant', `getAccessToken as ${merchant}`, token, '--merchant-uuid, --api-key and --passphrase');
    const issued = (token as { accessToken?: string }).accessToken;
    if (issued) proof.accessToken = issued;
    else if (kinds.has('accessToken'))
      proof.notes.push(
        `getAccessToken issued no token (responseCode ${codeOf(token)}, "${said(token)}"): the operations that take one are sent the spec's example token`,
      );
  }
  if (kinds.has('accessToken') && proof.accessToken) {
    const quote = await client.getSurcharge({
      accessToken: proof.accessToken,
      transactionAmount: '10.00',
      transactionCurrency: 'AUD',
      paymentCardNumber: doc.info['x-sandbox'].testCard.paymentCardNumber,
    } as never);
    if (codeOf(quote) === -1)
      refused(
        'access token',
        `getSurcharge with the token getAccessToken issued`,
        quote,
        'a server that accepts the access tokens it issues',
      );
  }
  if (kinds.has('partner')) {
    const partner = await client.partner.checkMerchant({
      requestReference: `contract-preflight-${Date.now()}`,
    } as never);
    if (codeOf(partner) === -1)
      refused(
        'partner',
        `checkMerchant as partnerUUID ${c.partnerUUID}`,
        partner,
        `--partner-uuid, --partner-api-key and --partner-passphrase, or leave the partner operations out with --skip ${partnerTags().join(',')}`,
      );
  }
  if (kinds.has('header')) {
    const headers = await client.payid.list();
    if (codeOf(headers) === -1)
      refused(
        'header-hash',
        `GET /npp/payid as ${merchant}, signed in SVC-MESSAGEHASH`,
        headers,
        '--merchant-uuid, --api-key and --passphrase (the header hash is keyed by the passphrase)',
      );
  }
  return proof;
}
