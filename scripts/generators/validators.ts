// Precompiled validators (Ajv standalone code, JSON Schema 2020-12 + formats), so that a server
// compiles nothing at start-up: one per request branch and form, one per operation's parameters,
// one per result and refusal. CommonJS, because Ajv's standalone code requires its runtime helpers.
import { Ajv2020 } from 'ajv/dist/2020.js';
import { _ } from 'ajv/dist/compile/codegen/index.js';
import standaloneCode from 'ajv/dist/standalone/index.js';
import addFormats from 'ajv-formats';
import { addContractKeywords } from '../../runtime/schema-keywords.ts';
import type { Doc } from '../lib/contract.ts';
import { BANNER } from './banner.ts';
import type { TableEntry } from './operations.ts';
import { protocolsOf } from '../lib/protocols.ts';

const pointer = (...parts: string[]) =>
  `openapi.json#/${parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/')}`;

function newAjv(allErrors: boolean, doc: Doc): Ajv2020 {
  const ajv = new Ajv2020({
    // OpenAPI keywords (discriminator, example, x-…) sit beside JSON Schema ones.
    strict: false,
    allErrors,
    code: { source: true, formats: _`require("ajv-formats/dist/formats").fullFormats` },
  });
  addFormats.default(ajv);
  ajv.addFormat('binary', true);
  addContractKeywords(ajv);
  ajv.addSchema(doc, 'openapi.json');
  return ajv;
}

/** A schema for an operation's path and query parameters, as one object. */
function parametersSchema(doc: Doc, entry: TableEntry): object {
  const item = doc.paths[entry.path];
  const declared = [...(item.parameters ?? []), ...(item[entry.verb.toLowerCase()].parameters ?? [])];
  const properties: Record<string, object> = {};
  declared.forEach((p: any, i: number) => {
    const target = p.$ref ? doc.components.parameters[p.$ref.split('/').pop()] : p;
    if (target.in !== 'path' && target.in !== 'query') return;
    properties[target.name] = {
      $ref: p.$ref
        ? pointer('components', 'parameters', p.$ref.split('/').pop(), 'schema')
        : pointer('paths', entry.path, entry.verb.toLowerCase(), 'parameters', String(i), 'schema'),
    };
  });
  return { type: 'object', properties, required: entry.parameters.filter((p) => p.required).map((p) => p.name) };
}

/** Names under which the validators are exported: schema names, and `<operationId>Parameters`. */
export function validatorSources(
  doc: Doc,
  entries: TableEntry[],
): { requests: string; results: string; names: { requests: string[]; results: string[] } } {
  const requestAjv = newAjv(true, doc);
  const requestRefs: Record<string, string> = {};
  for (const e of entries) {
    for (const name of [e.request, ...(e.forms ?? [])])
      if (name) requestRefs[name] = pointer('components', 'schemas', name);
    if (e.parameters.length) {
      requestAjv.addSchema(parametersSchema(doc, e), `parameters-${e.operationId}`);
      requestRefs[`${e.operationId}Parameters`] = `parameters-${e.operationId}`;
    }
  }
  const resultAjv = newAjv(false, doc);
  const resultRefs: Record<string, string> = {};
  for (const e of entries) {
    for (const name of [e.refusal, e.resultType === protocolsOf(doc).canonical.answerType ? e.result : null])
      if (name) resultRefs[name] = pointer('components', 'schemas', name);
  }
  const sorted = (refs: Record<string, string>) =>
    Object.fromEntries(Object.entries(refs).sort(([a], [b]) => a.localeCompare(b)));
  const header = `// ${BANNER}\n`;
  return {
    requests: header + standaloneCode.default(requestAjv, sorted(requestRefs)),
    results: header + standaloneCode.default(resultAjv, sorted(resultRefs)),
    names: { requests: Object.keys(sorted(requestRefs)), results: Object.keys(sorted(resultRefs)) },
  };
}

/** Declarations for a validator module. */
export function validatorDeclarations(names: string[], what: string): string {
  return [
    `// ${BANNER}`,
    `// ${what}`,
    "import type { ValidateFunction } from 'ajv';",
    '',
    ...names.map((n) => `export declare const ${n}: ValidateFunction;`),
    '',
  ].join('\n');
}
