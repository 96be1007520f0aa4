// openapi-backend on the same bundled spec over node:http: requests validated by the framework,
// responses by its validateResponse, as its documentation shows.
import { readFileSync } from 'node:fs';
import { canonicalOnly } from '../../runtime/document.ts';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import addFormats from 'ajv-formats';
import { OpenAPIBackend, type Context } from 'openapi-backend';
import { answerFor } from './results.ts';

// The JSON mode's document: the peers are compared on the JSON mix (the form/XML mode is this package's alone).
const spec = canonicalOnly(JSON.parse(readFileSync(new URL('../../generated/openapi.json', import.meta.url), 'utf8')));
// quick: its own OpenAPI 3.1 meta-schema rejects the SVC-API-VERSION header parameter (valid 3.1, and
// accepted by Redocly and swagger-parser), and in non-strict mode it then never dereferences the
// document. quick skips that check; its validators then compile on first use, during the warm-up.
const api = new OpenAPIBackend({
  definition: spec,
  strict: false,
  quick: true,
  ajvOpts: { strict: false },
  // The same formats the other servers check.
  customizeAjv: (ajv) => {
    addFormats.default(ajv as never);
    ajv.addFormat('binary', true);
    return ajv;
  },
});
// The other servers of the benchmark check the requests' shape, not their credentials (the hashes
// need the passphrase): the schemes are accepted as present, so openapi-backend proceeds as they do,
// instead of warning per request that no handler checked them.
for (const scheme of Object.keys(spec.components.securitySchemes)) api.registerSecurityHandler(scheme, () => true);
api.register({
  notFound: () => ({ status: 404, body: { responseCode: '-2', responseMessage: 'No operation' } }),
  validationFail: (c: Context) => ({
    status: 400,
    body: { responseCode: '-2', responseMessage: c.validation.errors?.[0]?.message },
  }),
  notImplemented: (c: Context) => {
    const answer = answerFor(c.operation.path, c.request.method, c.request.requestBody)!;
    const check = c.api.validateResponse(answer.body, c.operation, answer.status);
    return check.errors?.length
      ? { status: 500, body: { responseCode: '-4', responseMessage: 'Response invalid' } }
      : answer;
  },
});
await api.init();

const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', async () => {
    const url = new URL(req.url ?? '/', 'http://x');
    const text = Buffer.concat(chunks).toString();
    const result = (await api.handleRequest({
      method: req.method ?? 'GET',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers: req.headers as Record<string, string>,
      body: text ? JSON.parse(text) : undefined,
    })) as { status: number; body: unknown };
    const body = JSON.stringify(result.body);
    res.writeHead(result.status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
});
server.listen(Number(process.argv[2] ?? 0), '127.0.0.1', () =>
  console.log(`ready ${(server.address() as AddressInfo).port}`),
);
