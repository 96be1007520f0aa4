// The method map: what OpenAPI cannot say by itself, each `method`'s own request, result and refusal.
import type { Operation } from '../lib/contract.ts';
import { tsHeader } from './banner.ts';
import { schemaType, tsKey } from './ts.ts';

/** The method map: for each shared path and method, that method's own request, result and refusal. */
export function methodsModule(ops: Operation[]): string {
  const byPath = new Map<string, Operation[]>();
  for (const op of ops.filter((o) => o.method && !o.webhook)) {
    byPath.set(op.path, [...(byPath.get(op.path) ?? []), op]);
  }
  const entry = (op: Operation, indent: string): string =>
    `${indent}${tsKey(op.method ?? op.operationId)}: { operationId: ${JSON.stringify(op.operationId)}; request: ${schemaType(op.request)}; result: ${schemaType(op.result)}; refusal: ${schemaType(op.refusal)} };`;
  const lines = [
    tsHeader(
      'The method map: which request and result belong to each `method` of a shared path (x-methods), and to every operation by its id.',
    ).trimEnd(),
    "import type { components } from './types.ts';",
    '',
    "/** Shared paths → method → that method's request branch, result and refusal. */",
    'export interface MethodMap {',
  ];
  for (const [p, list] of byPath) {
    lines.push(`  ${JSON.stringify(p)}: {`, ...list.map((op) => entry(op, '    ')), '  };');
  }
  lines.push(
    '}',
    '',
    '/** Every operation of the contract by operationId → its request, result and refusal. */',
    'export interface OperationMap {',
  );
  for (const op of ops.filter((o) => !o.webhook)) {
    lines.push(
      `  ${tsKey(op.operationId)}: { path: ${JSON.stringify(op.path)}; verb: ${JSON.stringify(op.verb)}; method: ${op.method ? JSON.stringify(op.method) : 'never'}; request: ${schemaType(op.request)}; result: ${schemaType(op.result)}; refusal: ${schemaType(op.refusal)} };`,
    );
  }
  lines.push(
    '}',
    '',
    'export type SharedPath = keyof MethodMap;',
    'export type MethodOf<P extends SharedPath> = keyof MethodMap[P] & string;',
    '/** The request branch of `method` M on path P. */',
    'export type RequestOf<P extends SharedPath, M extends MethodOf<P>> = MethodMap[P][M] extends { request: infer R } ? R : never;',
    '/** The result of `method` M on path P when it is processed (responseCode 0 or above). */',
    'export type ResultOf<P extends SharedPath, M extends MethodOf<P>> = MethodMap[P][M] extends { result: infer R } ? R : never;',
    '/** The refusal of `method` M on path P (responseCode below 0). */',
    'export type RefusalOf<P extends SharedPath, M extends MethodOf<P>> = MethodMap[P][M] extends { refusal: infer R } ? R : never;',
    '/** Everything `method` M on path P can answer with a success status. */',
    'export type ResponseOf<P extends SharedPath, M extends MethodOf<P>> = ResultOf<P, M> | RefusalOf<P, M>;',
    '',
    'export type OperationId = keyof OperationMap;',
    "export type OperationRequest<O extends OperationId> = OperationMap[O]['request'];",
    "export type OperationResult<O extends OperationId> = OperationMap[O]['result'];",
    "export type OperationResponse<O extends OperationId> = OperationMap[O]['result'] | OperationMap[O]['refusal'];",
    '',
  );
  return lines.join('\n');
}
