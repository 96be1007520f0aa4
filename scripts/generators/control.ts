// Types of the sandbox control API (sandbox/control.openapi.yaml, not the gateway's contract), for
// its typed client sandbox/control-client.ts.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import openapiTS, { astToString } from 'openapi-typescript';
import { parse } from 'yaml';
import { tsHeader } from './banner.ts';

export async function controlTypesModule(root: string): Promise<string> {
  const doc = parse(await readFile(path.join(root, 'sandbox/control.openapi.yaml'), 'utf8'));
  const ast = await openapiTS(doc as never, { alphabetize: false, exportType: false, defaultNonNullable: false });
  return `${tsHeader('Types of the sandbox control API (sandbox/control.openapi.yaml), from openapi-typescript.')}${astToString(ast)}`;
}
