// The generated contract data the core runs on: the operation table and the precompiled validators.
// Loaded through the package's own exports, so the same code runs from source, from dist/ and from
// node_modules (Ajv's standalone code is CommonJS).
import { createRequire } from 'node:module';
import type { ValidateFunction } from 'ajv';

const require = createRequire(import.meta.url);

export const requestValidators = require('payment-gateway-contract/validators/requests') as Readonly<
  Record<string, ValidateFunction>
>;
export const resultValidators = require('payment-gateway-contract/validators/results') as Readonly<
  Record<string, ValidateFunction>
>;

/** Absolute path of a file the package exports, e.g. 'openapi.json'. */
export const packageFile = (name: string): string => require.resolve(`payment-gateway-contract/${name}`);

export {
  apiVersion,
  bodyCredentials,
  defaultMaxBodyBytes,
  methodInPath,
  operations,
  unknownFieldsPolicy,
} from '../../generated/operations.ts';
export { hashRecipes } from '../../generated/hash-recipes.ts';
export { protocols } from '../../generated/protocols.ts';
