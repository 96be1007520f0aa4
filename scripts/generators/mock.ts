// The Prism mock configuration: for each operation (and each method of a shared path), the named
// example of its result that the mock's front asks Prism for, projected from the operation table.
import type { MockRoute, OperationModel } from '../../runtime/operation-model.ts';
import { BANNER } from './banner.ts';

export function mockConfig(entries: readonly OperationModel[]): string {
  const routes = entries.map(
    (op): MockRoute => ({
      operationId: op.operationId,
      verb: op.verb,
      path: op.path,
      method: op.method,
      example: op.examples.result[0]!,
      refusalExample: op.examples.refusal[0]!,
      // Prism cannot serve a binary example inline; the front answers with the file instead.
      ...(op.resultType === 'application/zip' ? { accept: op.resultType, file: `examples/${op.operationId}.zip` } : {}),
      ...(op.resultType === 'text/csv' ? { accept: op.resultType } : {}),
    }),
  );
  return `${JSON.stringify({ 'x-generated-by': BANNER, routes }, null, 2)}\n`;
}
