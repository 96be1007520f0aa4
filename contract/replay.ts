// Every failure of the suite can be seen again: send() records each request as it goes on the wire
// (the check that sent it is found through AsyncLocalStorage, so no check passes it along), and a
// failure prints the last one, with a one-line shell command that sends it again. Secrets are
// printed as sent unless the team asks for them masked (--mask-secrets): then each becomes the
// environment variable the suite reads it from, and a hash is recomputed by `payment-gateway sign`.
import { hashRecipes } from '../generated/hash-recipes.ts';
import { bodyCredentials, type ContractOperation } from '../generated/operations.ts';
import { CLI_COMMAND } from '../runtime/command.ts';
import { messageHash } from '../runtime/signing.ts';
import { formOf, signBody, type Credentials } from './http.ts';
import type { Sent } from './recording.ts';

/** A shell word: single-quoted, a quote inside written '\''. */
const quote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;
/** Placeholders that become "$VAR" once the text is quoted. */
const hole = (variable: string) => `@@${variable}@@`;
const fill = (quoted: string) => quoted.replace(/@@(PGW_[A-Z_]+)@@/g, `'"$$$1"'`);

/** Where a secret comes from in the team's shell: the variables contract/run.ts reads. */
function secretsOf(op: ContractOperation, creds: Credentials): Map<string, string> {
  const partner = op.credentials.includes('partner');
  const secrets = new Map<string, string>();
  if (creds.accessToken) secrets.set(creds.accessToken, 'PGW_ACCESS_TOKEN');
  secrets.set(partner ? creds.partnerApiKey : creds.apiKey, partner ? 'PGW_PARTNER_API_KEY' : 'PGW_API_KEY');
  return secrets;
}

/** The request as printed: method and URL, each header, then the body (masked: secrets as their variables). */
export function describeSent(sent: Sent, mask?: Credentials): string {
  const shown = mask ? masked(sent, mask) : { ...sent, signWith: undefined };
  const lines = [`${sent.verb} ${sent.url}`, ...Object.entries(shown.headers).map(([k, v]) => `${k}: ${v}`)];
  if (shown.body !== undefined) lines.push('', shown.body);
  return lines.join('\n').replace(/@@(PGW_[A-Z_]+)@@/g, '$$$1');
}

interface Masked {
  headers: Record<string, string>;
  body?: string | undefined;
  /** Set when a hash was masked: the command recomputes it with this passphrase variable. */
  signWith: string | undefined;
}

const isJson = (headers: Record<string, string>) =>
  Object.entries(headers).some(([k, v]) => k.toLowerCase() === 'content-type' && v.includes('json'));

function masked(sent: Sent, creds: Credentials): Masked {
  const { op } = sent;
  const secrets = secretsOf(op, creds);
  const partner = op.credentials.includes('partner');
  const passphrase = partner ? 'PGW_PARTNER_PASSPHRASE' : 'PGW_PASSPHRASE';
  let signWith: string | undefined;
  const headers = { ...sent.headers };
  for (const [name, value] of Object.entries(headers)) {
    const variable = secrets.get(value);
    if (variable) headers[name] = hole(variable);
  }
  // A form body (the form/XML mode) is shown as sent but for its secrets: `payment-gateway sign`
  // signs JSON bodies only, so its hash stays as sent.
  if (sent.body !== undefined && !isJson(sent.headers)) {
    let body = sent.body;
    for (const [secret, variable] of secrets) body = body.split(encodeURIComponent(secret)).join(hole(variable));
    return { headers, body, signWith };
  }
  const sentBody = sent.body === undefined ? undefined : (JSON.parse(sent.body) as Record<string, unknown>);
  // A hash is masked (and recomputed by the command) only when it is the right one: a check that
  // sent a wrong hash on purpose is replayed with that wrong hash.
  const headerHash = op.hashes.find((h) => h.in === 'header');
  const hashHeader = headerHash && Object.keys(headers).find((k) => k.toLowerCase() === headerHash.name.toLowerCase());
  if (headerHash && hashHeader) {
    const right = messageHash(
      hashRecipes[headerHash.recipe],
      partner ? creds.partnerPassphrase : creds.passphrase,
      { params: sent.params, query: sent.query, body: sentBody },
      undefined,
      undefined,
      headerHash.name,
    );
    if (headers[hashHeader] === right) {
      headers[hashHeader] = hole('HASH');
      signWith = passphrase;
    }
  }
  let body = sent.body;
  if (sentBody && op.requestForms) {
    const value = { ...sentBody };
    const signed = signBody(op, formOf(op, sentBody), sentBody, creds);
    for (const field of [bodyCredentials.merchant.key, bodyCredentials.accessToken.token]) {
      const variable = typeof value[field] === 'string' ? secrets.get(value[field] as string) : undefined;
      if (variable) value[field] = hole(variable);
    }
    for (const h of op.hashes.filter((x) => x.in === 'body' && x.name in value)) {
      if (value[h.name] !== signed[h.name]) continue;
      value[h.name] = '';
      signWith = passphrase;
    }
    body = JSON.stringify(value);
  }
  return { headers, body, signWith };
}

/**
 * One line a shell runs to send the request again: curl with the headers and body as sent, or, with
 * secrets masked, `payment-gateway sign` recomputing the hash from the team's own variables.
 */
export function replayCommand(sent: Sent, mask?: Credentials): string {
  const shown: Masked = mask ? masked(sent, mask) : { headers: sent.headers, body: sent.body, signWith: undefined };
  const { op } = sent;
  const sign = (extra: string) => {
    const params = Object.entries(sent.params).map(([k, v]) => ` --param ${quote(`${k}=${v}`)}`);
    const query = Object.entries(sent.query).map(([k, v]) => ` --query ${quote(`${k}=${v}`)}`);
    const body = shown.body !== undefined && op.request ? ` --body ${fill(quote(shown.body))}` : '';
    return `${CLI_COMMAND} sign ${op.operationId}${params.join('')}${query.join('')}${body} --passphrase "$${shown.signWith}"${extra}`;
  };
  const headerHash = shown.signWith && Object.values(shown.headers).includes(hole('HASH'));
  const headers = Object.entries(shown.headers).map(([k, v]) =>
    v === hole('HASH') ? ` -H ${quote(`${k}: `)}"$(${sign('')})"` : ` -H ${fill(quote(`${k}: ${v}`))}`,
  );
  const curl = `curl -sS -X ${sent.verb} ${quote(sent.url)}${headers.join('')}`;
  if (shown.body === undefined) return curl;
  // A body hash is recomputed into the body: sign prints the signed body, curl sends it.
  if (shown.signWith && !headerHash) return `${sign(' --signed-body')} | ${curl} --data-binary @-`;
  return `${curl} --data-raw ${fill(quote(shown.body))}`;
}
