// Builds real requests for the contract's operations: from the spec's own examples (the body as the
// example gives it, signed with the sandbox passphrase), path and query from the parameters'
// examples, and the header credentials with their message hash where the operation takes them.
// Used by the contract-test suite, the tests and the benchmarks.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { operations, type ContractOperation } from '../generated/operations.ts';
import { hashRecipes } from '../generated/hash-recipes.ts';
import { protocols } from '../generated/protocols.ts';
import { chooseForm, formHashes } from '../runtime/forms.ts';
import type { Protocol } from '../runtime/protocols/protocol.ts';
import { signBodyHashes, signHeaders } from '../runtime/signing.ts';
import type { GatewayRequest } from '../server-stubs/index.ts';
import { exampleValue, type Doc } from '../runtime/document.ts';
import { withExactSchemas } from '../runtime/exact-requests.ts';

const require = createRequire(import.meta.url);
/** The published contract, its exact request schemas among the components (the suite sends exact requests). */
export const doc: Doc = withExactSchemas(
  JSON.parse(readFileSync(require.resolve('payment-gateway-contract/openapi.json'), 'utf8')),
);

export const sandbox = doc.info['x-sandbox'];
/** The access token the spec's examples carry (getAccessToken's example result). */
export const SANDBOX_ACCESS_TOKEN = (exampleValue(doc, 'getAccessTokenApproved') as { accessToken: string })
  .accessToken;

export const operation = (id: string): ContractOperation => {
  const op = operations.find((o) => o.operationId === id);
  if (!op) throw new Error(`No operation ${id}`);
  return op;
};

export interface BuildOptions {
  body?: unknown;
  params?: Record<string, string>;
  query?: Record<string, string>;
  /** Header overrides; undefined removes a header. */
  headers?: Record<string, string | undefined>;
  passphrase?: string;
  /** Sign the body's hash fields as its form takes them (signedBody), with `passphrase` or the sandbox's. */
  signBody?: boolean;
  /**
   * The wire format (docs/WIRE-FORMATS.md): an id of x-wire-formats, `json` (the default, the spec's
   * own) or `form`; an operation not served in it is sent in the spec's own.
   */
  wire?: Wire;
}

/** A wire format by its id in x-wire-formats (`json`, `form`): what --wire names. */
export type Wire = string;

/** The protocol a request of this operation is sent in: `wire`'s where the operation is served in it, else the spec's own. */
export function protocolFor(op: ContractOperation, wire: Wire | undefined): Protocol {
  const asked = wire === undefined ? undefined : protocols.byId(wire);
  return asked && op.protocols.includes(asked.id) ? asked : protocols.canonical;
}

/**
 * A copy of the body with the hash fields its form takes (the one form chooser, runtime/forms.ts)
 * computed with this passphrase; method and credentials are left as the body gives them.
 */
export function signedBody(
  op: ContractOperation,
  body: Record<string, unknown>,
  passphrase: string = sandbox.passphrase,
): Record<string, unknown> {
  const form = chooseForm(op.requestForms ?? [], body);
  return signBodyHashes(
    { ...body },
    formHashes(form, body).map((h) => ({ name: h.name, recipe: hashRecipes[h.recipe] })),
    passphrase,
  );
}

export function buildRequest(op: ContractOperation, options: BuildOptions = {}): GatewayRequest {
  const params = {
    ...Object.fromEntries(op.parameters.filter((p) => p.in === 'path').map((p) => [p.name, p.example!])),
    ...options.params,
  };
  const query =
    options.query ??
    Object.fromEntries(op.parameters.filter((p) => p.in === 'query' && p.example).map((p) => [p.name, p.example!]));
  const path = op.path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(params[name]!));
  const search = new URLSearchParams(query).toString();
  const body =
    options.signBody && op.requestForms
      ? signedBody(op, options.body as Record<string, unknown>, options.passphrase)
      : options.body;
  const protocol = protocolFor(op, options.wire);
  const headers: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(protocol.requestHeaders(body !== undefined)))
    headers[name.toLowerCase()] = value;
  if (op.headers) {
    const use = op.hashes.find((h) => h.in === 'header')!;
    const names = {
      accountId: op.headers.accountId!.toLowerCase(),
      apiKey: op.headers.apiKey!.toLowerCase(),
      messageHash: use.name.toLowerCase(),
    };
    const account = {
      id: sandbox.merchantUUID,
      apiKey: sandbox.apiKey,
      passphrase: options.passphrase ?? sandbox.passphrase,
    };
    const request = { params, query, body: body as Record<string, unknown> | undefined };
    Object.assign(headers, signHeaders(names, hashRecipes[use.recipe], account, request));
  }
  for (const [k, v] of Object.entries(options.headers ?? {})) {
    if (v === undefined) delete headers[k.toLowerCase()];
    else headers[k.toLowerCase()] = v;
  }
  return {
    verb: op.verb,
    url: search ? `${path}?${search}` : path,
    headers,
    body: body === undefined ? undefined : protocol.writeRequest(body as Record<string, unknown>),
  };
}

export const requestExamples = (op: ContractOperation): { name: string; value: Record<string, unknown> }[] =>
  op.examples.request.map((name: string) => ({ name, value: exampleValue(doc, name) as Record<string, unknown> }));

export const firstResultExample = (op: ContractOperation): unknown => {
  // An empty zip stands for the settlement file, whose example is not inline (it is binary).
  if (op.resultType === 'application/zip') return new Uint8Array([0x50, 0x4b, 0x05, 0x06, ...new Array(18).fill(0)]);
  return exampleValue(doc, op.examples.result[0]!);
};
