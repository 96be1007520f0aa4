// The GatewayHandlers interface: one method per operation, each typed with that operation's own
// request (branch) and result, which is all a server team implements.
import { tsHeader } from './banner.ts';
import type { TableEntry } from './operations.ts';
import { tsKey } from './ts.ts';

const S = (name: string) => `S[${JSON.stringify(name)}]`;

function resultType(e: TableEntry): string {
  // A zip may be streamed a chunk at a time (the stubs scan and send it as it comes).
  if (e.resultType === 'application/zip') return 'Uint8Array | AsyncIterable<Uint8Array>';
  if (e.resultType === 'text/csv') return 'string';
  const optional = e.resultHashes.map((h) => JSON.stringify(h.name));
  return optional.length ? `HandlerResult<${S(e.result)}, ${optional.join(' | ')}>` : S(e.result);
}

function inputType(e: TableEntry): string {
  const body = e.request ? S(e.request) : 'undefined';
  const has = (where: string) => e.parameters.some((p) => p.in === where);
  const params = has('path') ? `Ops[${JSON.stringify(e.operationId)}]['parameters']['path']` : 'NoParameters';
  const query = has('query')
    ? `NonNullable<Ops[${JSON.stringify(e.operationId)}]['parameters']['query']>`
    : 'NoParameters';
  return `HandlerInput<${body}, ${params}, ${query}>`;
}

function doc(e: TableEntry): string {
  const where = `${e.verb} ${e.path}${e.method ? `, method ${e.method}` : ''}`;
  const source = 'seed' in e.provenance ? `Seed ${e.provenance.seed}.` : `Inferred: ${e.provenance.inferred}`;
  return `  /** ${e.summary} (${where}). ${source.replace(/\*\//g, '*\\/')} */`;
}

export function handlersModule(entries: TableEntry[]): string {
  const lines = [
    tsHeader('GatewayHandlers: what an implementation of the gateway writes, one method per operation.').trimEnd(),
    "import type { components, operations as Ops } from './types.ts';",
    '',
    "type S = components['schemas'];",
    'type NoParameters = Record<string, never>;',
    '',
    '/** A result as a handler returns it: the hashes the server stubs add from the recipes may be left out. */',
    'export type HandlerResult<T, K extends keyof T> = Omit<T, K> & Partial<Pick<T, K>>;',
    '',
    '/** What a handler receives: the validated body (its own branch), path parameters and query. */',
    'export interface HandlerInput<Body, Params = NoParameters, Query = NoParameters> {',
    '  body: Body;',
    '  params: Params;',
    '  query: Query;',
    '}',
    '',
    'export type Answer<T> = T | Promise<T>;',
    '',
    '/** The mark of a refusal made by the refusal catalogue (server-stubs refusalFields); a type only, nothing at run time. */',
    'export declare const refusalMark: unique symbol;',
    '',
    '/**',
    " * A refusal as a handler returns it: made by the catalogue (server-stubs' refusalFields(), given an entry",
    " * of refusals or validationRefusals, or refuse(code, message) for a server's own business rule),",
    ' * whose codes are negative, never an object literal. A result missing one of its fields is then not',
    ' * mistaken for a refusal by the compiler: it fails to type-check instead of failing at run time.',
    ' */',
    'export type HandlerRefusal<R> = R & { readonly [refusalMark]: true };',
    '',
    '/**',
    ' * One method per operation. Each receives its own request, already validated and authenticated, and',
    ' * returns its own result or a refusal (responseCode below zero). Deprecated aliases are routed to the',
    ' * operation they repeat and have no method of their own.',
    ' */',
    'export interface GatewayHandlers<Context = unknown> {',
  ];
  for (const e of entries.filter((x) => !x.aliasOf)) {
    lines.push(
      doc(e),
      `  ${tsKey(e.operationId)}(input: ${inputType(e)}, context: Context): Answer<${resultType(e)} | HandlerRefusal<${S(e.refusal)}>>;`,
    );
  }
  lines.push('}', '', 'export type HandlerName = keyof GatewayHandlers;', '');
  return lines.join('\n');
}
