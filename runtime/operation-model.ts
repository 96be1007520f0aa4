// The one shape of an operation of the contract. generated/operations.ts instantiates it with the
// contract's own names (ContractOperation); the generator that writes the table builds its entries
// against it, so the shape is declared once. The type parameters default to string for code that
// handles any contract (the generator, before the names exist).
import type { RequestForm } from './forms.ts';
import type { OperationShapes } from './protocols/protocol.ts';

/** The kinds of body credential (x-body-credentials). */
export type Credential = 'merchant' | 'partner' | 'accessToken';

export interface OperationModel<
  Id extends string = string,
  Recipe extends string = string,
  Role extends string = string,
  TagName extends string = string,
> {
  operationId: Id;
  summary: string;
  verb: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** The OpenAPI path template. */
  path: string;
  /** The body's `method` value on a shared path. */
  method: string | null;
  /** The success status; refusals are answered with it too. */
  status: number;
  /** Request body schema (component name); its `forms` when the method takes several. */
  request: string | null;
  forms: readonly string[] | null;
  /** Each form (the request itself when it has one) as the form chooser, runtime/forms.ts, reads it. */
  requestForms: readonly RequestForm<Recipe, Credential>[] | null;
  /** Every body field a form of the request declares; any other field is unknown (see x-unknown-fields). */
  fields: readonly string[] | null;
  /** Body fields read upper-cased whatever case they come in (x-normalise). */
  normalise: Readonly<Record<string, 'uppercase'>> | null;
  /** The wire formats it is served in (x-wire-formats ids, in the spec's order: the spec's own first). */
  protocols: readonly string[];
  /** What its request, result and refusal make of a value carried as text (runtime/protocols/). */
  shapes: OperationShapes;
  parameters: readonly { name: string; in: 'path' | 'query'; required: boolean; example?: string }[];
  result: string;
  /**
   * The result's media type: the spec's own (a structured answer, written in the caller's protocol),
   * or a file's (application/zip, text/csv: the same bytes in every protocol).
   */
  resultType: string;
  refusal: string;
  refusalCode: 'string' | 'integer';
  credentials: readonly Credential[];
  /** Header credentials by role: accountId, apiKey, messageHash → header name. */
  headers: Readonly<Partial<Record<Role, string>>> | null;
  hashes: readonly { in: 'body' | 'header'; name: string; recipe: Recipe }[];
  resultHashes: readonly { name: string; recipe: Recipe }[];
  maxBodyBytes: number;
  deprecated: boolean;
  aliasOf: Id | null;
  webhooks: readonly string[];
  /**
   * How a client may retry it after a lost answer (x-method.retry): safe to send again, or look the
   * transaction up with `lookup` by the request field `by` first. null: never resent automatically.
   */
  retry: { safe: true } | { lookup: string; by: string } | null;
  /** Names of its examples in the bundled document, by role. */
  examples: { request: readonly string[]; result: readonly string[]; refusal: readonly string[] };
  provenance: { seed: string } | { inferred: string };
  tags: readonly TagName[];
}

/** A route of generated/mock.json: an operation of the table and the examples the mock's front asks Prism for. */
export interface MockRoute extends Pick<OperationModel, 'operationId' | 'verb' | 'path' | 'method'> {
  example: string;
  refusalExample: string;
  /** The content type to ask for, where the result is not JSON. */
  accept?: string;
  /** A binary result is answered from this file (Prism cannot serve it inline). */
  file?: string;
}
