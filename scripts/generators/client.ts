// The typed client: createGatewayClient() with one function per operation, grouped as the tags'
// x-client says, each taking its own request (less what the client fills in) and returning its own
// result. The runtime (runtime/client.ts) gets a compact table of how to call and sign each one.
import type { ClientForm, ClientOperation } from '../../runtime/client.ts';
import type { RequestForm } from '../../runtime/forms.ts';
import type { RetryMark } from '../../runtime/retry.ts';
import type { Doc } from '../lib/contract.ts';
import { tsHeader } from './banner.ts';
import { credentialFields, type TableEntry } from './operations.ts';
import { tsKey } from './ts.ts';
import { protocolsOf } from '../lib/protocols.ts';

interface ClientTag {
  group: string;
  strip: string[];
}

export function clientName(op: { operationId: string }, tag: ClientTag): string {
  let name = op.operationId;
  for (const word of tag.strip) {
    if (name.startsWith(word)) name = name.slice(word.length);
    else name = name.replace(word, '');
  }
  return name.charAt(0).toLowerCase() + name.slice(1);
}

function tagOf(doc: Doc, op: { operationId: string; tags: readonly string[] }): ClientTag {
  const tag = doc.tags.find((t: { name: string }) => t.name === op.tags[0]);
  if (!tag?.['x-client']) throw new Error(`${op.operationId}: its tag has no x-client`);
  return tag['x-client'];
}

/**
 * The client's compact copy of a form (runtime/forms.ts's RequestForm): the fields the chooser reads
 * only where there is a choice, to keep the bundle small.
 */
function clientForm(form: RequestForm, multiple: boolean): ClientForm {
  return {
    ...(multiple ? { accepts: form.accepts, required: form.required } : {}),
    fill: form.fill,
    hashes: form.hashes,
  };
}

/** x-method.retry with the lookup operation named as the client names it (group and function). */
function retryOf(doc: Doc, entries: TableEntry[], retry: NonNullable<TableEntry['retry']>): RetryMark {
  if ('safe' in retry) return { safe: true };
  const lookup = entries.find((o) => o.operationId === retry.lookup);
  if (!lookup) throw new Error(`x-method.retry names no operation ${retry.lookup}`);
  return { lookup: { group: tagOf(doc, lookup).group, name: clientName(lookup, tagOf(doc, lookup)) }, by: retry.by };
}

/** The operations the client calls (aliases aside), each projected from its entry of the operation table. */
export function clientTable(doc: Doc, entries: TableEntry[]): ClientOperation[] {
  return entries
    .filter((entry) => !entry.aliasOf)
    .map((entry) => {
      const tag = tagOf(doc, entry);
      const forms = entry.requestForms ?? [];
      const header = entry.hashes.find((h) => h.in === 'header');
      return {
        group: tag.group,
        name: clientName(entry, tag),
        verb: entry.verb,
        path: entry.path,
        ...(entry.method ? { method: entry.method } : {}),
        ...(entry.resultType !== protocolsOf(doc).canonical.answerType
          ? { result: entry.resultType === 'application/zip' ? 'zip' : 'csv' }
          : {}),
        ...(entry.parameters.some((p) => p.in === 'path')
          ? { params: entry.parameters.filter((p) => p.in === 'path').map((p) => p.name) }
          : {}),
        ...(entry.parameters.some((p) => p.in === 'query') ? { query: true } : {}),
        ...(forms.length ? { forms: forms.map((f) => clientForm(f, forms.length > 1)) } : {}),
        ...(entry.headers && header ? { headers: { ...entry.headers, recipe: header.recipe } } : {}),
        ...(entry.retry ? { retry: retryOf(doc, entries, entry.retry) } : {}),
      };
    });
}

function signature(doc: Doc, entry: TableEntry): string {
  const S = (name: string) => `S[${JSON.stringify(name)}]`;
  const args: string[] = [];
  for (const p of entry.parameters.filter((x) => x.in === 'path')) args.push(`${p.name}: string`);
  if (entry.request) {
    const fills = [
      ...new Set([
        ...(entry.method ? ['method'] : []),
        ...credentialFields(doc, entry.credentials),
        ...entry.hashes.filter((h) => h.in !== 'header').map((h) => h.name),
      ]),
    ];
    args.push(
      fills.length
        ? `body: ClientBody<${S(entry.request)}, ${fills.map((f) => JSON.stringify(f)).join(' | ')}>`
        : `body: ${S(entry.request)}`,
    );
  }
  if (entry.parameters.some((p) => p.in === 'query'))
    args.push(`query?: NonNullable<Ops[${JSON.stringify(entry.operationId)}]['parameters']['query']>`);
  const result =
    entry.resultType === 'application/zip'
      ? 'Uint8Array'
      : entry.resultType === 'text/csv'
        ? 'string'
        : S(entry.result);
  return `(${args.join(', ')}): Promise<${result} | ${S(entry.refusal)}>`;
}

export function clientModule(doc: Doc, entries: TableEntry[]): string {
  const table = clientTable(doc, entries);
  const groups = new Map<string, string[]>();
  for (const entry of entries.filter((e) => !e.aliasOf)) {
    const tag = tagOf(doc, entry);
    const docLine = `/** ${entry.summary}: ${entry.verb} ${entry.path}${entry.method ? `, method ${entry.method}` : ''}. */`;
    const line = `${docLine}\n${tsKey(clientName(entry, tag))}${signature(doc, entry)};`;
    groups.set(tag.group, [...(groups.get(tag.group) ?? []), line]);
  }
  const indent = (text: string, n: number) =>
    text
      .split('\n')
      .map((l) => ' '.repeat(n) + l)
      .join('\n');
  const body: string[] = [];
  for (const line of groups.get('') ?? []) body.push(indent(line, 2));
  for (const [group, lines] of groups) {
    if (!group) continue;
    body.push(`  ${group}: {`, ...lines.map((l) => indent(l, 4)), '  };');
  }
  return [
    tsHeader('The typed client: one function per operation, its own request in, its own result out.').trimEnd(),
    "import type { components, operations as Ops } from './types.ts';",
    "import { buildClient, type ClientBody, type ClientOperation, type ClientOptions } from '../runtime/client.ts';",
    "import { hashRecipes } from './hash-recipes.ts';",
    '',
    "type S = components['schemas'];",
    '',
    `const operations: readonly ClientOperation[] = ${JSON.stringify(table)};`,
    '',
    `const contract = { operations, recipes: hashRecipes, apiVersion: ${JSON.stringify({ name: doc.components.parameters.ApiVersion.name, value: doc.components.parameters.ApiVersion.schema.const })}, credentials: ${JSON.stringify(doc['x-body-credentials'])}, answerType: ${JSON.stringify(protocolsOf(doc).canonical.answerType)} } as const;`,
    '',
    '/** Every operation of the gateway. Refusals (responseCode below 0) are results; network and HTTP failures throw. */',
    'export interface GatewayClient {',
    ...body,
    '}',
    '',
    '/** A client for the gateway at options.baseUrl that fills in method, credentials, hashes and the version header. */',
    'export function createGatewayClient(options: ClientOptions): GatewayClient {',
    '  return buildClient(options, contract) as unknown as GatewayClient;',
    '}',
    '',
    "export { GatewayHttpError, GatewayNetworkError, customFields, isApproved, isDeclined, isRefused, type ClientOptions, type Middleware } from '../runtime/client.ts';",
    "export { GatewayOutcomeUnknownError, isLostAnswer, recoveredBy, type RetryEvent, type RetryPolicy } from '../runtime/retry.ts';",
    '',
  ].join('\n');
}
