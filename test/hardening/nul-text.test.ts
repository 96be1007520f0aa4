// Finding: on PostgreSQL a NUL character (U+0000) in a request's text reached a SQL parameter, which
// PostgreSQL refuses ("invalid byte sequence for encoding UTF8: 0x00"): 143 of the public API's text
// fields and parameters were answered -4 (HTTP 500), a batch line holding one failed its whole batch,
// and the control API's bodies, queries and Basic credentials were answered -4 too; SQLite stored the
// NUL and answered. Now no identifier or text of the gateway holds one (runtime/nul-text.ts,
// spec/refusals.yaml validationRefusals.nul): a field, a parameter or a credential header that holds a
// NUL is refused -2 naming it, in the wire format the caller used, before anything is looked up or
// stored, on every store alike. Each table below runs on each store the tests have (PostgreSQL when
// PGW_TEST_DATABASE_URL names one).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildRequest, requestExamples } from '../../contract/index.ts';
import { operations, type ContractOperation } from '../../generated/operations.ts';
import { protocols } from '../../generated/protocols.ts';
import type { RunningSandbox } from '../../sandbox/index.ts';
import { freshDatabase, SKIP_PG, STORES, startSandboxOn, type TestSandbox } from '../sandbox/support.ts';
import { BATCH_HEADER, batchBody, counts, hardeningSandbox, merchant, send, signed, storedCard } from './support.ts';

if (STORES.length === 1) it.skip(`NUL characters on PostgreSQL: ${SKIP_PG}`, () => {});

type Path = (string | number)[];

/** The path of every text in an example body (its method aside: that names the operation). */
function* texts(value: unknown, at: Path = []): Generator<Path> {
  if (typeof value === 'string') {
    if (at.join('.') !== 'method') yield at;
  } else if (Array.isArray(value)) for (let i = 0; i < value.length; i++) yield* texts(value[i], [...at, i]);
  else if (value && typeof value === 'object') for (const [k, v] of Object.entries(value)) yield* texts(v, [...at, k]);
}

const at = (value: any, path: Path): any => path.reduce((v, k) => v[k], value);
const setAt = (value: any, path: Path, text: string): any => {
  if (!path.length) return text;
  const copy = Array.isArray(value) ? [...value] : { ...value };
  copy[path[0]!] = setAt(value[path[0]!], path.slice(1), text);
  return copy;
};
/** A path as the refusals name a field: 'transactions[0].payee.name'. */
const fieldName = (path: Path) =>
  path.reduce<string>((name, k) => (typeof k === 'number' ? `${name}[${k}]` : name ? `${name}.${k}` : k), '');
/** The text with a NUL character put inside it (or as all of it, when it is empty). */
const withNul = (text: string, row: number) => {
  const cut = text.length ? row % (text.length + 1) : 0;
  return `${text.slice(0, cut)}\u0000${text.slice(cut)}`;
};

interface Row {
  label: string;
  op: ContractOperation;
  wire: string;
  kind: 'Field' | 'Parameter' | 'Header';
  name: string;
  build: (nul: (text: string) => string) => ReturnType<typeof buildRequest>;
}

/** Every text of every operation's request examples, every path and query parameter, in every wire format it is served in. */
function rows(): Row[] {
  const out: Row[] = [];
  for (const op of operations)
    for (const wire of op.protocols) {
      const examples = requestExamples(op);
      for (const { name: example, value } of examples)
        for (const path of texts(value))
          out.push({
            label: `${op.operationId} ${wire} ${example} ${fieldName(path)}`,
            op,
            wire,
            kind: 'Field',
            name: fieldName(path),
            // Unsigned: the NUL is refused before the credentials are checked (a hash field's too).
            build: (nul) => buildRequest(op, { body: setAt(value, path, nul(at(value, path))), wire }),
          });
      const body = examples[0]?.value;
      const query = Object.fromEntries(
        op.parameters.filter((p) => p.in === 'query' && p.example).map((p) => [p.name, p.example!]),
      );
      // A credential header too, as an adapter that lets it through (Node's HTTP parser answers a bare
      // 400 to a NUL in any header) hands it to the core.
      for (const header of Object.values(op.headers ?? {}))
        out.push({
          label: `${op.operationId} ${wire} header ${header}`,
          op,
          wire,
          kind: 'Header',
          name: header!,
          build: (nul) => {
            const request = buildRequest(op, { body, wire });
            const name = header!.toLowerCase();
            return { ...request, headers: { ...request.headers, [name]: nul(request.headers[name] ?? '') } };
          },
        });
      for (const p of op.parameters.filter((q) => q.in === 'path' || q.in === 'query'))
        out.push({
          label: `${op.operationId} ${wire} ${p.in} ${p.name}`,
          op,
          wire,
          kind: 'Parameter',
          name: p.name,
          build: (nul) =>
            p.in === 'path'
              ? buildRequest(op, { params: { [p.name]: nul(p.example ?? '') }, body, wire })
              : buildRequest(op, { query: { ...query, [p.name]: nul(p.example ?? '') }, body, wire }),
        });
    }
  return out;
}

describe.each(STORES)('on $name', ({ url }) => {
  let sb: RunningSandbox;
  let drop: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    const database = url ? await freshDatabase(url) : undefined;
    drop = database?.drop;
    sb = await hardeningSandbox(database?.url ?? ':memory:');
  });
  afterAll(async () => {
    await sb.close();
    await drop?.();
  });

  it("every text field and parameter of the public API holding a NUL is refused -2 naming it, in the caller's wire format, storing nothing", async () => {
    const table = rows();
    // Every operation, in both wire formats where it is served in both.
    expect(new Set(table.map((r) => r.op.operationId)).size).toBe(operations.length);
    expect(table.filter((r) => r.kind === 'Header').length).toBeGreaterThan(10);
    expect(table.filter((r) => r.wire === 'form').length).toBeGreaterThan(100);
    const before = await counts(sb);
    const wrong: string[] = [];
    for (const [i, row] of table.entries()) {
      const { response } = await send(
        sb,
        row.build((text) => withNul(text, i)),
      );
      const protocol = protocols.byId(row.wire)!;
      const text =
        typeof response.body === 'string' ? response.body : Buffer.from(response.body as Uint8Array).toString();
      const read = protocols.answeredIn(response.headers['content-type'])?.readAnswer(text);
      const answer = read && 'ok' in read ? read.ok : undefined;
      const expected = {
        type: protocol.answerType,
        responseCode: '-2',
        responseMessage: `${row.kind} '${row.name}' is invalid: holds a NUL character`,
      };
      const got = {
        type: response.headers['content-type'],
        responseCode: String(answer?.responseCode),
        responseMessage: answer?.responseMessage,
      };
      if (response.status >= 500 || JSON.stringify(got) !== JSON.stringify(expected))
        wrong.push(`${row.label}: ${response.status} ${text.slice(0, 160)}`);
    }
    expect(wrong, `${wrong.length} of ${table.length}`).toEqual([]);
    expect(await counts(sb)).toEqual(before);
  });

  it('a batch line whose field holds a NUL is refused on its own, naming the field; the others run', async () => {
    const card = await storedCard(sb);
    const good = `R1,1.00,AUD,Good,${card.cardID},${card.cardKey}`;
    const columns = BATCH_HEADER.split(',');
    const cells = ['R2', '1.00', 'AUD', 'Product', card.cardID, card.cardKey];
    const bad = columns.map((_, i) => cells.map((c, j) => (i === j ? withNul(c, 1) : c)).join(','));
    const stored = await send(sb, signed('processBatch', batchBody([BATCH_HEADER, good, ...bad, ''].join('\n'))));
    expect(stored.json).toMatchObject({ responseCode: '0' });
    const results = await send(
      sb,
      signed('retrieveBatch', { method: 'retrieveBatch', ...merchant, batchUUID: stored.json.batchUUID }),
    );
    const csv = Buffer.from(results.response.body as Uint8Array | string).toString();
    const lines = csv.trim().split('\n').slice(1);
    expect(lines[0]).toMatch(/^R1,[^,]+,1\.00,0,/);
    expect(lines.slice(1)).toEqual(
      columns.map(
        (c) => `${c === 'transactionReferenceID' ? '' : 'R2'},,,-2,Field '${c}' is invalid: holds a NUL character`,
      ),
    );
  });
});

/** The control API's bodies and query strings, through its HTTP server. */
describe.each(STORES)('the control API on $name', ({ url }) => {
  let t: TestSandbox;
  beforeAll(async () => {
    t = await startSandboxOn(url, { control: true });
  });
  afterAll(() => t.close());

  const nul = 'a\u0000b';
  const CASES: [verb: string, path: string, body: unknown, message: string][] = [
    ['POST', '/outcomes/next', { operationId: nul, outcome: 'expired' }, "Field 'operationId'"],
    ['POST', '/notifications', { event: 'directDebitOutcome', transactionID: nul }, "Field 'transactionID'"],
    ['POST', '/notifications', { event: 'merchantCreated', for: nul }, "Field 'for'"],
    ['POST', '/notifications', { event: 'directDebitOutcome', transactionID: 'x', set: { a: nul } }, "Field 'set.a'"],
    ['POST', '/direct-debits/DD-1/dishonour', { hashSalt: nul }, "Field 'hashSalt'"],
    ['POST', '/deliveries/1/resend', { notifyURL: `https://a.test/${nul}` }, "Field 'notifyURL'"],
    ['PUT', '/chaos', { notifyURL: `https://a.test/${nul}` }, "Field 'notifyURL'"],
    ['DELETE', '/chaos?notifyURL=https://a.test/%00', undefined, "Parameter 'notifyURL'"],
    ['GET', '/requests?operation=a%00', undefined, "Parameter 'operation'"],
    ['GET', '/deliveries?after=%00', undefined, "Parameter 'after'"],
  ];

  it.each(CASES)('%s %s %j is refused -2 naming it', async (verb, path, body, named) => {
    const { seed } = t.sandbox;
    const response = await fetch(`${t.base}/_sandbox${path}`, {
      method: verb,
      headers: {
        authorization: `Basic ${btoa(`${seed.merchantUUID}:${seed.apiKey}`)}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    expect(await response.json()).toEqual({
      responseCode: -2,
      responseMessage: `${named} is invalid: holds a NUL character`,
    });
  });

  it('Basic credentials that hold a NUL are no account: refused -1', async () => {
    const { seed } = t.sandbox;
    for (const credentials of [`${seed.merchantUUID}\u0000:${seed.apiKey}`, `${seed.merchantUUID}:\u0000`]) {
      const response = await fetch(`${t.base}/_sandbox/clock`, {
        headers: { authorization: `Basic ${Buffer.from(credentials).toString('base64')}` },
      });
      expect((await response.json()).responseCode).toBe(-1);
    }
  });
});
