// The sandbox scenarios in the spec (x-sandbox-scenarios, spec/sandbox-scenarios.yaml, and each
// descriptor's `outcomes`): valid against their schema; every outcome, laid on its operation's result
// example, still an answer of its result schema (a field it sets exists and takes that value); the
// response codes the spec's table documents each an outcome of some operation; docs/SCENARIOS.md what
// the spec writes now.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { resultValidators } from '../../contract/index.ts';
import { operations as table } from '../../generated/operations.ts';
import { scenarios } from '../../generated/scenarios.ts';
import { withOutcome } from '../../runtime/scenarios.ts';
import { scenariosDocText } from '../../scripts/generate.ts';
import { exampleValue } from '../../scripts/lib/contract.ts';
import { createAjv, doc, ROOT, readYaml } from '../support/contract.ts';

describe('x-sandbox-scenarios', () => {
  it('is valid against spec/extensions/scenarios.schema.yaml', () => {
    const validate = createAjv().compile(readYaml('spec/extensions/scenarios.schema.yaml'));
    expect(
      validate((doc as unknown as Record<string, unknown>)['x-sandbox-scenarios']),
      JSON.stringify(validate.errors),
    ).toBe(true);
  });

  it('gives every operation its outcomes, and each one laid on its result example is still its result', () => {
    const broken: string[] = [];
    for (const op of table) {
      const entry = (scenarios.operations as Record<string, (typeof scenarios.operations)['processCard']>)[
        op.operationId
      ];
      expect(entry, op.operationId).toBeDefined();
      if (op.resultType !== 'application/json') continue;
      const example = exampleValue(doc, op.examples.result[0]!);
      const validate = resultValidators[op.result]!;
      for (const outcome of entry!.outcomes) {
        const shaped = withOutcome(example, outcome);
        if (!validate(shaped))
          broken.push(`${op.operationId} ${outcome.name}: ${JSON.stringify(validate.errors?.[0])}`);
        // Every field it sets is a field of the answer (a path the example does not have would be skipped).
        for (const [at, value] of Object.entries(outcome.set ?? {})) {
          let node: unknown = shaped;
          for (const key of at.split('.'))
            node = Array.isArray(node) ? node[key === '-1' ? node.length - 1 : Number(key)] : (node as never)?.[key];
          if (node !== value) broken.push(`${op.operationId} ${outcome.name}: ${at} is not in its result example`);
        }
      }
    }
    expect(broken).toEqual([]);
  });

  it("reaches each responseCode of the spec's table (0 to 10) through some operation's outcome, and each below 0 through a refusal", () => {
    const table = doc.info.description!.match(/\| (-?\d+) \| [^|]+ \|/g)!.map((row) => Number(/-?\d+/.exec(row)![0]));
    const reached = new Set([
      ...Object.values(scenarios.operations).flatMap((o) => o.outcomes.map((x) => x.responseCode as number)),
      ...Object.values(scenarios.refusals).map((r) => r.responseCode as number),
    ]);
    expect(table.filter((code) => !reached.has(code))).toEqual([]);
    expect(table.length).toBe(15);
  });

  it('names no outcome like a fault or a refusal, and no two outcomes of an operation alike', () => {
    const reserved = [...Object.keys(scenarios.faults), ...Object.keys(scenarios.refusals)];
    for (const [id, { outcomes }] of Object.entries(scenarios.operations)) {
      const names = outcomes.map((o) => o.name as string);
      expect(
        names.filter((n) => reserved.includes(n)),
        id,
      ).toEqual([]);
      expect(new Set(names).size, id).toBe(names.length);
    }
  });

  it('docs/SCENARIOS.md is what the spec writes (run `npm run generate` if not)', async () => {
    expect(await readFile(path.join(ROOT, 'docs/SCENARIOS.md'), 'utf8')).toBe(await scenariosDocText(ROOT));
  });
});
