// Loads the bundled contract once for the tests, with an Ajv (draft 2020-12 + formats) that can
// validate against any schema of it by pointer.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import YAML from 'yaml';
import { withExactSchemas } from '../../runtime/exact-requests.ts';
import { contractOperations, type Doc } from '../../scripts/lib/contract.ts';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** generated/openapi.json as the package reads it: its exact request schemas among the components. */
export const doc: Doc = withExactSchemas(JSON.parse(readFileSync(path.join(ROOT, 'generated/openapi.json'), 'utf8')));
export const operations = contractOperations(doc);

/** The contract suite's credentials for the sandbox's own accounts (info.x-sandbox): merchant and partner. */
export function sandboxCredentials() {
  const s = doc.info['x-sandbox'];
  return {
    merchantUUID: s.merchantUUID,
    apiKey: s.apiKey,
    passphrase: s.passphrase,
    partnerUUID: s.partnerUUID,
    partnerApiKey: s.apiKey,
    partnerPassphrase: s.passphrase,
  };
}

export function readYaml(relative: string): any {
  return YAML.parse(readFileSync(path.join(ROOT, relative), 'utf8'));
}

/** An ajv holding a document as 'openapi.json' (by default the package's reading of it). */
export function createAjv(document: Doc = doc): Ajv2020 {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats.default(ajv);
  ajv.addFormat('binary', true);
  ajv.addSchema(document, 'openapi.json');
  return ajv;
}

const ajv = createAjv();
const cache = new Map<string, ValidateFunction>();

/** A validator for the schema at `pointer` ('#/components/schemas/X', or any JSON pointer). */
export function validatorFor(pointer: string): ValidateFunction {
  let v = cache.get(pointer);
  if (!v) {
    v = ajv.getSchema(`openapi.json${pointer}`);
    if (!v) throw new Error(`No schema at ${pointer}`);
    cache.set(pointer, v);
  }
  return v;
}

export function errorsOf(v: ValidateFunction): string {
  return (v.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message}`).join('; ');
}
