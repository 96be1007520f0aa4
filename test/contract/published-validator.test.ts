// The published document's request schemas describe the wire (docs/WIRE-FORMATS.md, "Validating
// requests against the published document"): a validator generated from generated/openapi.json (ajv,
// draft 2020-12, over each request body's schema in the mode it is sent in) accepts a request exactly
// when the sandbox takes it, in both directions. "Takes" is the sandbox's own verdict on the request's
// shape: it reached the credentials check or the handler (a -1 for a broken hash, or a business
// refusal such as "no such card", is a request it read and took); a refusal of the body, a field or
// the method is not. Requests are made by fast-check from each operation's own examples, signed, then
// changed as real clients change them: a field no form declares, a field of another form, a code in
// another letter case, a field left out, sent empty, or given another value.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { breaking, buildRequest, requestExamples } from '../../contract/index.ts';
import { operations, type ContractOperation } from '../../generated/operations.ts';
import { protocols } from '../../generated/protocols.ts';
import { readForm, writeForm } from '../../runtime/protocols/form.ts';
import { createSandbox, type RunningSandbox } from '../../sandbox/index.ts';
import type { RequestRecord } from '../../server-stubs/index.ts';

/** A protocol's id in x-wire-formats. */
type Wire = string;
import { createAjv, doc, ROOT } from '../support/contract.ts';

// The document as shipped, bytes and all, as a team's validator compiles it (not the package's reading).
const shipped = createAjv(JSON.parse(readFileSync(path.join(ROOT, 'generated/openapi.json'), 'utf8')));
const validatorFor = (pointer: string) => shipped.getSchema(`openapi.json${pointer}`)!;

/** The stubs' refusals of a request's shape: the body, a field, the form, the method. */
const SHAPE = /^PGW_ERR_(FIELD_|BODY_INVALID|BODY_REQUIRED|METHOD_|REQUEST_INVALID|FORM_|NOT_JSON|NO_BODY_TAKEN)/;

const pointerPart = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');
const contentOf = (op: ContractOperation, wire: Wire) =>
  `#/paths/${pointerPart(op.path)}/${op.verb.toLowerCase()}/requestBody/content/${pointerPart(protocols.byId(wire)!.requestType)}/schema`;

const cases = operations.filter((op) => op.request).flatMap((op) => op.protocols.map((wire) => ({ op, wire })));

/** The fields each form of the operation declares, and all of them. */
function fieldsOf(op: ContractOperation): { all: readonly string[]; byForm: Map<string, string[]> } {
  const byForm = new Map<string, string[]>();
  for (const form of op.forms ?? [op.request!])
    byForm.set(form, Object.keys(doc.components.schemas[form]?.properties ?? {}));
  return { all: op.fields ?? [...new Set([...byForm.values()].flat())], byForm };
}

type Change =
  | { kind: 'unknown'; field: string; value: string }
  | { kind: 'other-form'; field: string; value: string }
  | { kind: 'recase'; field: string; lower: boolean }
  | { kind: 'drop'; field: string }
  | { kind: 'empty'; field: string }
  | { kind: 'value'; field: string; value: unknown };

function changes(op: ContractOperation, example: Record<string, unknown>): fc.Arbitrary<Change[]> {
  const { all } = fieldsOf(op);
  const present = Object.keys(example);
  const absent = all.filter((f) => !present.includes(f));
  const normalised = Object.keys(op.normalise ?? {}).filter((f) => typeof example[f] === 'string');
  const schemaOf = (field: string) =>
    (op.forms ?? [op.request!]).map((f) => doc.components.schemas[f]?.properties?.[field]).find(Boolean);
  const text = fc.string({ maxLength: 8 });
  const one: fc.Arbitrary<Change>[] = [
    fc.record({
      kind: fc.constant('unknown' as const),
      field: fc.constantFrom('colour', 'custom_1', 'cardkey', 'clientVersion').filter((f) => !all.includes(f)),
      value: text,
    }),
    fc.record({ kind: fc.constant('drop' as const), field: fc.constantFrom(...present) }),
    fc.record({ kind: fc.constant('empty' as const), field: fc.constantFrom(...present) }),
    fc.record({
      kind: fc.constant('value' as const),
      field: fc.constantFrom(...present),
      value: fc.oneof(text, fc.constant('!!'), fc.constant('not-an-allowed-value')),
    }),
    fc
      .constantFrom(...present)
      .map((field) => ({ kind: 'value' as const, field, value: breaking(schemaOf(field)) }))
      .filter((c) => c.value !== undefined),
  ];
  if (absent.length)
    one.push(fc.record({ kind: fc.constant('other-form' as const), field: fc.constantFrom(...absent), value: text }));
  if (normalised.length)
    one.push(
      fc.record({ kind: fc.constant('recase' as const), field: fc.constantFrom(...normalised), lower: fc.boolean() }),
    );
  return fc.array(fc.oneof(...one), { minLength: 1, maxLength: 3 });
}

/** The example with the changes: values first, then signed, then what is dropped or emptied (a hash among them). */
function changed(example: Record<string, unknown>, list: Change[]) {
  const body: Record<string, unknown> = { ...example };
  for (const c of list) {
    if (c.kind === 'unknown' || c.kind === 'other-form' || c.kind === 'value') body[c.field] = c.value;
    if (c.kind === 'recase' && typeof body[c.field] === 'string') {
      const v = body[c.field] as string;
      body[c.field] = c.lower ? v.toLowerCase() : [...v].map((ch, i) => (i % 2 ? ch.toLowerCase() : ch)).join('');
    }
  }
  return {
    body,
    after: (signed: Record<string, unknown>) => {
      const out = { ...signed };
      for (const c of list) {
        if (c.kind === 'drop') delete out[c.field];
        if (c.kind === 'empty') out[c.field] = '';
      }
      return out;
    },
  };
}

/** The body signed; as it is when its hashes cannot be computed (a batch file that is not base64 cannot be hashed). */
function signedOr(op: ContractOperation, body: Record<string, unknown>): Record<string, unknown> {
  try {
    return JSON.parse(String(buildRequest(op, { body, signBody: true }).body));
  } catch {
    return body;
  }
}

describe('a validator generated from the published document accepts exactly what the sandbox takes', () => {
  let sandbox: RunningSandbox;
  let last: RequestRecord | undefined;
  beforeAll(async () => {
    sandbox = await createSandbox({ dbPath: ':memory:', env: {}, onRequest: (r) => (last = r) });
  });
  afterAll(() => sandbox.close());

  /** Whether the sandbox took the request's shape; throws on an answer that is neither taken nor a shape refusal. */
  async function takes(op: ContractOperation, wire: Wire, body: Record<string, unknown>): Promise<boolean> {
    last = undefined;
    const request = buildRequest(op, { body, wire });
    const response = await sandbox.gateway.handle(request);
    if (response.status >= 500) throw new Error(`HTTP ${response.status}: ${String(response.body).slice(0, 300)}`);
    const code = (last as RequestRecord | undefined)?.errorCode;
    return !(code && SHAPE.test(code));
  }

  /** What the published document's validator says of the body as it goes on the wire (a form as a reader decodes it). */
  function validates(op: ContractOperation, wire: Wire, body: Record<string, unknown>): boolean {
    const validate = validatorFor(contentOf(op, wire));
    if (wire === 'json') return validate(body) as boolean;
    const read = readForm(writeForm(body));
    if (!('ok' in read)) throw new Error(`the form cannot be read back: ${JSON.stringify(read)}`);
    return validate(read.ok) as boolean;
  }

  it.each(cases.map(({ op, wire }) => [`${op.operationId} (${wire})`, op, wire] as const))(
    '%s',
    async (_name, op, wire) => {
      const examples = requestExamples(op);
      for (const example of examples) {
        // The example as the spec gives it: both take it.
        const signed = buildRequest(op, { body: example.value, signBody: true });
        const base = JSON.parse(String(signed.body)) as Record<string, unknown>;
        expect(validates(op, wire, base), `${example.name} as published`).toBe(true);
        expect(await takes(op, wire, base), `${example.name} taken by the sandbox`).toBe(true);
        await fc.assert(
          fc.asyncProperty(changes(op, example.value), async (list) => {
            const { body, after } = changed(example.value, list);
            const sent = after(signedOr(op, body));
            const published = validates(op, wire, sent);
            const sandboxTakes = await takes(op, wire, sent);
            if (published !== sandboxTakes)
              throw new Error(
                `${published ? 'the published validator accepts' : 'the published validator refuses'} what the sandbox ${sandboxTakes ? 'takes' : `refuses (${(last as RequestRecord | undefined)?.errorCode})`}: ${JSON.stringify(sent)}`,
              );
          }),
          { numRuns: 25, seed: 37, endOnFailure: true },
        );
      }
    },
  );

  it('the public clients’ requests the issue names: a lower-case code, an unknown field, an empty hash to removeCard', async () => {
    const processCard = operations.find((o) => o.operationId === 'processCard')!;
    const removeCard = operations.find((o) => o.operationId === 'removeCard')!;
    const purchase = JSON.parse(
      String(buildRequest(processCard, { body: requestExamples(processCard)[0]!.value, signBody: true }).body),
    );
    const remove = requestExamples(removeCard)[0]!.value;
    for (const [op, body] of [
      [processCard, { ...purchase, transactionCurrency: 'aud', customerCountry: 'au' }],
      [processCard, { ...purchase, descriptorColour: 'blue' }],
      [removeCard, { ...remove, hash: '' }],
    ] as const) {
      for (const wire of ['json', 'form'] as const) {
        expect(validates(op, wire, body), `${op.operationId} ${wire} ${JSON.stringify(body)}`).toBe(true);
        expect(await takes(op, wire, body), `${op.operationId} ${wire}`).toBe(true);
      }
    }
  });
});
