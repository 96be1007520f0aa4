// Dredd reads the document, sends each operation's example request for every documented status and
// compares the answer with the documented one. Its OpenAPI 3 parser only follows references into
// #/components. The runner gives it a copy with the JSON media types only, and records whether it
// reads the document as published too: it refused it while the form/XML media types referenced the
// JSON schemas under #/paths (docs/WIRE-FORMATS.md), and reads it since they name the components.
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import type { ToolContext, ToolReport, ToolRunner } from './report.ts';
import { installedVersion, runCommand, secondsSince, toolBin } from './lib/tool.ts';

const JSON_TYPE = 'application/json';

/** The document with every media type but JSON removed (request bodies and answers); how many went. */
function jsonOnly(doc: any): number {
  let removed = 0;
  const visit = (node: any): void => {
    if (!node || typeof node !== 'object') return;
    if (node.content && typeof node.content === 'object' && JSON_TYPE in node.content) {
      for (const type of Object.keys(node.content))
        if (type !== JSON_TYPE) {
          delete node.content[type];
          removed++;
        }
    }
    for (const child of Object.values(node)) visit(child);
  };
  visit(doc.paths);
  return removed;
}

const run: ToolRunner = async (ctx: ToolContext): Promise<ToolReport> => {
  const start = performance.now();
  const version = installedVersion(ctx, 'dredd');
  const doc = JSON.parse(await readFile(ctx.documentJson, 'utf8'));
  const removed = jsonOnly(doc);
  const copy = path.join(ctx.workDir, 'openapi.json-only.json');
  await writeFile(copy, JSON.stringify(doc));

  const asIs = await runCommand(process.execPath, [toolBin(ctx, 'dredd'), ctx.documentJson, ctx.baseUrl, '--dry-run'], {
    cwd: ctx.workDir,
  });
  const refusedAsIs = /Only local references to '#\/components'/.test(asIs.output);
  const { output } = await runCommand(process.execPath, [toolBin(ctx, 'dredd'), copy, ctx.baseUrl, '--reporter=none'], {
    cwd: ctx.workDir,
  });
  const text = stripVTControlCharacters(output);
  const totals = /complete: (\d+) passing, (\d+) failing, (\d+) errors, (\d+) skipped, (\d+) total/.exec(text);
  if (!totals) throw new Error(`dredd printed no totals:\n${text.slice(-2000)}`);
  const [passing, failing, errors, skipped] = totals.slice(1, 5).map(Number) as [number, number, number, number];
  const statusMismatches = text.match(/^fail: statusCode: Expected status code/gm)?.length ?? 0;
  const unsigned = text.match(/"responseMessage": "Header '[^']+' is required"/g)?.length ?? 0;
  const warnings = new Set(
    [...text.matchAll(/warn: API description parser warning[^:]*:[^:]*: (.*)$/gm)].map((m) =>
      m[1]!.replace(/'[^']*'/g, (q) => (q.length > 30 ? "'…'" : q)),
    ),
  );

  return {
    tool: 'Dredd',
    version,
    role: 'contract tests (example requests, documented answers)',
    loadsStrict: false,
    checks: { passed: passing, failed: failing + errors, skipped },
    works: [
      `reads the JSON-only copy (${removed} form/XML media types removed) and makes ${passing + failing + errors + skipped} transactions from its examples`,
      `${passing} transactions answered as documented`,
    ],
    limits: [
      ...(refusedAsIs
        ? [
            {
              what: 'refuses the document as published: "Only local references to \'#/components\' within the same file are supported"',
              why: 'its OpenAPI 3 parser follows $refs into #/components only; the document has one elsewhere (valid OpenAPI)',
              workaround:
                'give Dredd a copy with application/json only (as this runner does), or one bundled with every $ref resolved',
              outsideDocument: true,
            },
          ]
        : []),
      {
        what: `sends the same example request for every documented status: ${statusMismatches} transactions expected a refusal status (400, 401, 413, …) and got the success the valid example earns`,
        why: 'Dredd has no way to choose an example per status; it pairs nothing by name',
        workaround:
          'run Dredd with --only on the success transactions, or write a hook per refusal that breaks the request',
        outsideDocument: true,
      },
      {
        what: `the NPP, payout and batch requests are refused for want of credentials (${unsigned} answers said a credential header is required), and body hashes are the examples' own`,
        why: 'Dredd sends the examples as written; the two credential headers and SVC-MESSAGEHASH depend on the request and the passphrase',
        workaround:
          "a Dredd hooks file (beforeEach) that signs each request with the package's signing module (payment-gateway-contract/signing: signHeaders, signBodyHashes)",
        outsideDocument: true,
      },
      {
        what: `warns on OpenAPI 3.1 keywords it does not know (${warnings.size} kinds, e.g. ${[...warnings].slice(0, 2).join('; ')}) and ignores discriminator and anyOf`,
        why: 'Dredd 14 implements OpenAPI 3.0; 3.1 (JSON Schema 2020-12) only in part',
        workaround: 'none within Dredd; the shared-path unions are checked by the contract suite (npm run contract)',
        outsideDocument: true,
      },
    ],
    seconds: secondsSince(start),
  };
};

export default run;
