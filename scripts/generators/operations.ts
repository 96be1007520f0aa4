// The operation table: every operation with what a server, a client or a test needs to route it,
// validate it, authenticate it and answer it, read from the descriptors (x-methods, x-operation).
import { resolvePointer, schemaName, type Doc, type Operation } from '../lib/contract.ts';
import type { RequestForm } from '../../runtime/forms.ts';
import type { OperationModel } from '../../runtime/operation-model.ts';
import { tsHeader } from './banner.ts';
import { declarations, protocolsOf } from '../lib/protocols.ts';
import { namedShape, shapeOf } from './shapes.ts';

/** An entry of the table: the one operation shape (runtime/operation-model.ts), with any names. */
export type TableEntry = OperationModel;

/** Which JSON type a refusal's responseCode is sent as: the first its schema allows. */
function refusalCodeType(doc: Doc, refusal: string): 'string' | 'integer' {
  let code = resolvePointer(doc, refusal).properties.responseCode;
  while (code.$ref) code = resolvePointer(doc, code.$ref);
  const first = Array.isArray(code.type) ? code.type[0] : code.type;
  if (first !== 'string' && first !== 'integer')
    throw new Error(`${refusal}: responseCode must be a string or an integer`);
  return first;
}

/** The operation's header credentials by role (accountId, apiKey, messageHash) → header name, from its security schemes. */
function headerCredentials(doc: Doc, op: Operation): Record<string, string> | null {
  if (!op.security.length) return null;
  const schemes = doc.components.securitySchemes;
  return Object.fromEntries(op.security.map((name) => [schemes[name]['x-credential'], schemes[name].name]));
}

/** Every body field some form of the request declares, sorted: what the gateway reads; the rest it ignores. */
function knownFields(doc: Doc, schemas: string[]): string[] {
  const names = new Set<string>();
  for (const name of schemas)
    for (const field of Object.keys(resolvePointer(doc, `#/components/schemas/${name}`).properties ?? {}))
      names.add(field);
  return [...names].sort();
}

/** Body fields whose type carries x-normalise (the gateway reads them upper-cased), or null when none does. */
function normalisedFields(doc: Doc, schemas: string[]): Record<string, 'uppercase'> | null {
  const found: Record<string, 'uppercase'> = {};
  for (const name of schemas) {
    for (const [field, property] of Object.entries<{ $ref?: string }>(
      resolvePointer(doc, `#/components/schemas/${name}`).properties ?? {},
    )) {
      let schema: Record<string, unknown> = property;
      while (typeof schema.$ref === 'string') schema = resolvePointer(doc, schema.$ref);
      if (schema['x-normalise'] === 'uppercase') found[field] = 'uppercase';
    }
  }
  return Object.keys(found).length ? found : null;
}

/** Fields of a body a credential kind fills in (x-body-credentials), tokens aside. */
export function credentialFields(doc: Doc, kinds: readonly string[]): string[] {
  return kinds.flatMap((k) => {
    const c = doc['x-body-credentials'][k]!;
    return c.token === undefined ? [c.id, c.key] : [];
  });
}

/** One form of a request as the form chooser (runtime/forms.ts) and the signers read it. */
function requestForm(doc: Doc, op: Operation, name: string): RequestForm {
  const schema = resolvePointer(doc, `#/components/schemas/${name}`);
  const accepts = Object.keys(schema.properties ?? {});
  const fill = (op.credentials ?? []).filter((k) => {
    const c = doc['x-body-credentials'][k]!;
    return c.token === undefined && accepts.includes(c.id);
  });
  const fillable = new Set(['method', ...credentialFields(doc, fill), ...(op.hashes ?? []).map((h) => h.name)]);
  const hashes = (op.hashes ?? [])
    .filter((h) => h.in !== 'header' && accepts.includes(h.name))
    .map((h) => {
      // A hash the schema requires only once some field is sent (dependentRequired) is made only then.
      const required = (schema.required ?? []).includes(h.name);
      const when = Object.entries<string[]>(schema.dependentRequired ?? {})
        .filter(([, needs]) => needs.includes(h.name))
        .map(([field]) => field);
      return { name: h.name, recipe: h.recipe, ...(required || !when.length ? {} : { when }) };
    });
  const unless = unlessOf(schema);
  return {
    schema: name,
    accepts,
    required: (schema.required ?? []).filter((f: string) => !fillable.has(f)),
    fill,
    hashes,
    ...(unless ? { unless } : {}),
  };
}

/**
 * The fields a schema requires only when none of others is sent: `if: {not: {required: [a]}}` (or
 * `{not: {anyOf: [{required: [a]}, {required: [b]}]}}`), `then: {required: [...]}`; each with those others.
 */
function unlessOf(schema: any): Record<string, string[]> | undefined {
  const not = schema.if?.not;
  const branches: any[] | undefined = not?.anyOf ?? (not ? [not] : undefined);
  const needed: string[] = schema.then?.required ?? [];
  if (!branches?.length || !needed.length || schema.else !== undefined) return undefined;
  const others: string[] = [];
  for (const branch of branches) {
    if (!Array.isArray(branch.required) || branch.required.length !== 1) return undefined;
    others.push(branch.required[0]);
  }
  return Object.fromEntries(needed.map((field) => [field, others]));
}

export function tableEntries(doc: Doc, ops: Operation[]): TableEntry[] {
  const defaultLimit: number = doc['x-limits'].maxBodyBytes;
  return ops
    .filter((op) => !op.webhook)
    .map((op): TableEntry => {
      const request = op.request ? schemaName(op.request) : null;
      const forms = op.request
        ? (resolvePointer(doc, op.request).oneOf?.map((f: { $ref: string }) => schemaName(f.$ref)) ?? null)
        : null;
      const fields = request ? knownFields(doc, forms ?? [request]) : null;
      const normalise = request ? normalisedFields(doc, forms ?? [request]) : null;
      return {
        operationId: op.operationId,
        summary: op.summary,
        verb: op.verb.toUpperCase() as Uppercase<typeof op.verb>,
        path: op.path,
        method: op.method ?? null,
        status: op.status,
        request,
        forms,
        requestForms: request ? (forms ?? [request]).map((name: string) => requestForm(doc, op, name)) : null,
        fields,
        normalise,
        protocols: declarations(doc)
          .filter(([, d]) => d.paths === undefined || d.paths.includes(op.path))
          .map(([id]) => id),
        shapes: {
          request: request
            ? shapeOf(doc, { anyOf: (forms ?? [request]).map((n: string) => ({ $ref: `#/components/schemas/${n}` })) })
            : null,
          result: namedShape(doc, schemaName(op.result!)),
          refusal: namedShape(doc, schemaName(op.refusal!)),
        },
        parameters: op.parameters,
        result: schemaName(op.result!),
        resultType: op.resultType ?? protocolsOf(doc).canonical.answerType,
        refusal: schemaName(op.refusal!),
        refusalCode: refusalCodeType(doc, op.refusal!),
        credentials: op.credentials ?? [],
        headers: headerCredentials(doc, op),
        hashes: (op.hashes ?? []).map((h) => ({ in: h.in ?? 'body', name: h.name, recipe: h.recipe })),
        resultHashes: (op.resultHashes ?? []).map((h) => ({ name: h.name, recipe: h.recipe })),
        maxBodyBytes: op.maxBodyBytes ?? defaultLimit,
        deprecated: op.deprecated,
        aliasOf: op.aliasOf ?? null,
        webhooks: op.webhooks ?? [],
        retry: op.retry ?? null,
        examples: {
          request: op.examples.request,
          result: op.examples.result ?? [],
          refusal: op.examples.refusal ?? [],
        },
        provenance: op.seed ? { seed: op.seed } : { inferred: op.inferred! },
        tags: op.tags,
      };
    });
}

/** A union of string literal types, sorted and without repeats. */
const union = (names: string[]): string =>
  [...new Set(names)]
    .sort()
    .map((n) => JSON.stringify(n))
    .join(' | ') || 'never';

function apiVersionHeader(doc: Doc): { name: string; value: string } {
  const p = doc.components.parameters.ApiVersion;
  return { name: p.name, value: p.schema.const };
}

export function operationsModule(doc: Doc, ops: Operation[]): string {
  const entries = tableEntries(doc, ops);
  return [
    tsHeader(
      "The operation table: each operation's route, schemas, credentials, hashes and provenance (from x-methods and x-operation).",
    ).trimEnd(),
    '',
    "import type { OperationModel } from '../runtime/operation-model.ts';",
    "import type { HashRecipeName } from './hash-recipes.ts';",
    '',
    `export const apiVersion = ${JSON.stringify(apiVersionHeader(doc))} as const;`,
    '',
    '/** Which body fields carry each kind of body credential (x-body-credentials). */',
    `export const bodyCredentials = ${JSON.stringify(doc['x-body-credentials'], null, 2)} as const;`,
    '',
    `export const defaultMaxBodyBytes = ${doc['x-limits'].maxBodyBytes};`,
    '',
    '/** Shared paths that also take the method as a last path segment, POST {path}/{method} (x-method-in-path). */',
    `export const methodInPath: readonly string[] = ${JSON.stringify(Object.keys(doc.paths).filter((p) => doc.paths[p].post?.['x-method-in-path']))};`,
    '',
    '/** What the gateway does with a body field no form of the operation declares (x-unknown-fields). */',
    `export const unknownFieldsPolicy: 'ignore' | 'refuse' = ${JSON.stringify(doc['x-unknown-fields'].policy)};`,
    '',
    '/** Every operationId of the contract (webhooks aside). */',
    `export type OperationId = ${union(entries.map((e) => e.operationId))};`,
    '',
    '/** The roles a header credential plays (x-credential on the security schemes). */',
    `export type HeaderRole = ${union(Object.values<{ 'x-credential': string }>(doc.components.securitySchemes).map((s) => s['x-credential']))};`,
    '',
    '/** The tags operations are grouped by in the docs. */',
    `export type Tag = ${union((doc.tags ?? []).map((t: { name: string }) => t.name))};`,
    '',
    "/** An operation of this contract: the one operation shape with the contract's own names. */",
    'export type ContractOperation = OperationModel<OperationId, HashRecipeName, HeaderRole, Tag>;',
    '',
    `export const operations: readonly ContractOperation[] = ${JSON.stringify(entries, null, 2)};`,
    '',
  ].join('\n');
}
