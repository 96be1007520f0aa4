// Types of every path, operation and component, by openapi-typescript.
import openapiTS, { astToString } from 'openapi-typescript';
import type { Doc } from '../lib/contract.ts';
import { canonicalOnly } from '../../runtime/document.ts';
import { tsHeader } from './banner.ts';
import { withExactRequests } from './tolerant-requests.ts';

/**
 * The document as openapi-typescript should read it: an anyOf/oneOf branch that says no `type` of its
 * own takes its parent's (JSON Schema applies the parent's `type` to it anyway). Without this a branch
 * such as `{format: email}` becomes `unknown`, and Email, IpAddress and Country with it.
 */
export function withBranchTypes<T>(node: T): T {
  if (Array.isArray(node)) return node.map(withBranchTypes) as T;
  if (!node || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node)) out[k] = withBranchTypes(v);
  const type = out.type;
  if (typeof type === 'string')
    for (const key of ['anyOf', 'oneOf'])
      if (Array.isArray(out[key]))
        out[key] = (out[key] as Record<string, unknown>[]).map((branch) =>
          branch && typeof branch === 'object' && !('type' in branch) && !('$ref' in branch)
            ? { type, ...branch }
            : branch,
        );
  return out as T;
}

export async function typesModule(doc: Doc): Promise<string> {
  // arrayLength: the empty custom-field echo (maxItems 0) becomes the exact type [].
  // defaultNonNullable off: a request field with a default (getSettlement's version) may be left out.
  // A copy (withBranchTypes makes one): openapi-typescript writes into the document it is given (each
  // discriminated schema's property gets "discriminator enum property added by openapi-typescript"),
  // and the generators after it (the docs, the validators) must see the spec as written. The form/XML
  // mode's media types are left out: openapi-typescript cannot follow their path $refs, and the typed
  // client speaks the JSON mode. The request bodies are typed by their exact schemas, not by the
  // tolerant copies a validator reads them with (tolerant-requests.ts): the typed client sends exact requests.
  const ast = await openapiTS(withBranchTypes(canonicalOnly(withExactRequests(doc))) as never, {
    arrayLength: true,
    alphabetize: false,
    exportType: false,
    defaultNonNullable: false,
  });
  return `${tsHeader('Types of every path, operation and component (openapi-typescript).')}${astToString(ast)}`;
}
