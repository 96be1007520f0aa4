// Protocol compliance, beside each operation (Smithy's protocol tests, generated from the spec rather
// than written per operation): every example of every operation, in every protocol the operation is
// served in (x-wire-formats), round-trips. A request example written as the protocol's clients write
// it is read back by the protocol's reader as the same request (a form's empty values aside); each
// answer example written by the protocol's writer is read back by the contract suite's reader as the
// same answer; and through the stubs' core, the operation's first request example sent in the
// protocol is read, handled, and answered with each answer example, which the suite's reader reads
// back whole. Paths are taken from where this file is: a copy of the package checks itself by
// importing its own copy of this module (test/architecture/add-method.test.ts).
import { isDeepStrictEqual } from 'node:util';
import {
  buildRequest,
  readAnswer,
  requestExamples,
  requestValidators,
  resultValidators,
} from '../../contract/index.ts';
import { operations, type ContractOperation } from '../../generated/operations.ts';
import { protocols } from '../../generated/protocols.ts';
import { exampleValue, type Doc } from '../../runtime/document.ts';
import { chooseForm } from '../../runtime/forms.ts';
import type { Protocol } from '../../runtime/protocols/protocol.ts';
import { createGateway, type GatewayHandlers, type HandlerContext } from '../../server-stubs/index.ts';
import { accounts } from '../fixtures/example-handlers.ts';
import { doc } from '../support/contract.ts';

/** An operation and a protocol it is served in: one case of the compliance tests. */
export interface ComplianceCase {
  op: ContractOperation;
  protocol: Protocol;
}

/** Every operation in every protocol it is served in, from the operation table. */
export const complianceCases = (ids?: readonly string[]): ComplianceCase[] =>
  operations
    .filter((op) => !ids || ids.includes(op.operationId))
    .flatMap((op) => op.protocols.map((id) => ({ op, protocol: protocols.byId(id)! })));

const isFile = (op: ContractOperation) => op.resultType !== protocols.canonical.answerType;
const answerExamples = (op: ContractOperation) => [
  ...(isFile(op) ? [] : op.examples.result.map((name) => ({ name, refusal: false }))),
  ...op.examples.refusal.map((name) => ({ name, refusal: true })),
];
const value = (d: Doc, name: string) => exampleValue(d, name) as Record<string, unknown>;

/** A value without its empty strings (a form's empty value is a field not sent), at any depth. */
function withoutEmpty(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(withoutEmpty);
  if (typeof v !== 'object' || v === null) return v;
  return Object.fromEntries(
    Object.entries(v)
      .filter(([, inner]) => inner !== '')
      .map(([k, inner]) => [k, withoutEmpty(inner)]),
  );
}

/** What is wrong with one case, one line each: the examples that do not come back as they went. */
export async function complianceProblems({ op, protocol }: ComplianceCase): Promise<string[]> {
  const problems: string[] = [];
  const where = `${op.operationId} in ${protocol.id}`;
  // The request examples: written as the protocol's clients write them, read back by its reader.
  for (const { name, value: example } of op.request ? requestExamples(op) : []) {
    const read = protocol.read(protocol.writeRequest(example));
    if (!('ok' in read)) {
      problems.push(`${where}: request ${name} is not read back: ${read.unreadable.refusal}`);
      continue;
    }
    const typed = protocol.typed(read.ok, op.shapes.request);
    const expected = protocol === protocols.canonical ? example : withoutEmpty(example);
    if (!isDeepStrictEqual(typed, expected))
      problems.push(`${where}: request ${name} is read back as ${JSON.stringify(typed)}`);
    const form = chooseForm(op.requestForms ?? [], typed as Record<string, unknown>).schema;
    if (!requestValidators[form]!(typed)) problems.push(`${where}: request ${name} read back breaks ${form}`);
  }
  // The answer examples: written by the protocol's writer, read back by the suite's reader.
  for (const { name, refusal } of answerExamples(op)) {
    const example = value(doc, name);
    let text: string;
    try {
      text = protocol.writeAnswer(example, refusal ? op.shapes.refusal : op.shapes.result);
    } catch (error) {
      problems.push(`${where}: answer ${name} cannot be written: ${(error as Error).message}`);
      continue;
    }
    const read = readAnswer(protocol, op, text);
    if (!('ok' in read)) problems.push(`${where}: answer ${name} is not read back: ${read.error}`);
    else if (!isDeepStrictEqual(read.ok, example))
      problems.push(`${where}: answer ${name} is read back as ${JSON.stringify(read.ok)}`);
    else if (!resultValidators[refusal ? op.refusal : op.result]!(read.ok))
      problems.push(`${where}: answer ${name} read back breaks ${refusal ? op.refusal : op.result}`);
  }
  problems.push(...(await throughTheStubs({ op, protocol })));
  return problems;
}

/**
 * Through the stubs' core: the first request example, signed for the sandbox's account and sent in
 * the protocol, is read, validated, authenticated and handled; the handler answers each answer
 * example in turn (its result hashes left for the stubs to add), and the suite's reader reads the
 * answer back as the example.
 */
async function throughTheStubs({ op, protocol }: ComplianceCase): Promise<string[]> {
  const problems: string[] = [];
  const target = op.aliasOf ?? op.operationId;
  const request = buildRequest(op, {
    body: op.request ? requestExamples(op)[0]?.value : undefined,
    signBody: true,
    wire: protocol.id,
  });
  for (const { name, refusal } of answerExamples(op)) {
    const example = value(doc, name);
    const hashes = new Set(op.resultHashes.map((h) => h.name));
    const answer = refusal ? example : Object.fromEntries(Object.entries(example).filter(([k]) => !hashes.has(k)));
    const handlers = { [target]: () => answer } as Partial<GatewayHandlers<HandlerContext>>;
    const gateway = createGateway({ handlers, accounts, logger: false, responseValidation: 'error' });
    const response = await gateway.handle(request);
    const where = `${op.operationId} in ${protocol.id}, answering ${name}`;
    if (response.headers['content-type'] !== protocol.answerType) {
      problems.push(`${where}: answered ${response.headers['content-type']}: ${String(response.body).slice(0, 300)}`);
      continue;
    }
    const read = readAnswer(protocol, op, String(response.body));
    if (!('ok' in read)) problems.push(`${where}: not read back: ${read.error}`);
    else if (!isDeepStrictEqual(read.ok, example)) problems.push(`${where}: read back as ${JSON.stringify(read.ok)}`);
  }
  return problems;
}
