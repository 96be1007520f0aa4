// The docs' code samples send what the spec says, read from the spec: the version header and its
// value (the ApiVersion parameter), each header credential by its security scheme's name, and the
// sandbox account of info.x-sandbox. The payout samples once sent SVC-APIKEY, written by hand, where
// the payout paths' scheme names SVC-API-KEY.
import { describe, expect, it } from 'vitest';
import { codeSamples } from '../../scripts/generators/docs-view.ts';
import { contractOperations } from '../../scripts/lib/contract.ts';
import { doc } from '../support/contract.ts';

const ops = contractOperations(doc);
const headersOf = (curl: string) => [...curl.matchAll(/-H ['"]([A-Za-z-]+): /g)].map((m) => m[1]!);

describe('the docs code samples', () => {
  it('each curl sends the version header and exactly the header credentials its security names', () => {
    const version = doc.components.parameters.ApiVersion;
    for (const op of ops.filter((o) => !o.webhook)) {
      const curl = codeSamples(op, doc).find((s) => s.label === 'curl')!.source;
      const schemes = op.security.map((s) => doc.components.securitySchemes[s].name);
      expect(curl, op.operationId).toContain(`-H '${version.name}: ${version.schema.const}'`);
      const sent = headersOf(curl).filter((h) => h.startsWith('SVC-') && h !== version.name);
      expect(sent.sort(), op.operationId).toEqual(schemes.sort());
    }
    // The payout paths name the key header their own way.
    const payout = ops.find((o) => o.operationId === 'createPayouts')!;
    expect(headersOf(codeSamples(payout, doc)[0]!.source)).toContain('SVC-API-KEY');
  });

  it("the samples' account is the spec's sandbox account", () => {
    const sandbox = doc.info['x-sandbox'];
    const client = codeSamples(ops.find((o) => o.operationId === 'processCard')!, doc).find(
      (s) => s.label === 'TypeScript',
    )!.source;
    for (const value of [sandbox.merchantUUID, sandbox.apiKey, sandbox.passphrase]) expect(client).toContain(value);
    const payout = codeSamples(ops.find((o) => o.operationId === 'createPayouts')!, doc)[0]!.source;
    expect(payout).toContain(`SVC-MERCHANTID: ${sandbox.merchantUUID}`);
  });
});
