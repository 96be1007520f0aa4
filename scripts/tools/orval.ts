// orval generates a fetch client (one function per path operation, with the document's types), for
// the JSON mode (override.contentType: see the limits); the matrix typechecks it with the package's tsc and calls processAuth (body hashes) and listPayIds
// (the credential headers and SVC-MESSAGEHASH) through it against the sandbox, signed by the package.
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { protocols } from '../../generated/protocols.ts';
import type { ToolContext, ToolReport, ToolRunner } from './report.ts';
import { checkGeneratedClient, clientCheckReport, driverCalls, SIGNED_REQUEST_MODULE } from './lib/generated-client.ts';
import { installedVersion, runCommand, secondsSince, toolBin } from './lib/tool.ts';

const run: ToolRunner = async (ctx: ToolContext): Promise<ToolReport> => {
  const start = performance.now();
  const version = installedVersion(ctx, 'orval');
  const config = path.join(ctx.workDir, 'orval.config.mjs');
  await writeFile(
    config,
    `export default { gateway: { input: { target: ${JSON.stringify(ctx.documentJson)} }, output: { target: 'orval/client.ts', client: 'fetch', baseUrl: ${JSON.stringify(ctx.baseUrl)}, override: { contentType: { include: [${JSON.stringify(protocols.canonical.requestType)}] } } } } };\n`,
  );
  const generated = await runCommand(process.execPath, [toolBin(ctx, 'orval'), '--config', config], {
    cwd: ctx.workDir,
  });
  if (generated.code !== 0) throw new Error(`orval failed:\n${generated.output.slice(-2000)}`);
  const check = await checkGeneratedClient(
    ctx.workDir,
    'orval/client.ts',
    `import { directApi, listPayIds } from './orval/client.ts';
import { signedRequest } from ${JSON.stringify(SIGNED_REQUEST_MODULE)};
${driverCalls({
  processAuth: `const r = signedRequest('processAuth'); return (await directApi(r.body as any, { headers: r.headers })).data;`,
  listPayIds: `return (await listPayIds({ headers: signedRequest('listPayIds').headers })).data;`,
})}`,
  );
  const { checks, operationsSucceeded, typecheckLine, calledLine } = clientCheckReport(check, 'client');
  return {
    tool: 'orval',
    version,
    role: 'code generation (TypeScript fetch client)',
    loadsStrict: true,
    checks,
    operationsSucceeded,
    works: [
      'generates a fetch client: one function per path operation, request unions for the shared paths, the documented answers typed',
      typecheckLine,
      calledLine,
    ],
    limits: [
      {
        what: "one function per path: a shared path (/post) is one function taking the union of its methods' requests, answering the union of their results",
        why: 'orval generates per path and verb; nothing in OpenAPI ties a result to the method sent',
        workaround: "the package's client (payment-gateway-contract/client) has one typed method per operation",
        outsideDocument: true,
      },
      {
        what: "generated for one request mode: a path whose JSON and form bodies differ (each mode's tolerant copy) gets, by default, one function over both bodies that sends no Content-Type, which the gateway refuses (-2)",
        why: 'orval merges the media types of a request body into one parameter and then names none of them',
        workaround:
          "generate for the mode you speak: override.contentType.include with that mode's request media type (this check's configuration names the JSON mode's)",
        outsideDocument: true,
      },
      {
        what: 'the generated functions send no SVC-API-VERSION, and answer /post with a Blob',
        why: 'the version header is a header parameter, which the fetch client leaves out of the functions; /post answers JSON, XML, a Zip or a CSV, and the client reads a response of several media types as a Blob',
        workaround:
          "pass the header in the call's RequestInit (headers) and read the Blob's text as JSON, as this check does",
        outsideDocument: true,
      },
      {
        what: "does not sign: body hashes, the credential headers and SVC-MESSAGEHASH are the caller's",
        why: 'the hashes are computed from the passphrase by recipes (x-hash-recipes) no generator reads',
        workaround:
          'sign with payment-gateway-contract/signing (signBodyHashes, signHeaders) before the call, as this check does',
        outsideDocument: true,
      },
    ],
    seconds: secondsSince(start),
  };
};

export default run;
