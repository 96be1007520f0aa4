// Small helpers for writing TypeScript source.
import { schemaName } from '../lib/contract.ts';

/** An object key, quoted only when it must be. */
export const tsKey = (key: string): string => (/^[A-Za-z_$][\w$]*$/.test(key) ? key : JSON.stringify(key));

/** The openapi-typescript type of a component schema, by pointer. */
export const schemaType = (pointer: string | undefined): string =>
  pointer ? `components['schemas'][${JSON.stringify(schemaName(pointer))}]` : 'never';
