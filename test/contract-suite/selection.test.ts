// What --only and --skip take: operationIds and tags (which select operations) and check ids (which
// select checks). One set of operationIds and tags serves both the CLI's refusal of an unknown name
// and the run's selection of operations (it was built twice, from the operations and from the
// document's paths).
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { operationNames } from '../../contract/run.ts';
import { operations } from '../../generated/operations.ts';
import { doc } from '../support/contract.ts';

describe('the names --only and --skip take', () => {
  it('are one set of every operationId and tag, which the CLI refuses a name outside', async () => {
    const tags = Object.values(doc.paths).flatMap((item: any) =>
      Object.values(item).flatMap((op: any) => (op?.tags as string[] | undefined) ?? []),
    );
    expect(operationNames).toEqual(new Set([...operations.map((o) => o.operationId), ...tags]));
    const run = await promisify(execFile)(
      process.execPath,
      ['contract/run.ts', '--base-url', 'http://127.0.0.1:9', '--only', 'Direct API,processCaptur'],
      { cwd: path.resolve(import.meta.dirname, '../..') },
    ).then(
      () => ({ code: 0, stderr: '' }),
      (error) => error as { code: number; stderr: string },
    );
    expect(run.code).toBe(2);
    expect(run.stderr.trim()).toBe(
      "payment-gateway-contract-test: --only processCaptur: no operationId or tag of that name (operationIds are like processCapture, tags like 'Direct API')",
    );
  });
});
