// Protocol compliance beside each operation: every operation's examples round-trip through every
// protocol it is served in (compliance-checks.ts). One test per operation and protocol, generated
// from the operation table, none written by hand.
import { describe, expect, it } from 'vitest';
import { complianceCases, complianceProblems } from './compliance-checks.ts';

describe('protocol compliance', () => {
  it('covers every operation in every protocol it is served in, the form/XML mode on its paths', () => {
    const cases = complianceCases();
    expect(new Set(cases.map((c) => c.op.operationId)).size).toBeGreaterThan(50);
    expect(cases.filter((c) => c.protocol.id === 'form').length).toBeGreaterThan(30);
  });

  it.each(complianceCases().map((c) => [`${c.op.operationId} in ${c.protocol.id}`, c] as const))(
    '%s: its examples round-trip',
    async (_name, c) => {
      expect(await complianceProblems(c)).toEqual([]);
    },
  );
});
