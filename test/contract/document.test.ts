// The document itself: Redocly lint (recommended-strict, examples checked) and swagger-parser.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import SwaggerParser from '@apidevtools/swagger-parser';
import { describe, expect, it } from 'vitest';
import { ROOT, doc } from '../support/contract.ts';

describe('the OpenAPI document', () => {
  it('passes Redocly lint (recommended-strict, invalid examples are errors) with no problem at all', () => {
    // As `npm run lint:spec` runs it: Redocly's lint over the document with its method lists composed.
    let output: string;
    try {
      output = execFileSync(process.execPath, [path.join(ROOT, 'scripts/lint-spec.ts'), '--format=json'], {
        cwd: ROOT,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, REDOCLY_TELEMETRY: 'off' },
      });
    } catch (failure) {
      output = (failure as { stdout: string }).stdout;
    }
    const { problems } = JSON.parse(output) as {
      problems: { severity: string; ruleId: string; message: string; location: { pointer: string }[] }[];
    };
    expect(problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`)).toEqual([]);
  });

  it('is valid OpenAPI 3.1 for swagger-parser, as written and as bundled', async () => {
    await expect(SwaggerParser.validate(path.join(ROOT, 'spec/openapi.yaml'))).resolves.toBeTruthy();
    await expect(SwaggerParser.validate(structuredClone(doc))).resolves.toBeTruthy();
    expect(doc.openapi).toBe('3.1.0');
  });

  it('requires SVC-API-VERSION: 2.0 on every operation', () => {
    for (const [p, item] of Object.entries<any>(doc.paths)) {
      for (const [verb, op] of Object.entries<any>(item)) {
        const params = (op.parameters ?? []).map((x: any) =>
          x.$ref ? doc.components.parameters[x.$ref.split('/').pop()] : x,
        );
        const version = params.find((x: any) => x.name === 'SVC-API-VERSION');
        expect(version, `${verb} ${p}`).toMatchObject({ in: 'header', required: true, schema: { const: '2.0' } });
      }
    }
  });
});
