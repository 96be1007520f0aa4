// fastify + fastify-openapi-glue on the same bundled spec: each operation a Fastify route with the
// spec's JSON schemas, so requests are validated by Fastify's Ajv and answers serialised by its
// fast-json-stringify from the response schemas (Fastify's own way to check and shape an answer).
import { readFileSync } from 'node:fs';
import { canonicalOnly } from '../../runtime/document.ts';
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';
import openapiGlue from 'fastify-openapi-glue';
import { answerFor } from './results.ts';

// The JSON mode's document: the peers are compared on the JSON mix (the form/XML mode is this package's alone).
const spec = canonicalOnly(JSON.parse(readFileSync(new URL('../../generated/openapi.json', import.meta.url), 'utf8')));
const app = Fastify({
  logger: false,
  bodyLimit: 17 * 1024 * 1024,
  // Fastify's Ajv already has ajv-formats; strict off for the spec's x- keywords and `binary`.
  // Fastify's default removeAdditional strips, while trying one branch of a oneOf, the properties
  // the next branch needs (the body of an operation chosen by its `method`): off, as the other
  // servers validate; and no type coercion, which they do not do either.
  ajv: { customOptions: { strict: false, removeAdditional: false, coerceTypes: false } },
  // fast-json-stringify picks a oneOf/anyOf branch with an Ajv of its own, on schemas it merges from
  // the spec's allOf; a merged `format` or `maxLength` without a `type` is valid JSON Schema, which
  // Ajv's strictTypes would otherwise log once per schema.
  serializerOpts: { ajv: { strictTypes: false } },
});
app.setErrorHandler((error: { statusCode?: number; message: string }, _request, reply) => {
  reply.status(error.statusCode ?? 500).send({ responseCode: '-2', responseMessage: error.message });
});
// One handler for every operation: the example answer of the operation the request names.
const handler = async (request: FastifyRequest, reply: FastifyReply) => {
  const answer = answerFor(request.routeOptions.url!.replace(/:(\w+)/g, '{$1}'), request.method, request.body);
  if (!answer) return reply.status(404).send({ responseCode: '-2', responseMessage: 'No operation' });
  return reply.status(answer.status).send(answer.body);
};
await app.register(openapiGlue, { specification: spec, operationResolver: () => handler });
await app.listen({ port: Number(process.argv[2] ?? 0), host: '127.0.0.1' });
console.log(`ready ${(app.server.address() as AddressInfo).port}`);
