// The docs-only view of the document, derived at build time (the published spec keeps its shared
// paths): each method of a shared path becomes an operation of its own, so that it has its own
// sidebar entry, URL (#operation/processCapture) and page, with its own request, result and refusal
// schemas and examples; every operation gets code samples (curl with its hash, the typed client,
// and PHP, Python, Ruby and C# that compute their own hashes); the hash recipes are written out
// with their canonical form and a worked example.
import { FIELD_RULES, recipeFormula } from '../../runtime/recipe-text.ts';
import { hashPreimage, type HashRecipe } from '../../runtime/signing.ts';
import { recipesOf } from './hash-recipes.ts';
import type { Protocol } from '../../runtime/protocols/protocol.ts';
import { exampleValue, type Doc, type Operation } from '../lib/contract.ts';
import { protocolsOf } from '../lib/protocols.ts';
import { shapeOf } from './shapes.ts';
import { clientName } from './client.ts';
import { languageSamples, stepLines } from './samples/index.ts';
import { samplePlan } from './samples/plan.ts';

const pointerName = (p: string) => p.split('/').pop()!;
const examplesOf = (names: readonly string[] | undefined) =>
  Object.fromEntries((names ?? []).map((n) => [n, { $ref: `#/components/examples/${n}` }]));

/** The docs path of a method of a shared path: the real path and the method, e.g. /post#processCapture. */
export const methodPath = (op: Operation) => `${op.path}#${op.method}`;

/** The spec's own protocol, and those added beside it on the operation's path (the form/XML mode's). */
const ownProtocol = (doc: Doc) => protocolsOf(doc).canonical;
const addedProtocols = (op: Operation, doc: Doc): Protocol[] =>
  protocolsOf(doc).all.filter((p) => p.paths?.includes(op.path));

/** Examples written in a protocol by the code the server runs: `write` is its request's or its answer's writer. */
function wireExamples(
  doc: Doc,
  names: readonly string[] | undefined,
  write: (value: Record<string, unknown>) => string,
) {
  return Object.fromEntries(
    (names ?? []).map((n) => {
      const value = exampleValue(doc, n) as Record<string, unknown>;
      const summary = doc.components.examples?.[n]?.summary;
      return [n, { ...(summary ? { summary } : {}), value: write(value) }];
    }),
  );
}

/** The answer examples an operation's page shows: its results and refusals (a file result is no example). */
const answerExamples = (op: Operation, doc: Doc) =>
  op.resultType === ownProtocol(doc).answerType || !op.resultType
    ? [...(op.examples.result ?? []), ...(op.examples.refusal ?? [])]
    : op.examples.refusal;

/** The schema of an operation's answers as the page shows them: result or refusal, or the refusal beside a file. */
const answerSchema = (op: Operation, doc: Doc) =>
  op.resultType === ownProtocol(doc).answerType || !op.resultType
    ? { oneOf: [{ $ref: op.result! }, { $ref: op.refusal! }] }
    : { $ref: op.refusal! };

/**
 * The answers of an operation in an added protocol, by the label the page's example picker shows
 * (the example's summary, else its name): the same answers as the spec's own protocol's, written by it.
 */
export function answersIn(protocol: Protocol, op: Operation, doc: Doc): Record<string, string> {
  if (!addedProtocols(op, doc).some((p) => p.id === protocol.id)) return {};
  const shape = shapeOf(doc, answerSchema(op, doc));
  return Object.fromEntries(
    Object.entries(wireExamples(doc, answerExamples(op, doc), (value) => protocol.writeAnswer(value, shape))).map(
      ([name, e]) => [e.summary ?? name, e.value],
    ),
  );
}

function responseOf(op: Operation, doc: Doc): Record<string, unknown> {
  const own = ownProtocol(doc).answerType;
  const structured = op.resultType === own || !op.resultType;
  const answers = answerExamples(op, doc);
  const schema = answerSchema(op, doc);
  const content: Record<string, unknown> = structured
    ? { [own]: { schema, examples: examplesOf(answers) } }
    : {
        [op.resultType!]: { schema: { $ref: op.result! } },
        [own]: { schema, examples: examplesOf(answers) },
      };
  // In each added protocol the same answers, written by it (a file result stays the file).
  const shape = shapeOf(doc, schema);
  for (const protocol of addedProtocols(op, doc))
    content[protocol.answerType] = {
      ...protocol.describeAnswer!(schema),
      examples: wireExamples(doc, answers, (value) => protocol.writeAnswer(value, shape)),
    };
  return {
    [op.status]: {
      description: `\`${pointerName(op.result!)}\` when processed (responseCode 0 or above); \`${pointerName(op.refusal!)}\` when refused (responseCode below 0). Always HTTP ${op.status}.`,
      content,
    },
  };
}

/** The first request example, and the body a caller of the typed client writes (less what it fills in). */
function callerBody(op: Operation, doc: Doc, value: Record<string, unknown>): Record<string, unknown> {
  const filled = new Set(['method', ...(op.hashes ?? []).filter((h) => h.in !== 'header').map((h) => h.name)]);
  for (const kind of op.credentials ?? []) {
    const fields = doc['x-body-credentials'][kind]!;
    for (const f of [fields.id, fields.key]) if (f) filled.add(f);
  }
  return Object.fromEntries(Object.entries(value).filter(([k]) => !filled.has(k)));
}

const indent = (text: string, by: string) => text.split('\n').join(`\n${by}`);

/** The version header every request carries, and its one value (the ApiVersion parameter). */
const versionHeader = (doc: Doc): { name: string; value: string } => {
  const p = doc.components.parameters.ApiVersion;
  return { name: p.name, value: p.schema.const };
};

/** The -H lines of an operation's header credentials, by its security schemes' names and roles. */
function credentialHeaders(op: Operation, doc: Doc, hash: string): string[] {
  const sandbox = doc.info['x-sandbox'];
  const value: Record<string, string> = { accountId: sandbox.merchantUUID, apiKey: sandbox.apiKey };
  const fixed: string[] = [];
  const signed: string[] = [];
  for (const name of op.security) {
    const scheme = doc.components.securitySchemes[name];
    const role = scheme['x-credential'];
    if (role === 'messageHash') signed.push(`  -H "${scheme.name}: $(${hash})" \\`);
    else fixed.push(`-H '${scheme.name}: ${value[role]}'`);
  }
  return [...(fixed.length ? [`  ${fixed.join(' ')} \\`] : []), ...signed];
}

/** A code sample as Redocly reads it (x-codeSamples): its label names the language the reader picks. */
export interface CodeSample {
  lang: string;
  label: string;
  source: string;
}

/** What every curl sample of an operation starts from: its example body, its URL and its hashes' comments. */
function sampleBasics(op: Operation, doc: Doc) {
  const example = op.examples.request[0];
  const body = example ? (exampleValue(doc, example) as Record<string, unknown>) : undefined;
  const params = Object.fromEntries(
    op.parameters.filter((p) => p.in === 'path').map((p) => [p.name, p.example ?? `{${p.name}}`]),
  );
  const url = op.path.replace(/\{(\w+)\}/g, (_, n: string) => params[n] ?? `{${n}}`);
  const comments: string[] = [];
  for (const h of op.hashes ?? []) {
    const recipe = recipesOf(doc)[h.recipe]!;
    comments.push(
      `# ${h.name} (${h.in === 'header' ? 'header' : 'body'}), recipe ${h.recipe}: ${recipeFormula(recipe)}`,
    );
  }
  if (body && (op.hashes ?? []).some((h) => h.in === 'body'))
    comments.push(
      `# The body below is signed for the sandbox; to sign your own: payment-gateway sign ${op.operationId} --body @body.json --signed-body`,
    );
  return { body, params, url, comments };
}

/** The spec's own protocol's samples: curl with the hash shown (and how to make it), the typed client's call, PHP, Python, Ruby, C#. */
export function codeSamples(op: Operation, doc: Doc): CodeSample[] {
  const { body, params, url, comments } = sampleBasics(op, doc);
  // curl sends GET, or POST once it has a body (-d): any other verb is named.
  const implied = body ? 'post' : 'get';
  const verb = op.verb === implied ? '' : ` -X ${op.verb.toUpperCase()}`;
  const version = versionHeader(doc);
  const own = ownProtocol(doc);
  const lines = [`curl -s${verb} "$GATEWAY_URL${url}" \\`, `  -H '${version.name}: ${version.value}' \\`];
  // The header names and the sandbox's credentials come from the operation table's source (its
  // security schemes) and info.x-sandbox, so a sample cannot name a header the gateway does not read.
  if (op.security.length) {
    const sign = `payment-gateway sign ${op.operationId}${Object.entries(params)
      .map(([k, v]) => ` --param ${k}=${v}`)
      .join('')}${body ? ' --body "$BODY"' : ''}`;
    lines.push(...credentialHeaders(op, doc, sign));
  }
  if (body) {
    lines.push(`  -H 'content-type: ${own.requestType}' \\`, `  -d '${own.writeRequest(body)}'`);
  } else {
    lines[lines.length - 1] = lines[lines.length - 1]!.replace(/ \\$/, '');
  }
  // The operation's one sample plan (samples/plan.ts): its steps head curl's and the client's sample,
  // and the other languages render it whole.
  const plan = samplePlan(op, doc);
  const steps = stepLines(op, doc, plan);
  const curl = [
    ...steps.map((l) => `# ${l}`),
    ...comments,
    ...(body && op.security.length ? [`BODY='${JSON.stringify(body)}'`] : []),
    ...lines,
  ].join('\n');

  const tag = doc.tags.find((t: { name: string }) => t.name === op.tags[0])?.['x-client'];
  const samples: CodeSample[] = [{ lang: 'Shell', label: 'curl', source: curl }];
  if (tag && !op.webhook) {
    const call = `client${tag.group ? `.${tag.group}` : ''}.${clientName(op, tag)}`;
    const args = [
      ...op.parameters.filter((p) => p.in === 'path').map((p) => JSON.stringify(params[p.name])),
      ...(body ? [indent(JSON.stringify(callerBody(op, doc, body), null, 2), '')] : []),
    ];
    const { merchantUUID, apiKey, passphrase } = doc.info['x-sandbox'];
    const source = [
      "import { createGatewayClient, isApproved } from 'payment-gateway-contract/client';",
      '',
      `const client = createGatewayClient({ baseUrl: process.env.GATEWAY_URL!, merchantUUID: '${merchantUUID}', apiKey: '${apiKey}', passphrase: '${passphrase}' });`,
      ...steps.map((l) => `// ${l}`),
      `// method, credentials and hashes are filled in by the client`,
      `const answer = await ${call}(${args.join(', ')});`,
      `if (isApproved(answer)) console.log(answer); // ${pointerName(op.result ?? '')}`,
      `else console.log(answer.responseCode, answer.responseMessage); // declined (> 0) or refused (< 0)`,
    ].join('\n');
    samples.push({ lang: 'TypeScript', label: 'TypeScript', source });
  }
  // PHP, Python, Ruby and C#, each computing its own hashes (scripts/generators/samples/).
  for (const { lang, label, source } of languageSamples(op, doc, plan)) samples.push({ lang, label, source });
  return samples;
}

/**
 * An added protocol's samples of an operation (none where the operation does not take it), under the
 * own protocol's language labels: the page shows a mode's samples when the reader picks its media type
 * (sample-modes/, docs/WIRE-FORMATS.md). Only curl: the other languages send the own protocol.
 */
export function samplesIn(mode: Protocol, op: Operation, doc: Doc): CodeSample[] {
  const { body, url, comments } = sampleBasics(op, doc);
  const protocol = body && addedProtocols(op, doc).find((p) => p.id === mode.id);
  if (!body || !protocol) return [];
  const headers = Object.entries(protocol.requestHeaders(true)).map(([k, v]) => `  -H '${k}: ${v}' \\`);
  return [
    {
      lang: 'Shell',
      label: 'curl',
      source: [
        `# ${protocol.docs!.note}`,
        ...comments,
        `curl -s "$GATEWAY_URL${protocol.docs!.path(url)}" \\`,
        ...headers,
        `  -d '${protocol.writeRequest(body)}'`,
      ].join('\n'),
    },
  ];
}

/** Replaces each shared path's one operation with one operation per method. */
export function splitSharedPaths(out: Doc, ops: Operation[], describe: (op: Operation) => string): void {
  for (const [p, item] of Object.entries<any>(out.paths)) {
    const shared = item.post;
    if (!shared?.['x-methods']) continue;
    const {
      'x-methods': _methods,
      requestBody: _body,
      responses: _responses,
      operationId: _id,
      summary: _summary,
      description: _description,
      ...common
    } = shared;
    delete out.paths[p];
    const own = ownProtocol(out).requestType;
    for (const op of ops.filter((o) => !o.webhook && o.path === p && o.method)) {
      const added = addedProtocols(op, out);
      out.paths[methodPath(op)] = {
        post: {
          ...common,
          operationId: op.operationId,
          summary: op.summary,
          description: `Sent as \`POST ${p}\` with \`"method": "${op.method}"\`; it shares the path with ${Object.keys(shared['x-methods']).length - 1} other methods, told apart by \`method\`.${added.map((protocol) => ` Also taken ${protocol.docs!.taken(op.method!)}: the request and answer samples show both modes (docs/WIRE-FORMATS.md).`).join('')}\n\n${describe(op)}`,
          ...(op.deprecated ? { deprecated: true } : {}),
          requestBody: {
            required: true,
            content: {
              [own]: { schema: { $ref: op.request! }, examples: examplesOf(op.examples.request) },
              ...Object.fromEntries(
                added.map((protocol) => [
                  protocol.requestType,
                  {
                    schema: { $ref: op.request! },
                    ...(shared.requestBody.content[protocol.requestType]?.encoding
                      ? { encoding: shared.requestBody.content[protocol.requestType].encoding }
                      : {}),
                    examples: wireExamples(out, op.examples.request, protocol.writeRequest),
                  },
                ]),
              ),
            },
          },
          responses: responseOf(op, out),
          'x-codeSamples': codeSamples(op, out),
        },
      };
    }
  }
}

/** The recipes section of the introduction: every recipe's canonical form, who uses it, a worked example. */
export function recipesSection(doc: Doc, ops: Operation[]): string {
  const spec = doc['x-hash-recipes'] as Record<
    string,
    HashRecipe & { example?: { passphrase: string; fields: Record<string, unknown>; hash: string } }
  >;
  const parts = [
    '## Hash recipes',
    `Every hash is computed from the account's passphrase (never sent) and fields of the request, by the recipe the operation names. ${FIELD_RULES}`,
    "`payment-gateway sign RECIPE --field NAME=VALUE … --preimage` prints the exact text hashed and the hash; `payment-gateway sign OPERATION --body @body.json --signed-body` fills in an operation's hashes.",
  ];
  for (const [name, recipe] of Object.entries(spec)) {
    const users = ops
      .filter((o) => [...(o.hashes ?? []), ...(o.resultHashes ?? [])].some((h) => h.recipe === name))
      .map((o) => `\`${o.operationId}\``);
    const lines = [
      `**\`${name}\`** (${recipe.source === 'public' ? 'used by the public clients of the real service' : 'defined by this contract: no public source shows it'}). ${recipe.summary ?? ''}`,
      '',
      '```text',
      recipeFormula(recipe, true),
      '```',
      '',
      `Used by: ${users.join(', ') || 'notifications'}.`,
    ];
    if (recipe.example) {
      const { passphrase, fields, hash } = recipe.example;
      lines.push(
        '',
        `Worked example: passphrase \`${passphrase}\`, fields \`${JSON.stringify(fields)}\`; text hashed \`${hashPreimage(recipe, passphrase, fields)}\`; hash \`${hash}\`.`,
      );
      if (recipe.algorithm === 'hmac-sha256')
        lines.push(
          '',
          'The text hashed is the canonical JSON: path parameters, query parameters and top-level body fields in one object (a body field replaces a parameter of the same name), keys sorted by UTF-16 code unit at every level, no white space; the key is the passphrase as UTF-8.',
        );
    }
    parts.push(lines.join('\n'));
  }
  return parts.join('\n\n');
}
