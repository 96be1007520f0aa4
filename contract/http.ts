// Talking to the implementation under test: signing any body with the target's credentials (from
// the operation table and the hash recipes), sending it, and judging the answer against the
// operation's own result and refusal schemas.
import { AsyncLocalStorage } from 'node:async_hooks';
import { createRequire } from 'node:module';
import type { ValidateFunction } from 'ajv';
import { hashRecipes } from '../generated/hash-recipes.ts';
import { apiVersion, bodyCredentials, formWire, type ContractOperation } from '../generated/operations.ts';
import { type BoundedClient, boundedClient } from '../runtime/bounded-fetch.ts';
import { chooseForm } from '../runtime/forms.ts';
import { signBodyHashes, signHeaders } from '../runtime/signing.ts';
import { writeForm } from '../runtime/wire.ts';
import { record } from './recording.ts';
import { doc, type Wire } from './requests.ts';
import { readXmlAnswer, typedAnswer } from './xml.ts';

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
  /** The body's fields: the JSON answer, or the XML answer's as the JSON mode carries them. */
  json?: any;
  bytes: Uint8Array;
  /** Sent in the form/XML mode: the answer must be XML (or the operation's file). */
  form?: boolean;
  /** Why the XML answer of a form request cannot be read as one. */
  xmlError?: string;
  /** The answer's HTTP Date header, as an instant: the server's "now" for the value rules. */
  date?: Date;
}

/** Sends in the wire format given; an operation that does not take the form mode is always sent as JSON. */
export async function send(base: string, out: Outgoing, creds: Credentials, wire: Wire = 'json'): Promise<Answer> {
  const { op } = out;
  const form = wire === 'form' && op.formTypes !== null;
  const params = {
    ...Object.fromEntries(op.parameters.filter((p) => p.in === 'path').map((p) => [p.name, p.example!])),
    ...out.params,
  };
  const query =
    out.query ??
    Object.fromEntries(op.parameters.filter((p) => p.in === 'query' && p.example).map((p) => [p.name, p.example!]));
  const path = op.path.replace(/\{(\w+)\}/g, (_, n: string) => encodeURIComponent(params[n]!));
  const search = new URLSearchParams(query).toString();
  // The form mode's clients send no version header (docs/WIRE-FORMATS.md).
  const headers: Record<string, string> = form ? {} : { [apiVersion.name]: apiVersion.value };
  if (out.body !== undefined) headers['content-type'] = form ? formWire.request : 'application/json';
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
  const body = out.body === undefined ? undefined : form ? writeForm(out.body) : JSON.stringify(out.body);
  record({ op, verb: op.verb, url, headers, body, params, query });
  const response = await exchangeClient().fetch(url, {
    method: op.verb,
    headers,
    ...(body !== undefined ? { body } : {}),
  });
  return answerOf(response, form ? op : undefined);
}

/**
 * A response as the checks judge it: status, content type, bytes, and the body's fields where it is
 * JSON, or (to a form request: `formOp`) XML, typed by the schema of the answer it is.
 */
export async function answerOf(response: Response, formOp?: ContractOperation): Promise<Answer> {
  const bytes = new Uint8Array(await response.arrayBuffer());
  const type = response.headers.get('content-type') ?? '';
  let json: any;
  if (/json/.test(type)) {
    try {
      json = JSON.parse(new TextDecoder().decode(bytes));
    } catch {
      json = undefined;
    }
  }
  const date = response.headers.get('date');
  const when = date ? { date: new Date(date) } : {};
  if (!formOp) return { status: response.status, type, json, bytes, ...when };
  if (!type.startsWith(formWire.answer)) return { status: response.status, type, json, bytes, form: true, ...when };
  const read = readXmlAnswer(new TextDecoder().decode(bytes));
  if ('error' in read) return { status: response.status, type, bytes, form: true, xmlError: read.error, ...when };
  const schema = Number(read.ok.responseCode) < 0 ? formOp.refusal : formOp.result;
  return { status: response.status, type, json: typedAnswer(doc, schema, read.ok), bytes, form: true, ...when };
}

const errorText = (v: ValidateFunction) =>
  (v.errors ?? []).map((e) => `${e.instancePath || 'body'} ${e.message}`).join('; ');

/** Why the answer breaks the contract for this operation, or undefined when it keeps it. */
export function breaksContract(op: ContractOperation, a: Answer): string | undefined {
  if (a.status >= 500) return `HTTP ${a.status}${a.json?.responseMessage ? `: ${a.json.responseMessage}` : ''}`;
  if (a.status !== op.status) return `HTTP ${a.status}, the contract declares ${op.status}`;
  if (a.form) {
    // A form request is answered XML; only a file result keeps its own type (docs/WIRE-FORMATS.md).
    if (a.xmlError) return `the XML answer to a form request is broken: ${a.xmlError}`;
    const file = op.resultType !== 'application/json' && a.type.startsWith(op.resultType);
    if (!file && !a.type.startsWith(formWire.answer))
      return `content type ${a.type || '(none)'} to a form request, the form mode answers ${formWire.answer}`;
    if (file) return undefined;
    const refused = Number(a.json.responseCode) < 0;
    const v = resultValidators[refused ? op.refusal : op.result]!;
    return v(a.json) ? undefined : `${refused ? op.refusal : op.result} (as XML): ${errorText(v)}`;
  }
  if (op.resultType !== 'application/json' && !a.type.startsWith('application/json')) {
    return a.type.startsWith(op.resultType)
      ? undefined
      : `content type ${a.type}, the contract declares ${op.resultType}`;
  }
  if (!a.type.startsWith('application/json')) return `content type ${a.type}, the contract declares application/json`;
  if (a.json === undefined) return 'the body is not JSON';
  const refused = Number(a.json.responseCode) < 0;
  const v = resultValidators[refused ? op.refusal : op.result];
  if (!v) return `no validator for ${refused ? op.refusal : op.result}`;
  return v(a.json) ? undefined : `${refused ? op.refusal : op.result}: ${errorText(v)}`;
}
