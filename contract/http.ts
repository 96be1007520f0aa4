// Talking to the implementation under test: signing any body with the target's credentials (from
// the operation table and the hash recipes), sending it, and judging the answer against the
// operation's own result and refusal schemas.
import { AsyncLocalStorage } from 'node:async_hooks';
import { createRequire } from 'node:module';
import type { ValidateFunction } from 'ajv';
import { hashRecipes } from '../generated/hash-recipes.ts';
import { bodyCredentials, type ContractOperation } from '../generated/operations.ts';
import { protocols } from '../generated/protocols.ts';
import { type BoundedClient, boundedClient } from '../runtime/bounded-fetch.ts';
import { chooseForm } from '../runtime/forms.ts';
import type { AnswerRead, Protocol } from '../runtime/protocols/protocol.ts';
import { signBodyHashes, signHeaders } from '../runtime/signing.ts';
import { record } from './recording.ts';
import { doc, protocolFor, type Wire } from './requests.ts';

const require = createRequire(import.meta.url);

/**
 * The client every exchange of a run goes through (runtime/bounded-fetch.ts: no redirect followed,
 * answers capped, exchanges timed out, the run's deadline, giving up on a server that stops
 * answering), set for the run by runContract (withClient); outside a run, one with the default limits
 * that never gives up.
 */
const runClient = new AsyncLocalStorage<BoundedClient>();
const outsideARun = boundedClient({ giveUpAfter: Number.POSITIVE_INFINITY });
export const exchangeClient = (): BoundedClient => runClient.getStore() ?? outsideARun;
export const withClient = <T>(client: BoundedClient, work: () => Promise<T>): Promise<T> => runClient.run(client, work);
/** fetch through the run's client: what a typed client of the suite is given. */
export const exchange = (request: Request): Promise<Response> => exchangeClient().fetch(request);
export const resultValidators = require('payment-gateway-contract/validators/results') as Record<
  string,
  ValidateFunction
>;
export const requestValidators = require('payment-gateway-contract/validators/requests') as Record<
  string,
  ValidateFunction
>;

export interface Credentials {
  merchantUUID: string;
  partnerUUID: string;
  apiKey: string;
  partnerApiKey: string;
  passphrase: string;
  partnerPassphrase: string;
  accessToken?: string;
}

export interface Outgoing {
  op: ContractOperation;
  body?: Record<string, unknown> | undefined;
  params?: Record<string, string>;
  query?: Record<string, string>;
  headers?: Record<string, string | undefined>;
}

/** The form of the operation this body is in (the request schema itself when it has one form): the one chooser, runtime/forms.ts. */
export function formOf(op: ContractOperation, body: unknown): string {
  return chooseForm(op.requestForms!, (body ?? {}) as Record<string, unknown>).schema;
}

/**
 * The spec's examples name the x-sandbox accounts (updateMerchant's merchantUUID, the merchant a partner
 * updates): the target's own accounts stand in for them, from the suite's configuration, wherever a
 * body holds one (a credential field or not). A server with its own accounts is never sent ours.
 */
function asConfigured(value: unknown, own: ReadonlyMap<string, string>): unknown {
  if (typeof value === 'string') return own.get(value) ?? value;
  if (Array.isArray(value)) return value.map((v) => asConfigured(v, own));
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, asConfigured(v, own)]));
  return value;
}

/** The body with the target's accounts and credentials and fresh hashes, for the fields its form takes. */
export function signBody(
  op: ContractOperation,
  form: string,
  body: Record<string, unknown>,
  creds: Credentials,
): Record<string, unknown> {
  const shape = op.requestForms!.find((f) => f.schema === form)!;
  const sandbox = doc.info['x-sandbox'];
  const own = new Map([
    [sandbox.merchantUUID, creds.merchantUUID],
    [sandbox.partnerUUID, creds.partnerUUID],
  ]);
  const out = asConfigured(body, own) as Record<string, unknown>;
  let passphrase = creds.passphrase;
  const token = op.credentials.includes('accessToken') ? bodyCredentials.accessToken.token : undefined;
  if (token && shape.accepts.includes(token) && out[token] !== undefined && creds.accessToken)
    out[token] = creds.accessToken;
  for (const kind of shape.fill) {
    if (kind === 'accessToken') continue;
    const c = bodyCredentials[kind];
    const partner = c.account === 'partner';
    out[c.id] = partner ? creds.partnerUUID : creds.merchantUUID;
    out[c.key] = partner ? creds.partnerApiKey : creds.apiKey;
    passphrase = partner ? creds.partnerPassphrase : creds.passphrase;
  }
  // The hashes the body carries are signed afresh (a test body without one stays without).
  const uses = shape.hashes.filter((h) => out[h.name] !== undefined);
  return signBodyHashes(
    out,
    uses.map((h) => ({ name: h.name, recipe: hashRecipes[h.recipe] })),
    passphrase,
  );
}

export interface Answer {
  status: number;
  type: string;
  /** The body's fields, as the spec's own protocol carries them (read back and typed in any other). */
  json?: any;
  bytes: Uint8Array;
  /** The protocol the request was sent in: the answer must be written in it (or be the operation's file). */
  protocol: Protocol;
  /** Why the answer, written in the request's protocol, cannot be read as its clients read it. */
  readError?: string;
  /** The answer's HTTP Date header, as an instant: the server's "now" for the value rules. */
  date?: Date;
}

/** An answer read back as the protocol's clients read it, typed by the operation's result's or refusal's shape. */
export function readAnswer(protocol: Protocol, op: ContractOperation, text: string): AnswerRead {
  const read = protocol.readAnswer(text, op.shapes.result);
  return 'ok' in read && Number(read.ok.responseCode) < 0 ? protocol.readAnswer(text, op.shapes.refusal) : read;
}

/** A body as a server reads it once sent in the protocol (a form's empty values gone, its text typed again). */
export function asRead(
  protocol: Protocol,
  op: ContractOperation,
  body: Record<string, unknown>,
): Record<string, unknown> {
  const read = protocol.read(protocol.writeRequest(body));
  if (!('ok' in read)) throw new TypeError(`The body cannot be sent in ${protocol.label}: ${read.unreadable.refusal}`);
  return protocol.typed(read.ok, op.shapes.request) as Record<string, unknown>;
}

/** Sends in the wire format given; an operation not served in it is sent in the spec's own. */
export async function send(
  base: string,
  out: Outgoing,
  creds: Credentials,
  wire: Wire = protocols.canonical.id,
): Promise<Answer> {
  const { op } = out;
  const protocol = protocolFor(op, wire);
  const params = {
    ...Object.fromEntries(op.parameters.filter((p) => p.in === 'path').map((p) => [p.name, p.example!])),
    ...out.params,
  };
  const query =
    out.query ??
    Object.fromEntries(op.parameters.filter((p) => p.in === 'query' && p.example).map((p) => [p.name, p.example!]));
  const path = op.path.replace(/\{(\w+)\}/g, (_, n: string) => encodeURIComponent(params[n]!));
  const search = new URLSearchParams(query).toString();
  // What the protocol's clients send: the JSON mode's version header, the form mode's none (docs/WIRE-FORMATS.md).
  const headers: Record<string, string> = protocol.requestHeaders(out.body !== undefined);
  if (op.headers) {
    const use = op.hashes.find((h) => h.in === 'header')!;
    const names = { accountId: op.headers.accountId!, apiKey: op.headers.apiKey!, messageHash: use.name };
    const account = { id: creds.merchantUUID, apiKey: creds.apiKey, passphrase: creds.passphrase };
    Object.assign(headers, signHeaders(names, hashRecipes[use.recipe], account, { params, query, body: out.body }));
  }
  for (const [k, v] of Object.entries(out.headers ?? {})) {
    for (const existing of Object.keys(headers))
      if (existing.toLowerCase() === k.toLowerCase()) delete headers[existing];
    if (v !== undefined) headers[k] = v;
  }
  const url = `${base}${path}${search ? `?${search}` : ''}`;
  const body = out.body === undefined ? undefined : protocol.writeRequest(out.body);
  record({ op, verb: op.verb, url, headers, body, params, query });
  const answered = await exchangeClient().whole(url, {
    method: op.verb,
    headers,
    ...(body !== undefined ? { body } : {}),
  });
  return answerFrom(answered.status, answered.headers, answered.bytes, op, protocol);
}

/**
 * A response as the checks judge it: status, content type, bytes, and the body's fields where a
 * protocol wrote it, read back as that protocol's clients read it and typed by the operation's shapes.
 * Only an answer in the request's protocol can be broken: any other is judged by its type.
 */
export async function answerOf(
  response: Response,
  op: ContractOperation,
  protocol: Protocol = protocols.canonical,
): Promise<Answer> {
  return answerFrom(response.status, response.headers, new Uint8Array(await response.arrayBuffer()), op, protocol);
}

/** An answer's status, head and bytes as the checks judge them (answerOf). */
function answerFrom(
  status: number,
  headers: Headers,
  bytes: Uint8Array,
  op: ContractOperation,
  protocol: Protocol,
): Answer {
  const type = headers.get('content-type') ?? '';
  const date = headers.get('date');
  const answer: Answer = { status, type, bytes, protocol, ...(date ? { date: new Date(date) } : {}) };
  const writer = protocols.answeredIn(type);
  if (!writer) return answer;
  const read = readAnswer(writer, op, new TextDecoder().decode(bytes));
  if ('ok' in read) answer.json = read.ok;
  else if (writer === protocol && writer !== protocols.canonical) answer.readError = read.error;
  return answer;
}

const errorText = (v: ValidateFunction) =>
  (v.errors ?? []).map((e) => `${e.instancePath || 'body'} ${e.message}`).join('; ');

/** Why the answer breaks the contract for this operation, or undefined when it keeps it. */
export function breaksContract(op: ContractOperation, a: Answer): string | undefined {
  if (a.status >= 500) return `HTTP ${a.status}${a.json?.responseMessage ? `: ${a.json.responseMessage}` : ''}`;
  if (a.status !== op.status) return `HTTP ${a.status}, the contract declares ${op.status}`;
  const own = protocols.canonical;
  const { protocol } = a;
  const answeredIn = protocols.answeredIn(a.type);
  // A file result keeps its own type in every protocol; its refusals are written in the request's.
  const fileResult = op.resultType !== own.answerType;
  if (fileResult && answeredIn !== protocol)
    return a.type.startsWith(op.resultType)
      ? undefined
      : protocol === own
        ? `content type ${a.type}, the contract declares ${op.resultType}`
        : `content type ${a.type || '(none)'} to a ${protocol.id} request, the ${protocol.id} mode answers ${protocol.answerType}`;
  if (protocol !== own) {
    // Answered in the request's protocol (docs/WIRE-FORMATS.md), and readable as its clients read it.
    if (a.readError) return `the answer to a ${protocol.id} request is broken: ${a.readError}`;
    if (answeredIn !== protocol)
      return `content type ${a.type || '(none)'} to a ${protocol.id} request, the ${protocol.id} mode answers ${protocol.answerType}`;
    const refused = Number(a.json.responseCode) < 0;
    const v = resultValidators[refused ? op.refusal : op.result]!;
    return v(a.json) ? undefined : `${refused ? op.refusal : op.result} (as ${protocol.label}): ${errorText(v)}`;
  }
  if (answeredIn !== own) return `content type ${a.type}, the contract declares ${own.answerType}`;
  if (a.json === undefined) return `the body is not ${own.label}`;
  const refused = Number(a.json.responseCode) < 0;
  const v = resultValidators[refused ? op.refusal : op.result];
  if (!v) return `no validator for ${refused ? op.refusal : op.result}`;
  return v(a.json) ? undefined : `${refused ? op.refusal : op.result}: ${errorText(v)}`;
}
