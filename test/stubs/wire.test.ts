// The form/XML mode (docs/WIRE-FORMATS.md): the form reader and the XML writer on their own, then
// the stubs choosing the mode, refusing bad forms in the caller's mode, typing a form's values from
// the schema, and holding XML answers to their schemas; and the sandbox answering the requests the
// public clients send the way their parsers read.
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildRequest, operation, signedBody } from '../../contract/index.ts';
import { readForm, readXml, typedForm, writeForm, writeXml, xmlText } from '../../runtime/protocols/form.ts';
import type { RunningSandbox } from '../../sandbox/index.ts';
import {
  createGateway,
  type GatewayRequest,
  type GatewayResponse,
  type RequestRecord,
} from '../../server-stubs/index.ts';
import { accounts, echoHandlers, type Call } from '../fixtures/example-handlers.ts';
import { counts, customer, hardeningSandbox, merchant, purchase, visa } from '../hardening/support.ts';

const DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>';
const FORM = 'application/x-www-form-urlencoded';
const readXmlAnswer = (text: string) => readXml(text, 'mwResponse', DECLARATION);

describe('the form reader', () => {
  it('reads name=value pairs: + and %20 are spaces, escapes are UTF-8, empty pairs are skipped', () => {
    expect(readForm('a=1&b=x+y%20z&&c=%C3%A9%F0%9F%99%82&d=')).toEqual({
      ok: { a: '1', b: 'x y z', c: 'é🙂', d: '' },
    });
    expect(readForm('flag')).toEqual({ ok: { flag: '' } });
  });

  it('refuses a malformed escape or bytes that are not UTF-8, naming the field', () => {
    expect(readForm('a=1&transactionAmount=10%2')).toEqual({
      field: 'transactionAmount',
      rule: 'is not correctly percent-encoded',
      status: 400,
    });
    expect(readForm('custom1=%G1')).toMatchObject({ field: 'custom1', rule: 'is not correctly percent-encoded' });
    expect(readForm('custom1=%FF%FE')).toMatchObject({ field: 'custom1', rule: 'is not UTF-8 once percent-decoded' });
    expect(readForm('%ZZ=1')).toEqual({ body: 'has a field name that is not correctly percent-encoded', status: 400 });
    expect(readForm('=orphan')).toEqual({ body: 'has a value without a name' });
  });

  it('refuses a name sent twice, also in PHP list form and as an object field', () => {
    expect(readForm('custom1=a&custom1=b')).toEqual({ field: 'custom1', rule: 'is sent more than once' });
    expect(readForm('custom1[]=a&custom1[]=b')).toEqual({ field: 'custom1[]', rule: 'is sent more than once' });
    expect(readForm('options[x]=1&options[x]=2')).toEqual({ field: 'options.x', rule: 'is sent more than once' });
    expect(readForm('options=1&options[x]=2')).toEqual({ field: 'options', rule: 'is sent more than once' });
  });

  it('refuses a value holding a control character the XML answer cannot carry, naming it; tab, LF, CR and NUL pass to their own rules', () => {
    // Written back as U+FFFD, custom1=a%01b came back as a\uFFFDb, and its customHash no longer matched.
    expect(readForm('custom1=a%01b')).toEqual({
      field: 'custom1',
      rule: 'holds the character U+0001, which the XML answer cannot carry',
    });
    expect(readForm('options[note]=%1F')).toEqual({
      field: 'options.note',
      rule: 'holds the character U+001F, which the XML answer cannot carry',
    });
    expect(readForm('custom1=a%EF%BF%BEb')).toEqual({
      field: 'custom1',
      rule: 'holds the character U+FFFE, which the XML answer cannot carry',
    });
    expect(readForm('custom1=a%09b%0Ac%0Dd&custom2=%00')).toEqual({ ok: { custom1: 'a\tb\nc\rd', custom2: '\u0000' } });
  });

  it('keeps __proto__ as a field of its own, as JSON.parse does', () => {
    const read = readForm('__proto__=x&a[__proto__]=y') as { ok: Record<string, unknown> };
    expect(Object.hasOwn(read.ok, '__proto__')).toBe(true);
    expect(Object.getPrototypeOf(read.ok)).toBe(Object.prototype);
    expect(Object.hasOwn(read.ok.a as object, '__proto__')).toBe(true);
  });

  it('types values from the schema: an empty value is absent, booleans and numbers become theirs when they read as one', () => {
    const types = {
      fields: {
        options: { types: ['object'], fields: { storeInVaultOnSuccess: { types: ['boolean'] } } },
        n: { types: ['integer'] },
        f: { types: ['number'] },
      },
    } as const;
    expect(
      typedForm(
        { a: '', b: 'x', options: { storeInVaultOnSuccess: 'true' }, n: '12', f: '1.5', customerIP: '' },
        types,
      ),
    ).toEqual({ b: 'x', options: { storeInVaultOnSuccess: true }, n: 12, f: 1.5 });
    expect(typedForm({ options: { storeInVaultOnSuccess: '0' } }, types)).toEqual({
      options: { storeInVaultOnSuccess: false },
    });
    // A value that does not read as the type stays a string, for the schema to refuse by name.
    expect(typedForm({ options: { storeInVaultOnSuccess: 'yes' }, n: '1e3' }, types)).toEqual({
      options: { storeInVaultOnSuccess: 'yes' },
      n: '1e3',
    });
    expect(typedForm({ options: { storeInVaultOnSuccess: '' } }, types)).toEqual({});
  });

  it('reads back what writeForm wrote, whatever the strings XML can carry (property)', () => {
    const name = fc.string({ minLength: 1 }).filter((s) => !/[[\]]/.test(s) && !s.includes('\uD800'));
    fc.assert(
      fc.property(fc.dictionary(name, fc.string({ unit: 'grapheme' })), (fields) => {
        expect(readForm(writeForm(fields))).toEqual({ ok: fields });
      }),
      { seed: 20261124, numRuns: 300 },
    );
  });
});

describe('the XML writer', () => {
  it('writes the declaration, the root and one text child per field, in order; empty and [] as empty elements', () => {
    expect(
      writeXml({ responseCode: '0', authCode: '', custom1: [], gone: undefined, n: 5 }, 'mwResponse', DECLARATION),
    ).toBe(`${DECLARATION}\n<mwResponse><responseCode>0</responseCode><authCode/><custom1/><n>5</n></mwResponse>`);
  });

  it('escapes markup and writes what XML 1.0 cannot carry as U+FFFD', () => {
    expect(xmlText(`a & b <c> "d" 'e'`)).toBe(`a &amp; b &lt;c&gt; "d" 'e'`);
    expect(xmlText('x\u0000y\u001Fz\tok\n')).toBe('x\uFFFDy\uFFFDz\tok\n');
    expect(xmlText('\uD800 \uDFFF 🙂 \uFFFE')).toBe('\uFFFD \uFFFD 🙂 \uFFFD');
  });

  it('writes an object as an element of elements and a list as one element per item, named by the shape', () => {
    const shape = { fields: { a: { types: ['object'] }, l: { types: ['array'], itemName: 'item' } } } as const;
    expect(writeXml({ a: { b: '1', c: { d: 2 } }, l: ['x', { y: 'z' }], e: {} }, 'r', DECLARATION, shape)).toBe(
      `${DECLARATION}\n<r><a><b>1</b><c><d>2</d></c></a><l><item>x</item><item><y>z</y></item></l><e/></r>`,
    );
  });

  it('refuses a list whose items have no name, or a name that is not an XML name', () => {
    expect(() => writeXml({ a: ['x'] }, 'r', DECLARATION)).toThrow(
      "Field 'a' is a list whose schema names no item element (items.xml.name)",
    );
    expect(() => writeXml({ '1a': 'x' }, 'r', DECLARATION)).toThrow("Field '1a' is not an XML element name");
    expect(() => writeXml({ a: { '1b': 'x' } }, 'r', DECLARATION)).toThrow("Field '1b' is not an XML element name");
  });

  it('writes well-formed XML that a strict parser reads back to the same text, CR and CRLF kept (property)', () => {
    // What XML 1.0 cannot carry at all comes back as U+FFFD; everything else exactly, CR included:
    // a conforming reader turns a raw CR into LF (XML 1.0 §2.11), so the writer sends it as &#13;.
    const carried = (s: string) => s.replace(/[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, '\uFFFD');
    const awkward = fc.constantFrom(
      '\r',
      '\r\n',
      '\n\r',
      '\n',
      '\t',
      '\u0000',
      '\u001b[31m',
      '\u007f',
      '\u0085',
      '&',
      '<',
      ']]>',
      '&#13;',
      '&amp;',
      '&#x41;',
      ' ',
      '\uFFFE',
      '\uD800',
    );
    const text = fc
      .array(fc.oneof(awkward, fc.string({ unit: 'binary' }), fc.string({ unit: 'grapheme-ascii' })), { maxLength: 8 })
      .map((parts) => parts.join(''));
    fc.assert(
      fc.property(text, text, (a, b) => {
        const read = readXmlAnswer(writeXml({ a, b }, 'mwResponse', DECLARATION));
        expect(read).toEqual({ ok: { a: carried(a), b: carried(b) } });
      }),
      { seed: 20261127, numRuns: 1000 },
    );
  });

  it('writes CR as a character reference, which a reader gives back as CR; a raw CR or CRLF is read as LF', () => {
    expect(xmlText('a\r\nb\rc')).toBe('a&#13;\nb&#13;c');
    expect(
      readXmlAnswer(`${DECLARATION}\n<mwResponse><a>x&#13;&#xD;&#10;&amp;#13;</a><b>y\r\nz\rw</b></mwResponse>`),
    ).toEqual({
      ok: { a: 'x\r\r\n&#13;', b: 'y\nz\nw' },
    });
  });
});

const send = async (sb: RunningSandbox, request: GatewayRequest): Promise<GatewayResponse & { body: string }> =>
  (await sb.gateway.handle(request)) as GatewayResponse & { body: string };
const xml = (response: { body: string }) => {
  const read = readXmlAnswer(response.body);
  if ('error' in read) throw new Error(`${read.error}: ${response.body}`);
  return read.ok;
};
const form = (url: string, body: string, headers: Record<string, string> = {}): GatewayRequest => ({
  verb: 'POST',
  url,
  headers: { 'content-type': FORM, ...headers },
  body,
});
/** A purchase as ActiveMerchant writes it: no version header, empty strings for values it does not have. */
const amPurchase = (extra: Record<string, string> = {}) =>
  writeForm({
    ...signedBody(operation('processCard'), purchase()),
    customerIP: '',
    customerPhone: '',
    customerEmail: '',
    ...extra,
  });

describe('the stubs in the form/XML mode (sandbox)', () => {
  let sb: RunningSandbox;
  beforeAll(async () => {
    sb = await hardeningSandbox();
  });
  afterAll(() => sb.close());

  it('a form purchase posted to /post/ without a version header is answered XML, read by name under mwResponse', async () => {
    const answer = await send(sb, form('/post/', amPurchase()));
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toBe('application/xml');
    expect(answer.body.startsWith(`${DECLARATION}\n<mwResponse>`)).toBe(true);
    const fields = xml(answer);
    expect(fields).toMatchObject({
      responseCode: '0',
      responseMessage: 'Transaction approved',
      paymentCardNumber: '456471XXXXXX0004',
      custom1: '',
    });
    expect(answer.body).toContain('<custom1/><custom2/><custom3/>');
    expect(fields.transactionID).toMatch(/\S/);
  });

  it('token operations posted as ActiveMerchant and kevupton post them: /token//addCard and /token/processCard without method', async () => {
    const card = {
      merchantUUID: merchant.merchantUUID,
      apiKey: merchant.apiKey,
      cardName: 'Jane',
      cardNumber: visa.paymentCardNumber,
      cardExpiryMonth: '02',
      cardExpiryYear: '29',
    };
    const added = xml(await send(sb, form('/token//addCard', writeForm(card))));
    expect(added).toMatchObject({ responseCode: '0', responseMessage: 'Operation successful' });
    expect(Object.keys(added)).toEqual(['responseCode', 'responseMessage', 'cardID', 'cardKey', 'ivrCardID']);
    const body = signedBody(operation('tokenProcessCard'), {
      method: 'processCard',
      merchantUUID: merchant.merchantUUID,
      apiKey: merchant.apiKey,
      transactionAmount: '10.00',
      transactionCurrency: 'AUD',
      transactionProduct: 'Test',
      cardID: added.cardID,
    });
    const { method: _inPath, ...withoutMethod } = body;
    const paid = xml(await send(sb, form('/token/processCard', writeForm({ ...withoutMethod, cardKey: '' }))));
    expect(paid).toMatchObject({ responseCode: '0', responseMessage: 'Transaction approved' });
  });

  it('a refusal is the same root with responseCode and responseMessage, naming the field; nothing is stored', async () => {
    const before = await counts(sb);
    const missing = xml(await send(sb, form('/post/', amPurchase({ transactionAmount: '' }))));
    expect(missing).toEqual({ responseCode: '-3', responseMessage: "Field 'transactionAmount' is required" });
    const twice = await send(sb, form('/post/', `${amPurchase()}&custom1=a&custom1=b`));
    expect(xml(twice)).toEqual({ responseCode: '-2', responseMessage: "Field 'custom1' is sent more than once" });
    const badEscape = await send(sb, form('/post/', `${amPurchase()}&customerName=Jane%2`));
    expect(badEscape.status).toBe(400);
    expect(xml(badEscape).responseMessage).toBe("Field 'customerName' is not correctly percent-encoded");
    // Written back in XML as U+FFFD, its customHash would not match what the client sent.
    const control = await send(sb, form('/post/', `${amPurchase()}&custom1=a%01b`));
    expect(xml(control)).toEqual({
      responseCode: '-2',
      responseMessage: "Field 'custom1' holds the character U+0001, which the XML answer cannot carry",
    });
    const invalid = xml(await send(sb, form('/post/', amPurchase({ transactionAmount: '10' }))));
    expect(invalid.responseCode).toBe('-2');
    expect(invalid.responseMessage).toMatch(/^Field 'transactionAmount' is invalid/);
    expect(await counts(sb)).toEqual(before);
  });

  it('the Content-Type chooses the mode; without one the version header marks the JSON mode; Accept is not read', async () => {
    const json = buildRequest(operation('processCard'), { body: purchase(), signBody: true });
    const asJson = await send(sb, { ...json, headers: { ...json.headers, accept: 'text/xml' } });
    expect(asJson.headers['content-type']).toBe('application/json');
    const withVersion = await send(
      sb,
      form('/post', amPurchase(), { 'svc-api-version': '2.0', accept: 'application/json' }),
    );
    expect(xml(withVersion).responseCode).toBe('0');
    const noType = await send(sb, { ...form('/post', amPurchase()), headers: {} });
    expect(noType.status).toBe(415);
    expect(xml(noType)).toEqual({
      responseCode: '-2',
      responseMessage: "Header 'Content-Type' must be application/json or application/x-www-form-urlencoded",
    });
    const noTypeJson = await send(sb, { ...form('/post', amPurchase()), headers: { 'svc-api-version': '2.0' } });
    expect(noTypeJson.headers['content-type']).toBe('application/json');
    expect(noTypeJson.status).toBe(415);
    for (const type of [`${FORM}, application/json`, `${FORM}; charset=iso-8859-1`, 'text/plain']) {
      const refused = await send(sb, form('/post', amPurchase(), { 'content-type': type }));
      expect([refused.status, xml(refused).responseCode], type).toEqual([415, '-2']);
    }
    expect(
      xml(await send(sb, form('/post', amPurchase(), { 'content-type': `${FORM}; charset=UTF-8` }))).responseCode,
    ).toBe('0');
  });

  it('a form in another charset is refused 415 naming the charset and the one a form is read in, in XML; nothing is stored', async () => {
    const before = await counts(sb);
    for (const charset of ['ISO-8859-1', '"windows-1252"']) {
      const refused = await send(sb, form('/post/', amPurchase(), { 'content-type': `${FORM}; charset=${charset}` }));
      expect(refused.status).toBe(415);
      expect(refused.headers['content-type']).toBe('application/xml');
      expect(xml(refused)).toEqual({
        responseCode: '-2',
        responseMessage: `Header 'Content-Type' is invalid: charset ${charset.replaceAll('"', '')} is not accepted; ${FORM} is read as UTF-8 (send charset=UTF-8, or no charset)`,
      });
    }
    expect(await counts(sb)).toEqual(before);
  });

  it('a path without the form mode answers a form in JSON, naming the one type it takes', async () => {
    const answer = await send(sb, form('/npp/payid', 'payId=x', { 'svc-api-version': '2.0' }));
    expect(answer.headers['content-type']).toBe('application/json');
    expect(JSON.parse(answer.body).responseMessage).toBe("Header 'Content-Type' must be application/json");
  });

  it('a form body over the limit is refused 413 in XML by the HTTP adapter, before it is read', async () => {
    const server = sb.server();
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const body = `${amPurchase()}&custom1=${'x'.repeat(1_100_000)}`;
      const answer = await new Promise<{ status: number; type: string; text: string }>((resolve, reject) => {
        const req = http.request(
          {
            host: '127.0.0.1',
            port: (server.address() as AddressInfo).port,
            method: 'POST',
            path: '/post/',
            headers: { 'content-type': FORM, 'content-length': Buffer.byteLength(body) },
          },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () =>
              resolve({
                status: res.statusCode!,
                type: String(res.headers['content-type']),
                text: Buffer.concat(chunks).toString(),
              }),
            );
          },
        );
        req.on('error', reject);
        req.end(body);
      });
      expect([answer.status, answer.type]).toEqual([413, 'application/xml']);
      expect(xml({ body: answer.text })).toEqual({
        responseCode: '-2',
        responseMessage: 'Request body exceeds 1048576 bytes',
      });
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('the stubs in the form/XML mode (handlers)', () => {
  it('a handler gets the same typed body from a form as from JSON, the deepObject field typed by the schema', async () => {
    const calls: Call[] = [];
    const gateway = createGateway({ handlers: echoHandlers(calls), accounts });
    const body = signedBody(operation('payframeProcessAuth'), {
      method: 'processAuth',
      merchantUUID: merchant.merchantUUID,
      apiKey: merchant.apiKey,
      transactionAmount: '10.00',
      transactionCurrency: 'AUD',
      transactionProduct: 'Test',
      ...customer,
      payframeToken: 'pf8f2c0a1b6d4e93',
      payframeKey: 'pk4f1e0b3c',
      options: { storeInVaultOnSuccess: true },
    });
    const viaJson = await gateway.handle(buildRequest(operation('payframeProcessAuth'), { body }));
    const viaForm = await gateway.handle(buildRequest(operation('payframeProcessAuth'), { body, wire: 'form' }));
    expect(viaJson.headers['content-type']).toBe('application/json');
    expect(viaForm.headers['content-type']).toBe('application/xml');
    expect(calls).toHaveLength(2);
    expect(calls[1]!.input.body).toEqual(calls[0]!.input.body);
    expect((calls[1]!.input.body as { options: unknown }).options).toEqual({ storeInVaultOnSuccess: true });
    const notBoolean = await gateway.handle({
      ...buildRequest(operation('payframeProcessAuth'), {
        body: { ...body, options: { storeInVaultOnSuccess: 'maybe' } },
        wire: 'form',
      }),
    });
    expect(xml(notBoolean as { body: string })).toEqual({
      responseCode: '-2',
      responseMessage: "Field 'options.storeInVaultOnSuccess' is invalid: must be true or false",
    });
  });

  it("a wrong verb is refused 405 with Allow in the caller's mode, as any refusal of the path: XML to a form client, with or without a body", async () => {
    const gateway = createGateway({ handlers: echoHandlers(), accounts, logger: false });
    const refused = async (request: GatewayRequest, type: string) => {
      const answer = (await gateway.handle(request)) as {
        status: number;
        headers: Record<string, string>;
        body: string;
      };
      expect([answer.status, answer.headers['content-type'], answer.headers.allow], request.verb).toEqual([
        405,
        type,
        'POST',
      ]);
      return answer;
    };
    // A form client's GET (no body, no Content-Type, no version header), and its PUT in another charset.
    const get = await refused({ verb: 'GET', url: '/post/', headers: {} }, 'application/xml');
    expect(xml(get)).toEqual({ responseCode: '-2', responseMessage: 'GET is not an operation of /post' });
    await refused(
      { verb: 'PUT', url: '/post/', headers: { 'content-type': `${FORM}; charset=ISO-8859-1` }, body: 'method=x' },
      'application/xml',
    );
    await refused(
      { verb: 'PUT', url: '/token/', headers: { 'content-type': FORM }, body: 'method=x' },
      'application/xml',
    );
    // The JSON mode's mark, or a path that takes JSON only, answers JSON.
    const json = await refused(
      { verb: 'GET', url: '/post', headers: { 'svc-api-version': '2.0' } },
      'application/json',
    );
    expect(JSON.parse(json.body)).toEqual({ responseCode: '-2', responseMessage: 'GET is not an operation of /post' });
    await refused({ verb: 'GET', url: '/payout', headers: {} }, 'application/json');
  });

  it('the request log reads the responseCode of an XML answer as of a JSON one', async () => {
    const records: RequestRecord[] = [];
    const gateway = createGateway({ handlers: echoHandlers(), accounts, onRequest: (r) => records.push(r) });
    await gateway.handle(buildRequest(operation('processCard'), { body: purchase(), signBody: true, wire: 'form' }));
    await gateway.handle(form('/post/', 'method=processCard'));
    expect(records.map((r) => [r.operationId, r.responseCode])).toEqual([
      ['processCard', '0'],
      ['processCard', '-3'],
    ]);
  });

  it('an XML answer is held to its schema before it leaves: a broken one is refused -4 in XML, naming the field', async () => {
    const gateway = createGateway({
      accounts,
      handlers: echoHandlers(undefined, (op, result) =>
        op.operationId === 'processCard' ? { ...result, transactionAmount: 10 } : result,
      ),
    });
    const answer = (await gateway.handle(
      buildRequest(operation('processCard'), { body: purchase(), signBody: true, wire: 'form' }),
    )) as { status: number; body: string };
    expect(answer.status).toBe(500);
    const fields = xml(answer);
    expect(fields.responseCode).toBe('-4');
    expect(fields.responseMessage).toMatch(/^Response of processCard violates the contract: Field 'transactionAmount'/);
  });
});
