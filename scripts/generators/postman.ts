// generated/postman.json: a Postman collection (format v2.1) of every operation a client calls, one
// request per operation and method, its body the spec's first request example. Credentials are
// collection variables; a collection-level pre-request script computes every hash the request
// carries (body hashes and the SVC-MESSAGEHASH header) from the spec's recipes, so that a request
// sent from Postman, or run by Newman, is accepted as it is and stays accepted when it is edited.
//
// Why not openapi-to-postmanv2: it makes one request per path, so /post would be a single request
// holding one of its 23 methods, and nothing in it can compute the contract's hashes.
import { protocolsOf } from '../lib/protocols.ts';
import { strToU8, zipSync } from 'fflate';
import { resolvePointer, type Doc, type Operation } from '../lib/contract.ts';
import { BANNER } from './banner.ts';
import { CREDENTIAL_VARIABLES, hashVariable, signingScript } from './postman-signing.ts';
import {
  consumedBy,
  endsWhatItIsGiven,
  producedValues,
  requestExample,
  rotations,
  runOrder,
  type Produced,
} from './postman-flow.ts';

const SCHEMA = 'https://schema.getpostman.com/json/collection/v2.1.0/collection.json';

/** What a processed request leaves for the next ones: produced values, and a rotated key. */
interface Follow {
  produces: Produced[];
  rotates: [string, string][];
}

/** The test each request runs (status, not refused), then what it hands on to later requests. */
function testScript(op: Operation, follow: Follow): string[] {
  const lines = [`pm.test('HTTP ${op.status}', () => pm.response.to.have.status(${op.status}));`];
  if (op.resultType) {
    lines.push(
      `pm.test('answers ${op.resultType}', () => pm.expect(pm.response.headers.get('Content-Type')).to.include('${op.resultType}'));`,
    );
    return lines;
  }
  lines.push(
    `const answer = pm.response.json();`,
    `pm.test('processed, not refused (responseCode >= 0)', () => pm.expect(Number(answer.responseCode), answer.responseMessage).to.be.at.least(0));`,
  );
  if (!follow.produces.length && !follow.rotates.length) return lines;
  lines.push(`if (Number(answer.responseCode) >= 0) {`);
  for (const p of follow.produces) {
    lines.push(
      `  { const v = ${JSON.stringify(p.path)}.reduce((n, k) => (n == null ? n : n[k]), answer); if (v != null) pm.collectionVariables.set(${JSON.stringify(p.variable)}, String(v)); }`,
    );
  }
  if (follow.rotates.length) {
    lines.push(`  const sent = JSON.parse(pm.variables.replaceIn(pm.request.body.raw));`);
    // The seed: each purchase's cardKeyReplace becomes the key unless the request is refused.
    for (const [field, variable] of follow.rotates)
      lines.push(`  pm.collectionVariables.set(${JSON.stringify(variable)}, sent[${JSON.stringify(field)}]);`);
  }
  lines.push(`}`);
  return lines;
}

/**
 * A file a request uploads (a base64 zip of a CSV, described by x-csv-columns) whose example is too
 * short to be a real file: the collection sends a real one, its header the columns and one line.
 */
function uploadFile(schema: any): string | undefined {
  const columns: string[] | undefined =
    schema?.['x-csv-columns']?.[Object.keys(schema['x-csv-columns']).sort().at(-1)!];
  if (schema?.contentMediaType !== 'application/zip' || !columns) return undefined;
  const line = columns.map(
    (c) =>
      ({
        transactionReferenceID: 'B-1',
        transactionAmount: '15.00',
        transactionCurrency: 'AUD',
        transactionProduct: 'Batch item',
      })[c] ?? '',
  );
  const csv = `${columns.join(',')}\n${line.join(',')}\n`;
  const zip = zipSync({ 'batch.csv': [strToU8(csv), { mtime: new Date('2026-01-01T00:00:00Z'), level: 6 }] });
  return Buffer.from(zip).toString('base64');
}

/** The example body: credentials, hashes, references to earlier answers and files as variables. */
function bodyOf(
  doc: Doc,
  op: Operation,
  sandbox: Record<string, string>,
  fields: Map<string, Produced>,
  files: Map<string, string>,
): string | undefined {
  const example = requestExample(doc, op);
  if (!example) return undefined;
  const body = structuredClone(example);
  for (const key of ['merchantUUID', 'partnerUUID', 'apiKey'] as const) {
    if (body[key] === sandbox[key]) body[key] = `{{${key}}}`;
  }
  for (const use of op.hashes ?? [])
    if ((use.in ?? 'body') === 'body' && use.name in body) body[use.name] = `{{${hashVariable(use.name)}}}`;
  for (const [name, p] of fields) body[name] = `{{${p.variable}}}`;
  const properties = op.request ? (resolvePointer(doc, op.request)?.properties ?? {}) : {};
  for (const [name, schema] of Object.entries<any>(properties)) {
    const file = name in body ? uploadFile(schema) : undefined;
    if (file) {
      files.set(`${op.operationId}.${name}`, file);
      body[name] = `{{${op.operationId}.${name}}}`;
    }
  }
  return JSON.stringify(body, null, 2);
}

interface Context {
  doc: Doc;
  sandbox: Record<string, string>;
  apiVersion: { name: string; value: string };
  produced: Map<string, Produced>;
  rotations: Map<string, [string, string][]>;
  /** Variables the requests use, with their defaults (the examples' values). */
  used: Map<string, string>;
  files: Map<string, string>;
}

function requestItem(ctx: Context, op: Operation): unknown {
  const { doc, sandbox, apiVersion } = ctx;
  const header: { key: string; value: string }[] = [{ key: apiVersion.name, value: apiVersion.value }];
  const { fields, params } = consumedBy(doc, op, ctx.produced);
  for (const p of [...fields.values(), ...params.values()]) ctx.used.set(p.variable, resolveDefault(ctx, p));
  const body = bodyOf(doc, op, sandbox, fields, ctx.files);
  if (body !== undefined) header.push({ key: 'Content-Type', value: protocolsOf(doc).canonical.requestType });
  for (const scheme of op.security) {
    const s = doc.components.securitySchemes[scheme];
    const credential: string = s['x-credential'];
    header.push({
      key: s.name,
      value: `{{${credential === 'messageHash' ? hashVariable(s.name) : CREDENTIAL_VARIABLES[credential]}}}`,
    });
  }
  const path = op.path
    .split('/')
    .filter(Boolean)
    .map((seg) => seg.replace(/^\{(\w+)\}$/, ':$1'));
  const variable = op.parameters
    .filter((p) => p.in === 'path')
    .map((p) => ({
      key: p.name,
      value: params.has(p.name) ? `{{${params.get(p.name)!.variable}}}` : (p.example ?? ''),
    }));
  const query = op.parameters
    .filter((p) => p.in === 'query' && p.example !== undefined)
    .map((p) => ({ key: p.name, value: p.example! }));
  const raw = `{{baseUrl}}/${path.join('/')}${query.length ? `?${query.map((q) => `${q.key}=${encodeURIComponent(q.value)}`).join('&')}` : ''}`;
  return {
    name: op.operationId,
    request: {
      method: op.verb.toUpperCase(),
      header,
      ...(body === undefined ? {} : { body: { mode: 'raw', raw: body, options: { raw: { language: 'json' } } } }),
      url: {
        raw,
        host: ['{{baseUrl}}'],
        path,
        ...(variable.length ? { variable } : {}),
        ...(query.length ? { query } : {}),
      },
      description: `${op.summary}${op.method ? ` (\`method\`: ${op.method} on ${op.path})` : ''}.${op.deprecated ? ' Deprecated.' : ''} Example: \`${op.examples.request[0] ?? 'none (no body)'}\`.`,
    },
    event: [
      {
        listen: 'test',
        script: {
          type: 'text/javascript',
          exec: testScript(op, {
            produces: [...ctx.produced.values()].filter(
              (p) => p.producer === op.operationId && p.value === resolveDefault(ctx, p),
            ),
            rotates: ctx.rotations.get(op.operationId) ?? [],
          }),
        },
      },
    ],
  };
}

/** A variable's default: the value its producer's result example gives (not a later rotation of it). */
function resolveDefault(ctx: Context, p: Produced): string {
  return [...ctx.produced.values()].find((q) => q.variable === p.variable)!.value;
}

export function postmanCollection(doc: Doc, ops: Operation[], packageVersion: string): string {
  // The credentials become collection variables; the test card and customer stay in the bodies.
  const { merchantUUID, partnerUUID, apiKey, passphrase } = doc.info['x-sandbox'];
  const sandbox = { merchantUUID, partnerUUID, apiKey, passphrase };
  const versionParameter = doc.components.parameters.ApiVersion;
  const apiVersion = { name: versionParameter.name as string, value: String(versionParameter.schema.const) };
  const calls = ops.filter((op) => !op.webhook);
  const produced = producedValues(doc, calls);
  const ctx: Context = {
    doc,
    sandbox,
    apiVersion,
    produced,
    rotations: rotations(doc, calls, produced),
    used: new Map(),
    files: new Map(),
  };
  // Folders by tag, a folder after those whose answers it uses; operations that end what they are
  // given (removeCard, processVoid…) last, in a folder of their own, after everything that uses it.
  const folders: { name: string; description?: string | undefined; ops: Operation[] }[] = (
    doc.tags as { name: string; description?: string }[]
  )
    .map((tag) => ({
      name: tag.name,
      description: tag.description,
      ops: calls.filter((op) => op.tags[0] === tag.name && !endsWhatItIsGiven(op)),
    }))
    .filter((folder) => folder.ops.length);
  const cleanUp = calls.filter(endsWhatItIsGiven);
  const producers = (ops: Operation[]) =>
    new Set(
      ops.flatMap((op) => {
        const c = consumedBy(doc, op, produced);
        return [...c.fields.values(), ...c.params.values()].map((p) => p.producer);
      }),
    );
  const ordered: typeof folders = [];
  while (ordered.length < folders.length) {
    const done = new Set(ordered.flatMap((f) => f.ops.map((op) => op.operationId)));
    const next = folders.find(
      (f) =>
        !ordered.includes(f) &&
        [...producers(f.ops)].every((id) => done.has(id) || f.ops.some((op) => op.operationId === id)),
    );
    if (!next) throw new Error("Postman: the folders use each other's answers in a cycle");
    ordered.push(next);
  }
  const byId = new Map(calls.map((op) => [op.operationId, op]));
  const freshProducers = (op: Operation) =>
    [...producers([op])].map((id) => byId.get(id)!).filter((p) => !endsWhatItIsGiven(p));
  const items = [
    ...ordered.map((f) => ({
      name: f.name,
      description: f.description,
      item: runOrder(doc, f.ops, produced).map((op) => requestItem(ctx, op)),
    })),
    ...(cleanUp.length
      ? [
          {
            name: 'Clean up',
            description:
              'Operations that end what they are given, each after a fresh run of what gives it (so that it ends something of its own: a void needs an authorisation nothing captured).',
            item: runOrder(doc, cleanUp, produced).flatMap((op) => [
              ...freshProducers(op).map((p) => requestItem(ctx, p)),
              requestItem(ctx, op),
            ]),
          },
        ]
      : []),
  ];
  const collection = {
    // Postman and Newman ignore members they do not know; this one says where the file comes from.
    'x-generated-by': BANNER,
    info: {
      name: `${doc.info.title} ${doc.info.version}`,
      description: `API ${doc.info.version}, package payment-gateway-contract ${packageVersion}. One request per operation (per \`method\` on the shared paths) with its example. Set \`baseUrl\` and the credentials in the collection's variables (the sandbox's by default); the collection's pre-request script computes every hash from them.`,
      version: packageVersion,
      schema: SCHEMA,
    },
    variable: [
      { key: 'baseUrl', value: doc.servers[0]!.variables!.base_url!.default },
      { key: 'merchantUUID', value: sandbox.merchantUUID },
      { key: 'partnerUUID', value: sandbox.partnerUUID },
      { key: 'apiKey', value: sandbox.apiKey },
      { key: 'passphrase', value: sandbox.passphrase },
      ...[...ctx.used].sort(([a], [b]) => a.localeCompare(b)).map(([key, value]) => ({ key, value })),
      ...[...ctx.files].map(([key, value]) => ({ key, value })),
    ],
    event: [{ listen: 'prerequest', script: { type: 'text/javascript', exec: signingScript(doc, calls) } }],
    item: items,
  };
  return `${JSON.stringify(collection, null, 2)}\n`;
}
