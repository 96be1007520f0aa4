// express + express-openapi-validator on the same bundled spec: requests and responses validated.
import { readFileSync } from 'node:fs';
import { canonicalOnly } from '../../runtime/document.ts';
import type { AddressInfo } from 'node:net';
import express from 'express';
import * as OpenApiValidator from 'express-openapi-validator';
import { answerFor } from './results.ts';

// The JSON mode's document: the peers are compared on the JSON mix (the form/XML mode is this package's alone).
const spec = canonicalOnly(JSON.parse(readFileSync(new URL('../../generated/openapi.json', import.meta.url), 'utf8')));
const app = express();
app.use(express.json({ limit: '17mb' }));
app.use(
  OpenApiValidator.middleware({
    apiSpec: spec,
    validateRequests: true,
    validateResponses: true,
    validateSecurity: false,
  }),
);
app.use((req, res) => {
  const route = (req as unknown as { openapi?: { openApiRoute: string } }).openapi?.openApiRoute ?? req.path;
  const answer = answerFor(route, req.method, req.body);
  if (!answer) return res.status(404).json({ responseCode: '-2', responseMessage: 'No operation' });
  res.status(answer.status).json(answer.body);
});
app.use(
  (
    err: { status?: number; message: string },
    _req: express.Request,
    res: express.Response,
    _next: express.NextFunction,
  ) => {
    res.status(err.status ?? 500).json({ responseCode: '-2', responseMessage: err.message });
  },
);
const server = app.listen(Number(process.argv[2] ?? 0), '127.0.0.1', () =>
  console.log(`ready ${(server.address() as AddressInfo).port}`),
);
