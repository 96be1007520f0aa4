// Reading the bundled document: JSON pointers, $refs, and examples by name wherever the document
// keeps them (components for the shared paths' methods, inline for the other operations).
import type { WireFormatDeclaration } from './protocols/protocol.ts';
import type { OpenAPIV3_1 } from 'openapi-types';
import type { HashRecipes } from './signing.ts';

/** The contract's body credentials by kind (x-body-credentials): the fields that carry each. */
export type BodyCredentials = Readonly<
  Record<
    string,
    | { account: 'merchant' | 'partner'; id: string; key: string; token?: undefined }
    | { account: 'merchant' | 'partner'; token: string; id?: undefined; key?: undefined }
  >
>;

/** What the contract adds at the root of an OpenAPI document (spec/extensions/; README, "the extensions"). */
export interface ContractExtensions {
  'x-generated-by'?: string;
  'x-tagGroups'?: { name: string; tags: string[] }[];
  'x-hash-recipes': HashRecipes;
  'x-body-credentials': BodyCredentials;
  'x-unknown-fields': { policy: 'ignore' | 'refuse'; 'x-inferred'?: string };
  'x-limits': { maxBodyBytes: number; 'x-inferred'?: string };
  /** How a notification is delivered: the post's time-out, and the waits before each retry. */
  'x-notification-delivery': { timeoutSeconds: number; retryAfterMinutes: number[]; 'x-inferred'?: string };
  /** The wire formats, each served by runtime/protocols/<id>.ts: the spec's own first. */
  'x-wire-formats': Record<string, WireFormatDeclaration>;
  /**
   * The published document's exact request schemas, by name: those its request bodies' tolerant
   * copies are made of, which no operation uses as sent (runtime/exact-requests.ts).
   */
  'x-exact-requests'?: Record<string, Record<string, any>>;
}

/** A tag with the typed client's placement of its operations (x-client). */
export type ContractTag = OpenAPIV3_1.TagObject & { 'x-client'?: { group: string; strip: string[] } };

/**
 * The bundled document: OpenAPI 3.1 as openapi-types declares it, with the contract's extensions at
 * the root, on info (x-sandbox) and on tags (x-client). Paths, webhooks and components stay loose
 * (`any`): they are walked by JSON pointer (resolvePointer) and by the extensions inside them, whose
 * own schemas (spec/extensions/*.schema.yaml) a test holds them to.
 */
export interface Doc
  extends Omit<OpenAPIV3_1.Document, 'info' | 'tags' | 'paths' | 'webhooks' | 'components'>,
    ContractExtensions {
  info: OpenAPIV3_1.InfoObject & {
    'x-sandbox': {
      merchantUUID: string;
      partnerUUID: string;
      apiKey: string;
      passphrase: string;
      /** The approved test card: the request fields it is sent in. */
      testCard: { paymentCardNumber: string; paymentCardExpiry: string; paymentCardCSC: string };
      /** A customer to pay with it: the request fields. */
      customer: Record<
        'customerName' | 'customerCountry' | 'customerState' | 'customerCity' | 'customerAddress' | 'customerPostCode',
        string
      >;
    };
  };
  tags: ContractTag[];
  paths: Record<string, any>;
  webhooks: Record<string, any>;
  components: { [K in 'schemas' | 'examples' | 'parameters' | 'securitySchemes' | 'responses']: Record<string, any> };
  servers: OpenAPIV3_1.ServerObject[];
}

/** Any object of the document reached by pointer or walk: loose on purpose (see Doc). */
export type DocNode = Record<string, any>;

export function resolvePointer(doc: Doc, pointer: string): any {
  if (!pointer.startsWith('#/')) throw new Error(`Not a local pointer: ${pointer}`);
  return pointer
    .slice(2)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((node: any, key) => (node === undefined ? undefined : node[key]), doc);
}

export function deref(doc: Doc, node: any): any {
  return node && typeof node.$ref === 'string' ? deref(doc, resolvePointer(doc, node.$ref)) : node;
}

/**
 * Each document's inline examples by name, found by one walk of its paths, webhooks and responses, in
 * the walk's order, as written (a $ref or the example itself, followed when read). A walk reads the
 * whole document (12 ms); the contract suite asked for an inline example 100 times a run.
 */
const inlineExamples = new WeakMap<Doc, Map<string, unknown[]>>();
function inlineExampleNodes(doc: Doc): Map<string, unknown[]> {
  let found = inlineExamples.get(doc);
  if (found) return found;
  const index = new Map<string, unknown[]>();
  const visit = (node: any): void => {
    if (!node || typeof node !== 'object') return;
    if (node.examples && typeof node.examples === 'object')
      for (const [name, example] of Object.entries(node.examples)) {
        if (!example) continue;
        const same = index.get(name);
        if (same) same.push(example);
        else index.set(name, [example]);
      }
    for (const v of Object.values(node)) visit(v);
  };
  visit({ paths: doc.paths, webhooks: doc.webhooks, responses: doc.components?.responses });
  found = index;
  inlineExamples.set(doc, found);
  return found;
}

/** The example objects of an operation, by name, wherever the document keeps them. */
export function exampleValue(doc: Doc, name: string): unknown {
  const example = doc.components?.examples?.[name];
  if (example) return example.value;
  // Examples written inline (standalone operations) are not moved to components by the bundler.
  // The first of that name that has a value.
  for (const inline of inlineExampleNodes(doc).get(name) ?? []) {
    const value = deref(doc, inline).value;
    if (value !== undefined) return value;
  }
  return undefined;
}

/**
 * A copy of the document with only the spec's own media types: without those of the wire formats
 * added on some paths (x-wire-formats with `paths`: the form/XML mode's), which are $refs to the
 * spec's own schemas by path pointer that some tools cannot follow (openapi-typescript,
 * openapi-backend), and describe no new shape. For tools that speak the spec's own format only.
 */
export function canonicalOnly<D extends Doc>(doc: D): D {
  const copy = structuredClone(doc);
  for (const format of Object.values(copy['x-wire-formats'] ?? {})) {
    if (!format.paths) continue;
    for (const path of format.paths)
      for (const op of Object.values<DocNode>(copy.paths[path] ?? {})) {
        if (op?.requestBody?.content) delete op.requestBody.content[format.request];
        for (const response of Object.values<DocNode>(op?.responses ?? {}))
          if (response.content) delete response.content[format.answer];
      }
  }
  return copy;
}
