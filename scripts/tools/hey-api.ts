// @hey-api/openapi-ts generates an SDK (one function per path operation), its types and a fetch
// client; the matrix typechecks it with the package's tsc and calls processAuth (body hashes) and
// listPayIds (the credential headers and SVC-MESSAGEHASH) through it against the sandbox, signed by the package.
import type { ToolContext, ToolReport, ToolRunner } from './report.ts';
import { checkGeneratedClient, clientCheckReport, driverCalls, SIGNED_REQUEST_MODULE } from './lib/generated-client.ts';
import { installedVersion, runCommand, secondsSince, toolBin } from './lib/tool.ts';

const run: ToolRunner = async (ctx: ToolContext): Promise<ToolReport> => {
  const start = performance.now();
  const version = installedVersion(ctx, '@hey-api/openapi-ts');
  const generated = await runCommand(
    process.execPath,
    [toolBin(ctx, 'openapi-ts'), '-i', ctx.documentJson, '-o', 'hey'],
    {
      cwd: ctx.workDir,
    },
  );
  if (generated.code !== 0) throw new Error(`openapi-ts failed:\n${generated.output.slice(-2000)}`);
  const check = await checkGeneratedClient(
    ctx.workDir,
    'hey/index.ts',
    `import { client } from './hey/client.gen.ts';
import { directApi, listPayIds } from './hey/sdk.gen.ts';
import { signedRequest } from ${JSON.stringify(SIGNED_REQUEST_MODULE)};
client.setConfig({ baseUrl: ${JSON.stringify(ctx.baseUrl)} });
${driverCalls({
  processAuth: `const r = signedRequest('processAuth'); return (await directApi({ body: r.body as any, headers: r.headers })).data;`,
  listPayIds: `return (await listPayIds({ headers: signedRequest('listPayIds').headers as any })).data;`,
})}`,
  );
  const { checks, operationsSucceeded, typecheckLine, calledLine } = clientCheckReport(check, 'SDK');
  return {
    tool: '@hey-api/openapi-ts',
    version,
    role: 'code generation (TypeScript SDK, fetch client)',
    loadsStrict: true,
    checks,
    operationsSucceeded,
    works: [
      'generates an SDK: one function per path operation, request unions for the shared paths, errors and answers typed',
      typecheckLine,
      calledLine,
    ],
    limits: [
      {
        what: "one function per path: a shared path (/post) is one function taking the union of its methods' requests, answering the union of their results",
        why: 'the generator works per path and verb; nothing in OpenAPI ties a result to the method sent',
        workaround: "the package's client (payment-gateway-contract/client) has one typed method per operation",
        outsideDocument: true,
      },
      {
        what: "does not sign: body hashes, the credential headers and SVC-MESSAGEHASH are the caller's",
        why: 'the hashes are computed from the passphrase by recipes (x-hash-recipes) no generator reads',
        workaround:
          'sign with payment-gateway-contract/signing (signBodyHashes, signHeaders) before the call, or in a request interceptor of the client',
        outsideDocument: true,
      },
      {
        what: 'needs TypeScript 5 or 6 beside it: with TypeScript 7 (the native port, npm latest) it crashes at start',
        why: "it builds code with TypeScript's compiler API, which 7 does not ship (\"Cannot read properties of undefined (reading 'AnyKeyword')\")",
        workaround: 'pin typescript@5 next to it (scripts/tools/package.json does)',
        outsideDocument: true,
      },
    ],
    seconds: secondsSince(start),
  };
};

export default run;
