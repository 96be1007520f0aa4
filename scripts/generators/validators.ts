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

/** One kind of validators (requests or results): the index module, and each validator's own module. */
export interface ValidatorModules {
  /** The index: one property per validator, read from its own module when first asked for. */
  index: string;
  /** Each validator's module by its name: `<kind>/<name>.cjs` beside the index. */
  modules: Record<string, string>;
}

/** The helper both indexes require (validators/lazy.cjs): one property of `target` read from its module on first use. */
function lazyModule(header: string): string {
  return [
    header.trimEnd(),
    '"use strict";',
    'function plain(target, name, value) {',
    '  Object.defineProperty(target, name, { enumerable: true, configurable: true, writable: true, value });',
    '}',
    'exports.lazy = function lazy(target, name, load) {',
    '  let validate;',
    '  Object.defineProperty(target, name, {',
    '    enumerable: true,',
    '    configurable: true,',
    '    get() {',
    '      if (validate === undefined) {',
    '        validate = load()[name];',
    '        try {',
    '          plain(target, name, validate);',
    '        } catch {',
    '          // A frozen index: the getter stays, and answers from the closure.',
    '        }',
    '      }',
    '      return validate;',
    '    },',
    '    set(value) {',
    '      plain(target, name, value);',
    '    },',
    '  });',
    '};',
    '',
  ].join('\n');
}

/**
 * The index of one kind: each validator is required from its own module on first use, then kept as
 * a plain property, writable as the old single module's were (a team may wrap one). A server answering
 * one operation compiles only that operation's validators, not the 2 MB of them all (the cold start's
 * CPU, npm run bench -- --baseline: 80 ms so, 100 ms when one module held them all). An index frozen
 * by its user still reads: the validator is kept in the closure whether or not the property could be
 * replaced. Only require() is lazy: an ES import builds the module's namespace, which reads every
 * name. The last line is never run: it lists the names in the form Node's CommonJS reader
 * (cjs-module-lexer) finds, so that an ES module may import them by name.
 */
function indexModule(header: string, kind: string, names: string[]): string {
  return [
    header.trimEnd(),
    '"use strict";',
    'const { lazy } = require("./lazy.cjs");',
    // A literal path in each require(), so that a bundler follows it.
    ...names.map((n) => `lazy(exports, ${JSON.stringify(n)}, () => require(${JSON.stringify(`./${kind}/${n}.cjs`)}));`),
    `0 && (module.exports = { ${names.join(', ')} });`,
    '',
  ].join('\n');
}

/** How Ajv's standalone code takes its helper that counts a string's code points (minLength, maxLength). */
const AJV_LENGTH = 'require("ajv/dist/runtime/ucs2length").default';
/**
 * The helper, read at once for a string without a high surrogate: its code points are its UTF-16
 * units. Ajv's counts character by character, and the contract suite's broken batchFile (4 MiB and
 * one) cost about 60 ms each time the suite or the server validated it (test/contract/validator-length.test.ts).
 */
const LENGTH = `((count) => (text) => (/[\\uD800-\\uDBFF]/.test(text) ? count(text) : text.length))(${AJV_LENGTH})`;

function modulesOf(ajv: Ajv2020, refs: Record<string, string>, header: string, kind: string): ValidatorModules {
  const names = Object.keys(refs).sort((a, b) => a.localeCompare(b));
  return {
    index: indexModule(header, kind, names),
    modules: Object.fromEntries(
      names.map((n) => [n, header + standaloneCode.default(ajv, { [n]: refs[n]! }).replaceAll(AJV_LENGTH, LENGTH)]),
    ),
  };
}

/** Names under which the validators are exported: schema names, and `<operationId>Parameters`. */
export function validatorSources(
  doc: Doc,
  entries: TableEntry[],
): {
  requests: ValidatorModules;
  results: ValidatorModules;
  lazy: string;
  names: { requests: string[]; results: string[] };
} {
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
  const header = `// ${BANNER}\n`;
  const requests = modulesOf(requestAjv, requestRefs, header, 'requests');
  const results = modulesOf(resultAjv, resultRefs, header, 'results');
  return {
    requests,
    results,
    lazy: lazyModule(header),
    names: { requests: Object.keys(requests.modules), results: Object.keys(results.modules) },
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
