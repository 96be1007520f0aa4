// Types of every path, operation and component, by openapi-typescript.
import openapiTS, { astToString } from 'openapi-typescript';
import type { Doc } from '../lib/contract.ts';
import { tsHeader } from './banner.ts';

/**
 * The document without the form/XML mode's media types (x-wire-formats): they are $refs to the JSON
 * mode's schemas by path pointer, which openapi-typescript cannot follow, and they type nothing new
 * (the typed client speaks the JSON mode).
 */
function jsonModeOnly(doc: Doc): Doc {
  const copy = structuredClone(doc);
  const form = copy['x-wire-formats'].form;
  for (const path of form.paths)
    for (const op of Object.values<any>(copy.paths[path] ?? {})) {
      if (op?.requestBody?.content) delete op.requestBody.content[form.request];
      for (const response of Object.values<any>(op?.responses ?? {}))
        if (response.content) delete response.content[form.answer];
    }
  return copy;
}

export async function typesModule(doc: Doc): Promise<string> {
  // arrayLength: the empty custom-field echo (maxItems 0) becomes the exact type [].
  // defaultNonNullable off: a request field with a default (getSettlement's version) may be left out.
  const ast = await openapiTS(jsonModeOnly(doc) as never, {
    arrayLength: true,
    alphabetize: false,
    exportType: false,
    defaultNonNullable: false,
  });
  return `${tsHeader('Types of every path, operation and component (openapi-typescript).')}${astToString(ast)}`;
}
