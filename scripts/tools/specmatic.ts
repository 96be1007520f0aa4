// Specmatic 2.55 on the published document (docs/TOOLS.md, "Specmatic"): a contract run against the
// started sandbox, without --lenient. Specmatic replays request examples paired by name with an answer
// (x-example-pairs) and generates the rest; it computes no signature, so each operation's request
// is also handed to it as an externalised example carrying the sandbox's signature (body hashes as
// the examples hold them, header hashes computed here by the one signer, runtime/signing.ts). A
// recording proxy between Specmatic and the sandbox sees every answer, so the report counts the
// operations that reached responseCode 0, not only Specmatic's schema verdicts.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { type ContractOperation, operations } from '../../generated/operations.ts';
import { type Doc, exampleValue } from '../../runtime/document.ts';
import { type SamplePlan, samplePlan } from '../generators/samples/plan.ts';
import { afterSteps, signPlan, UNREACHABLE } from '../generators/samples/send.ts';
import { contractOperations, type Operation } from '../lib/contract.ts';
import type { ToolContext, ToolLimit, ToolRunner } from './report.ts';
import { protocols } from '../../generated/protocols.ts';

const VERSION = '2.55.1';

// One request per operation and no resiliency variants: the default tries every enum combination
// (22,500 requests of one operation; /work/shared/reference/toolchain-notes.md).
const CONFIG = `version: 2
contracts: []
test:
  maxTestRequestCombinations: 1
  resiliencyTests:
    enable: none
`;

// Specmatic cannot read the form/XML mode (docs/WIRE-FORMATS.md): an XML answer whose schema is a
// union ("Node not recognized as XML type"), and a form example written as the wire string OpenAPI 3.1
// asks for ("Expected json value"). An OpenAPI Overlay hides the wire formats added beside the spec's
// own (their media types, from x-wire-formats) from it; the spec's own is whole.
const added = protocols.all.filter((p) => p.paths !== null);
const OVERLAY = `overlay: 1.0.0
info: {title: The JSON mode only (Specmatic reads neither the form requests nor the XML answers), version: 1.0.0}
actions:
${added
  .flatMap((p) => [
    `  - target: "$.paths.*.*.requestBody.content['${p.requestType}']"\n    remove: true`,
    `  - target: "$.paths.*.*.responses.*.content['${p.answerType}']"\n    remove: true`,
  ])
  .join('\n')}
  # /payframe's request examples are also /post's further processCard and processAuth forms (unpaired
  # there); Specmatic 2.55 then refuses their pairing on /payframe, asking for a header example by name.
  - target: "$.paths['/payframe'].post.responses['200'].content['application/json'].examples.processCardPayframe"
    remove: true
  - target: "$.paths['/payframe'].post.responses['200'].content['application/json'].examples.processAuthPayframe"
    remove: true
`;

interface Exchange {
  /** Sent with the sandbox's account: the signed example, not a request Specmatic generated. */
  signed: boolean;
  verb: string;
  /** The answer's media type: a zip or CSV result is a success without a responseCode. */
  type: string;
  url: string;
  body: string;
  status: number;
  answer: string;
}

/**
 * The plan with the values its steps choose for the records they make (a PayID, a card's next key)
 * made its own: Specmatic also sends the maker's own example, which would find its PayID already
 * registered by another operation's set-up. A prefix of letters and digits keeps an e-mail PayID and
 * an alphanumeric card key valid; a later request takes the value from the step as sent.
 */
function ownValues(plan: SamplePlan, operationId: string): SamplePlan {
  const tag = `s${operations.findIndex((o) => o.operationId === operationId)}x`;
  for (const request of [...plan.steps, plan])
    for (const take of request.takes) {
      const step = plan.steps[take.step]!;
      const field = String(take.from[0]);
      const filled = step.takes.some((t) => t.into === 'body' && t.name === field);
      if (
        take.source === 'request' &&
        !filled &&
        typeof step.body?.[field] === 'string' &&
        !step.body[field].startsWith(tag)
      )
        step.body[field] = tag + step.body[field];
    }
  return plan;
}

/**
 * The request a team's sandbox account signs for one operation, from the document's own example:
 * the records its example names made first on the sandbox (the docs samples' steps,
 * scripts/generators/samples/plan.ts, found from the examples alone), their identifiers set into it,
 * then signed by the one signer: body hashes by their recipes, the header hash (SVC-MESSAGEHASH) over
 * the request as sent. Each operation gets records of its own, so Specmatic's order does not matter.
 */
async function signedExample(doc: Doc, op: ContractOperation, table: Operation[], sandboxUrl: string): Promise<object> {
  const passphrase = doc.info['x-sandbox'].passphrase;
  // The first JSON answer (a zip or CSV result has no JSON example: its refusal then).
  const answer = [...(op.examples.result ?? []), ...(op.examples.refusal ?? [])]
    .map((n) => exampleValue(doc, n))
    .find((v) => v !== null && typeof v === 'object');
  const query = Object.fromEntries(
    op.parameters.filter((p) => p.in === 'query' && p.example).map((p) => [p.name, p.example!]),
  );
  const plan = ownValues(samplePlan(table.find((o) => o.operationId === op.operationId)!, doc)!, op.operationId);
  const request = signPlan(await afterSteps(plan, sandboxUrl, passphrase), passphrase, query);
  return {
    'http-request': {
      method: op.verb,
      path: request.path,
      headers: request.headers,
      ...(request.body ? { body: request.body } : {}),
    },
    // Specmatic loads an example only with an answer body; it checks the real answer against the
    // schema, not against these values.
    'http-response': { status: op.status, headers: { 'Content-Type': 'application/json' }, body: answer ?? {} },
  };
}

/**
 * A proxy in front of the sandbox that keeps every exchange. An exchange the sandbox cannot answer
 * (Specmatic gave up on it and the run ended, the sandbox stopped) is answered 502 and not kept, and
 * close() waits for those under way: an exchange left running once the run ended crashed the tools
 * run (an unhandled `fetch failed`, ECONNREFUSED, seen on a loaded CI machine).
 */
async function recordingProxy(
  target: string,
  account: string,
): Promise<{ url: string; exchanges: Exchange[]; close(): Promise<void> }> {
  const exchanges: Exchange[] = [];
  const underWay = new Set<Promise<void>>();
  const relay = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const headers = Object.fromEntries(
      Object.entries(req.headers).filter(([k]) => !['host', 'content-length', 'connection'].includes(k)),
    ) as Record<string, string>;
    const answer = await fetch(new URL(req.url!, target), {
      method: req.method!,
      headers,
      ...(body && req.method !== 'GET' ? { body } : {}),
    });
    // Bytes, not text: a zip answer passes through unchanged.
    const bytes = Buffer.from(await answer.arrayBuffer());
    const text = bytes.toString('utf8');
    const type = answer.headers.get('content-type') ?? 'application/json';
    const signed = body.includes(`"${account}"`) || Object.values(headers).includes(account);
    exchanges.push({
      signed,
      type,
      verb: req.method!.toLowerCase(),
      url: req.url!,
      body,
      status: answer.status,
      answer: text,
    });
    res.writeHead(answer.status, { 'content-type': type });
    res.end(bytes);
  };
  const server = http.createServer((req, res) => {
    const exchange = relay(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    underWay.add(exchange);
    void exchange.finally(() => underWay.delete(exchange));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    exchanges,
    close: async () => {
      server.close();
      server.closeIdleConnections();
      await Promise.all(underWay);
    },
  };
}

/** The operation an exchange called: its route, and on a shared path the body's `method`. */
function operationOf(exchange: Exchange): ContractOperation | undefined {
  const route = exchange.url.split('?')[0]!;
  let method: unknown;
  try {
    method = JSON.parse(exchange.body).method;
  } catch {}
  return operations.find(
    (op) =>
      op.verb.toLowerCase() === exchange.verb &&
      new RegExp(`^${op.path.replace(/\{\w+\}/g, '[^/]+')}$`).test(route) &&
      (op.method === null || op.method === method),
  );
}

const answerOf = (exchange: Exchange): { responseCode?: unknown; responseMessage?: string } => {
  try {
    return JSON.parse(exchange.answer);
  } catch {
    return {};
  }
};
const succeeded = (exchange: Exchange): boolean =>
  exchange.type.includes('json')
    ? Number(answerOf(exchange).responseCode) === 0
    : exchange.status < 300 && !exchange.type.startsWith('text/plain');

function runSpecmatic(ctx: ToolContext, args: string[]): Promise<string> {
  const jar = path.join(ctx.toolsDir, 'node_modules/specmatic/specmatic.jar');
  return new Promise((resolve, reject) => {
    const child = spawn('java', ['-jar', jar, ...args], { cwd: ctx.workDir });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('close', () => resolve(out));
  });
}

/** Why an operation's signed example, sent after its set-up steps, got no success; the refusal is the sandbox's answer to it. */
function whyNoSuccess(doc: Doc, op: ContractOperation, refusal: string | undefined): Omit<ToolLimit, 'what'> {
  const unreachable = UNREACHABLE[op.operationId];
  if (unreachable)
    return {
      why: `no request of a fresh sandbox gets its example's success: ${unreachable.why}`,
      workaround: "move the sandbox's clock or have it send the notification (its control API) before Specmatic runs",
      outsideDocument: true,
    };
  const result = exampleValue(doc, op.examples.result?.[0] ?? '') as { responseCode?: unknown } | null;
  if (result && Number(result.responseCode) !== 0)
    return {
      why: `its result example's own answer is responseCode ${result.responseCode}${refusal ? ` ("${refusal}")` : ''}, which the sandbox gives: the example documents no responseCode 0`,
      workaround: 'none needed: the operation answers as its example says',
      outsideDocument: false,
    };
  return {
    why: refusal
      ? `the sandbox refuses the signed example after its set-up steps: "${refusal}"`
      : 'Specmatic sent no request with the signed example',
    workaround: 'read the answer in the kept exchanges (PGW_TOOLS_KEEP=1, exchanges.json)',
    outsideDocument: false,
  };
}

const specmatic: ToolRunner = async (ctx) => {
  const started = Date.now();
  const doc: Doc = JSON.parse(readFileSync(ctx.documentJson, 'utf8'));
  const examples = path.join(ctx.workDir, 'examples');
  await mkdir(examples, { recursive: true });
  // The document's operations as the samples' planner reads them.
  const table = contractOperations(doc);
  for (const op of operations)
    await writeFile(
      path.join(examples, `${op.operationId}.json`),
      JSON.stringify(await signedExample(doc, op, table, ctx.baseUrl), null, 2),
    );
  await writeFile(path.join(ctx.workDir, 'specmatic.yaml'), CONFIG);
  await writeFile(path.join(ctx.workDir, 'overlay.yaml'), OVERLAY);
  const proxy = await recordingProxy(ctx.baseUrl, doc.info['x-sandbox'].merchantUUID);
  let log: string;
  try {
    log = await runSpecmatic(ctx, [
      'test',
      ctx.documentYaml,
      `--testBaseURL=${proxy.url}`,
      '--config=specmatic.yaml',
      `--examples=${examples}`,
      '--overlay-file=overlay.yaml',
    ]);
  } finally {
    await proxy.close();
  }
  await writeFile(path.join(ctx.workDir, 'specmatic.log'), log);
  await writeFile(path.join(ctx.workDir, 'exchanges.json'), JSON.stringify(proxy.exchanges, null, 1));
  const counts = /Tests run: (\d+), Successes: (\d+), Failures: (\d+), WIP: (\d+), Errors: (\d+)/.exec(log);
  const loaded = counts !== null && !/Specmatic Test Suite has FAILED/.test(log);

  const reached = new Set<string>();
  // The answer to the signed example (the sandbox's account), not to a request Specmatic generated.
  const refusal = new Map<string, string>();
  for (const exchange of proxy.exchanges) {
    const op = operationOf(exchange);
    if (!op) continue;
    if (succeeded(exchange)) reached.add(op.operationId);
    else if (exchange.signed)
      refusal.set(op.operationId, answerOf(exchange).responseMessage ?? `HTTP ${exchange.status}`);
  }
  const limits: ToolLimit[] = operations
    .filter((op) => !reached.has(op.operationId))
    .map((op) => ({
      what: `${op.operationId}${op.method ? ` (${op.verb.toUpperCase()} ${op.path})` : ''} reaches no success`,
      ...whyNoSuccess(doc, op, refusal.get(op.operationId)),
    }));
  limits.unshift({
    what:
      added.map((p) => `the ${p.label} mode (${p.requestType} requests, ${p.answerType} answers)`).join(', ') +
      ' is not tested',
    why: 'Specmatic reads no XML answer whose schema is a union ("Node not recognized as XML type") and wants a form example as an object, where OpenAPI 3.1 writes the wire string',
    workaround:
      'the runner hides that mode with an OpenAPI Overlay (--overlay-file); the stubs and the contract suite test it',
    outsideDocument: true,
  });
  const severalForms = operations.filter((o) => (o.forms?.length ?? 0) > 1).map((o) => o.operationId);
  limits.splice(1, 0, {
    what: `generated requests of an operation with several forms (${severalForms.join(', ')}) mix the forms: a body with a card, a token and a wallet at once, which the sandbox refuses (-2, the field named) as the answers document, and Specmatic counts as passed`,
    why: "a request of several forms is an anyOf of forms that exclude each other (each refuses a field another requires); Specmatic reads anyOf as 'any combination of the branches' and does not apply a branch's refusal of a field",
    workaround: 'none needed for the check; read those passes as refusals checked, not as purchases made',
    outsideDocument: true,
  });
  const [, , passed, failed, wip, errors] = (counts ?? []).map(Number);
  return {
    tool: 'Specmatic',
    version: VERSION,
    role: 'contract tests',
    loadsStrict: loaded,
    ...(counts ? { checks: { passed: passed!, failed: failed! + errors!, skipped: wip! } } : {}),
    operationsSucceeded: { succeeded: reached.size, total: operations.length },
    works: [
      'loads the document without --lenient (JSON mode)',
      'pairs every request example with its answer by name (x-example-pairs)',
      'signed requests as externalised examples: body hashes from the examples, header hashes computed by runtime/signing.ts',
    ],
    limits,
    seconds: Math.round((Date.now() - started) / 1000),
  };
};

export default specmatic;
