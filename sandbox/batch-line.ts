// A batch line is a stored-card purchase: the fields of /token's processCard, held to that request's
// own schema (the bundled contract's, compiled once), normalised as the gateway normalises them, and
// refused in the words the request would be refused in. No second copy of the field rules.
import type { ValidateFunction } from 'ajv/dist/2020.js';
import { holdsNul } from '../runtime/nul-text.ts';
import { addContractKeywords } from '../runtime/schema-keywords.ts';
import { normalised, operations, refusalFor, type Refusal, validationRefusals } from '../server-stubs/index.ts';
import { newAjv } from './ajv.ts';
import { sandboxRefusals as refusals } from './refusals.ts';

/** The request each line of a batch is run as. */
const LINE_OPERATION = 'tokenProcessCard';

export interface CheckedLine {
  fields: Record<string, string>;
  /** Why the line is refused, if it is. */
  refusal?: Refusal;
  /** The line's transactionReferenceID when it is a valid one (the results name the line by it). */
  reference?: string;
}

// One validator per document and columns, compiled on the first line checked and shared by every
// checker of the process (a sandbox makes two, a test file many sandboxes). The document is the
// bundled contract, whose schemas the generator's compile already held to the meta-schema: compiling
// that meta-schema again here cost each start a tenth of a second.
const lineValidators = new WeakMap<object, Map<string, ValidateFunction>>();

function lineValidator(spec: Record<string, any>, request: string, columns: readonly string[]): ValidateFunction {
  let byColumns = lineValidators.get(spec);
  if (!byColumns) {
    byColumns = new Map();
    lineValidators.set(spec, byColumns);
  }
  const key = columns.join(',');
  let validate = byColumns.get(key);
  if (!validate) {
    const ajv = newAjv({ strict: false, allErrors: true, validateSchema: false });
    addContractKeywords(ajv);
    ajv.addSchema(spec, 'openapi.json');
    validate = ajv.compile({
      type: 'object',
      required: [...columns],
      additionalProperties: false,
      properties: Object.fromEntries(
        columns.map((c) => [c, { $ref: `openapi.json#/components/schemas/${request}/properties/${c}` }]),
      ),
    });
    byColumns.set(key, validate);
  }
  return validate;
}

/** A checker of a batch file's lines (its cells, in the file's columns) against the line's request. */
export function batchLineChecker(
  spec: Record<string, any>,
  columns: readonly string[],
): (cells: string[]) => CheckedLine {
  const op = operations.find((o) => o.operationId === LINE_OPERATION)!;
  let validate: ValidateFunction | undefined;
  return (cells) => {
    validate ??= lineValidator(spec, op.request!, columns);
    const fields = normalised(op, Object.fromEntries(columns.map((c, i) => [c, cells[i] ?? '']))) as Record<
      string,
      string
    >;
    if (cells.length !== columns.length)
      return { refusal: refusals.batchLineShape(cells.length, columns.length), fields };
    // As the request's own fields: a NUL character is refused before the schema (runtime/nul-text.ts).
    const nul = columns.find((c) => holdsNul(fields[c]!));
    if (nul !== undefined)
      return {
        refusal: validationRefusals.nul(nul, 'Field'),
        fields,
        ...(holdsNul(fields.transactionReferenceID!) ? {} : { reference: fields.transactionReferenceID! }),
      };
    const valid: boolean = validate(fields);
    if (valid) return { fields, reference: fields.transactionReferenceID! };
    const errors = validate.errors ?? [];
    const referenceValid = !errors.some((e) => e.instancePath === '/transactionReferenceID');
    return {
      refusal: refusalFor(errors),
      fields,
      ...(referenceValid ? { reference: fields.transactionReferenceID! } : {}),
    };
  };
}
