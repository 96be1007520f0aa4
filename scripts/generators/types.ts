// Types of every path, operation and component, by openapi-typescript.
import openapiTS, { astToString } from 'openapi-typescript';
import type { Doc } from '../lib/contract.ts';
import { jsonModeOnly } from '../../runtime/document.ts';
import { tsHeader } from './banner.ts';

export async function typesModule(doc: Doc): Promise<string> {
  // arrayLength: the empty custom-field echo (maxItems 0) becomes the exact type [].
  // defaultNonNullable off: a request field with a default (getSettlement's version) may be left out.
  // A copy: openapi-typescript writes into the document it is given (each discriminated schema's
  // property gets "discriminator enum property added by openapi-typescript"), and the generators
  // after it (the docs, the validators) must see the spec as written. The form/XML mode's media types
  // are left out: openapi-typescript cannot follow their path $refs, and the typed client speaks the
  // JSON mode.
  const ast = await openapiTS(structuredClone(jsonModeOnly(doc)) as never, {
    arrayLength: true,
    alphabetize: false,
    exportType: false,
    defaultNonNullable: false,
  });
  return `${tsHeader('Types of every path, operation and component (openapi-typescript).')}${astToString(ast)}`;
}
