// The signing script of generated/postman.json and of the Portman run (scripts/generators/postman-signing.ts)
// as Postman's sandbox runs it (Newman), on requests shaped as Portman converts them: the examples'
// literal hashes in the body, no credential headers. Each body hash must come out as the spec's
// worked example (generated/hash-vectors.json) says, and a header-signed request must carry the
// account's two credential headers and the message hash runtime/signing.ts computes.
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import newman from 'newman';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashRecipes } from '../../generated/hash-recipes.ts';
import { messageHash } from '../../runtime/signing.ts';
import { signingScript } from '../../scripts/generators/postman-signing.ts';
import { doc, operations } from '../support/contract.ts';

const calls = operations.filter((op) => !op.webhook);
const vectors: { recipe: string; form: string; passphrase: string; inputs: Record<string, unknown>; hash: string }[] = (
  await import('../../generated/hash-vectors.json', { with: { type: 'json' } })
).default.vectors;

const received: { headers: IncomingHttpHeaders; body: any }[] = [];
const server = createServer((req, res) => {
  let text = '';
  req.on('data', (d) => (text += d));
  req.on('end', () => {
    received.push({ headers: req.headers, body: text ? JSON.parse(text) : {} });
    res.end('{}');
  });
});
let baseUrl = '';
beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** A request as Portman converts it: path parameters as `:name`, the body as given. */
function portmanRequest(
  op: (typeof calls)[number],
  body: Record<string, unknown> | undefined,
  params: Record<string, string> = {},
) {
  const segments = op.path
    .split('/')
    .filter(Boolean)
    .map((s) => s.replace(/^\{(\w+)\}$/, ':$1'));
  return {
    name: `converted ${op.operationId}`,
    request: {
      method: op.verb.toUpperCase(),
      header: body ? [{ key: 'Content-Type', value: 'application/json' }] : [],
      ...(body ? { body: { mode: 'raw', raw: JSON.stringify(body, null, 2) } } : {}),
      url: {
        raw: `{{baseUrl}}/${segments.join('/')}`,
        host: ['{{baseUrl}}'],
        path: segments,
        variable: Object.entries(params).map(([key, value]) => ({ key, value })),
      },
    },
  };
}

function run(items: any[], variables: Record<string, string>): Promise<void> {
  received.length = 0;
  const collection = {
    info: { name: 'signing', schema: 'https://schema.getpostman.com/json/collection/v2.1.0/collection.json' },
    event: [{ listen: 'prerequest', script: { type: 'text/javascript', exec: signingScript(doc, calls) } }],
    variable: Object.entries({ baseUrl, ...variables }).map(([key, value]) => ({ key, value })),
    item: items,
  };
  return new Promise((resolve, reject) =>
    newman.run({ collection, reporters: [] }, (error) => (error ? reject(error) : resolve())),
  );
}

describe('the signing script in Postman’s sandbox', () => {
  it('replaces each literal body hash with the one the published vector gives', async () => {
    const cases = vectors
      .filter((v) => v.form === 'current')
      .flatMap((v) => {
        const op = calls.find((o) => o.hashes?.some((h) => h.recipe === v.recipe && (h.in ?? 'body') === 'body'));
        const use = op?.hashes?.find((h) => h.recipe === v.recipe);
        return op && use ? [{ v, op, use }] : [];
      });
    expect(cases.length).toBeGreaterThan(10);
    // One run: the vectors share one passphrase.
    const [passphrase] = new Set(cases.map(({ v }) => v.passphrase));
    expect(cases.every(({ v }) => v.passphrase === passphrase)).toBe(true);
    await run(
      cases.map(({ v, op, use }) =>
        portmanRequest(op, { ...(op.method ? { method: op.method } : {}), ...v.inputs, [use.name]: 'a literal hash' }),
      ),
      { passphrase: passphrase!, partnerPassphrase: passphrase! },
    );
    expect(received.map((r, i) => r.body[cases[i]!.use.name])).toEqual(cases.map(({ v }) => v.hash));
  });

  it('adds the credential headers and the message hash a header-signed operation needs', async () => {
    const op = calls.find((o) => o.operationId === 'getPayoutStatus')!;
    const account = { merchantUUID: 'm-1234567', apiKey: 'key-1', passphrase: 'secret-1' };
    await run([portmanRequest(op, undefined, { payoutId: 'PAY-1' })], account);
    const headers = received[0]!.headers;
    const schemes = op.security.map((s) => doc.components.securitySchemes[s]);
    const named = (credential: string) =>
      headers[schemes.find((s: any) => s['x-credential'] === credential).name.toLowerCase()];
    expect(named('accountId')).toBe(account.merchantUUID);
    expect(named('apiKey')).toBe(account.apiKey);
    const recipe = op.hashes!.find((h) => h.in === 'header')!.recipe;
    expect(named('messageHash')).toBe(
      messageHash(hashRecipes[recipe as keyof typeof hashRecipes], account.passphrase, {
        params: { payoutId: 'PAY-1' },
      }),
    );
  });
});
