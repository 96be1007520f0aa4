// Ajv (draft 2020-12) with ajv-formats, for the sandbox's few validators made from schemas at run
// time (the control API's requests, a batch file's lines, a triggered notification's overrides):
// loaded when the first of them is made, not when the sandbox is imported. Most runs never make one,
// and the two packages were about 150 of the some 280 modules a sandbox's start loaded.
import { createRequire } from 'node:module';
import type { Ajv2020, Options } from 'ajv/dist/2020.js';

const nodeRequire = createRequire(import.meta.url);

/** A new Ajv 2020 with the formats added: ajv and ajv-formats loaded on the first call. */
export function newAjv(options: Options): Ajv2020 {
  const { Ajv2020: Ajv } = nodeRequire('ajv/dist/2020.js') as typeof import('ajv/dist/2020.js');
  const addFormats = nodeRequire('ajv-formats') as typeof import('ajv-formats');
  const ajv = new Ajv(options);
  addFormats.default(ajv);
  return ajv;
}
