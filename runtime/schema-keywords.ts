// The contract's own JSON Schema keywords, compiled into the generated validators (and into any Ajv
// that validates the contract's schemas): one definition, so that each rule is written once.
//
// x-decimals: N — a JSON number written with at most N decimals. Whole cents (N = 2) cannot be said in
// plain JSON Schema: `multipleOf: 0.01` divides in binary floats (0.29 / 0.01 is 28.999999999999996), so
// validators that follow it literally (Prism's, Ajv's own) refuse valid amounts. A number has at most
// N decimals when the shortest decimal that reads back as it (what JSON carried) has at most N digits
// after the point, which is when rounding it to N decimals gives it back.
import type { KeywordDefinition } from 'ajv';
import { _, str } from 'ajv/dist/compile/codegen/index.js';

export const decimalsKeyword: KeywordDefinition = {
  keyword: 'x-decimals',
  type: 'number',
  schemaType: 'number',
  // 2 decimals: whole cents of the major unit, the gateway's smallest amount.
  error: { message: ({ schema }) => str`must have at most ${schema} decimals` },
  code(cxt) {
    const { data, schema } = cxt;
    cxt.fail(_`Number(${data}.toFixed(${schema})) !== ${data}`);
  },
};

/** Adds the contract's keywords to an Ajv instance. */
export function addContractKeywords(ajv: { addKeyword(definition: KeywordDefinition): unknown }): void {
  ajv.addKeyword(decimalsKeyword);
}
