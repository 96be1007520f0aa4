// The collection-level pre-request script that signs a request in Postman's sandbox: it finds the
// operation by the request's verb, path and (on a shared path) body `method`, adds the credential
// headers the operation's security asks for when the request lacks them, and computes every hash it
// carries (body hashes and the SVC-MESSAGEHASH header) from the contract's recipes.
//
// Two consumers, one description: generated/postman.json (scripts/generators/postman.ts), whose
// requests already hold their headers and {{pgwHash_…}} references, and the Portman run of the tool
// matrix (scripts/tools/portman.ts), whose requests Portman converted from the document and which
// hold the examples' literal hashes and no credential headers. Both find their operation the same
// way, so neither depends on how the other names its requests.
import type { Doc, Operation } from '../lib/contract.ts';
import { BANNER } from './banner.ts';

/** The variable a computed hash is put in, for the body field or header that carries it. */
export const hashVariable = (name: string) => `pgwHash_${name}`;

/** The collection variable that holds each header credential (x-credential of a security scheme). */
export const CREDENTIAL_VARIABLES: Record<string, string> = { accountId: 'merchantUUID', apiKey: 'apiKey' };

/** What the script needs of the document: the recipes, and per operation its route, hashes and headers. */
export function signingTables(doc: Doc, calls: Operation[]) {
  // Only what computing needs: summaries, reasons and worked examples stay in the spec.
  const recipes = Object.fromEntries(
    Object.entries<any>(doc['x-hash-recipes']).map(([name, r]) => [
      name,
      { algorithm: r.algorithm, lowercase: r.lowercase, parts: r.parts, file: r.file },
    ]),
  );
  // [verb, path segments (null where a parameter stands), body method or null, operationId]
  const routes = calls.map((op) => [
    op.verb.toUpperCase(),
    op.path
      .split('/')
      .filter(Boolean)
      .map((seg) => (/^\{\w+\}$/.test(seg) ? null : seg)),
    op.method ?? null,
    op.operationId,
  ]);
  const uses = Object.fromEntries(calls.filter((op) => op.hashes?.length).map((op) => [op.operationId, op.hashes]));
  const headers = Object.fromEntries(
    calls
      .filter((op) => op.security.length)
      .map((op) => [
        op.operationId,
        op.security.map((scheme) => {
          const s = doc.components.securitySchemes[scheme];
          const credential: string = s['x-credential'];
          return [s.name, credential === 'messageHash' ? null : CREDENTIAL_VARIABLES[credential]];
        }),
      ]),
  );
  return { recipes, routes, uses, headers };
}

/** The script's lines (Postman's `exec`). */
export function signingScript(doc: Doc, calls: Operation[]): string[] {
  const { recipes, routes, uses, headers } = signingTables(doc, calls);
  return `// ${BANNER}
// Finds the operation by verb, path and body method; adds the credential headers it lacks; computes
// each hash the request carries from the contract's recipes (x-hash-recipes) and puts it in the
// variable {{${hashVariable('<name>')}}} (and in the body or header itself when that holds no reference).
(() => {
const CryptoJS = require('crypto-js');
const RECIPES = ${JSON.stringify(recipes)};
const ROUTES = ${JSON.stringify(routes)};
const HASHES = ${JSON.stringify(uses)};
const HEADERS = ${JSON.stringify(headers)};
const resolve = (text) => pm.variables.replaceIn(String(text));
const template = pm.request.body && pm.request.body.mode === 'raw' ? pm.request.body.raw || '' : '';
const raw = resolve(template);
let body = {};
try { body = raw.trim() ? JSON.parse(raw) : {}; } catch (e) { body = {}; }
const segments = (pm.request.url.path || []).filter(Boolean);
const route = ROUTES.find(([verb, path, method]) => verb === pm.request.method && path.length === segments.length
  && path.every((s, i) => s === null || s === segments[i]) && (method === null || body.method === method));
const operationId = route ? route[3] : pm.info.requestName;
const uses = HASHES[operationId] || [];
const hashes = {};
if (uses.length) {
  const params = {};
  pm.request.url.variables.each((v) => { params[v.key] = resolve(v.value); });
  const query = {};
  pm.request.url.query.each((q) => { if (!q.disabled) query[q.key] = resolve(q.value); });
  // JSON with the keys of every object sorted and no white space (canonical-parameters).
  const canonical = (value) => {
    if (value === null || typeof value !== 'object') return JSON.stringify(value);
    if (Array.isArray(value)) return '[' + value.map(canonical).join(',') + ']';
    return '{' + Object.keys(value).sort().filter((k) => value[k] !== undefined).map((k) => JSON.stringify(k) + ':' + canonical(value[k])).join(',') + '}';
  };
  // A field as the recipes hash it: absent, null or [] is '', objects canonical, the rest as sent.
  const text = (value) => {
    if (value === undefined || value === null) return '';
    if (Array.isArray(value)) return value.length ? JSON.stringify(value) : '';
    if (typeof value === 'object') return canonical(value);
    return String(value);
  };
  const md5 = (data) => CryptoJS.MD5(data).toString(CryptoJS.enc.Hex);
  const compute = (recipe, passphrase, fields) => {
    if (recipe.algorithm === 'hmac-sha256') return CryptoJS.HmacSHA256(canonical(fields), passphrase).toString(CryptoJS.enc.Hex);
    if (recipe.file) return md5(CryptoJS.enc.Base64.parse(text(fields[recipe.file.field])));
    let joined = '';
    for (const part of recipe.parts) {
      let piece;
      if (part.secret === 'passphrase') piece = part.digest === 'md5' ? md5(passphrase) : passphrase;
      else {
        const names = Array.isArray(part.field) ? part.field : [part.field];
        const name = names.find((n) => fields[n] !== undefined && fields[n] !== null);
        piece = name === undefined ? '' : text(fields[name]);
        if (part.digest === 'md5') piece = md5(part.decode === 'base64' ? CryptoJS.enc.Base64.parse(piece) : piece);
      }
      joined += part.lowercase ? piece.toLowerCase() : piece;
    }
    return md5(recipe.lowercase ? joined.toLowerCase() : joined);
  };
  let rewrite = false;
  for (const use of uses) {
    const passphrase = pm.variables.get(use.secret === 'partner' ? 'partnerPassphrase' : 'passphrase') || pm.variables.get('passphrase');
    // The message hash signs path and query parameters and the body's fields, the body's winning.
    const fields = use.in === 'header' ? Object.assign({}, params, query, body) : body;
    const hash = compute(RECIPES[use.recipe], passphrase, fields);
    pm.variables.set('${hashVariable('')}' + use.name, hash);
    hashes[use.name] = hash;
    // A body field holding a literal (an example's hash) rather than the reference: replaced.
    if (use.in !== 'header' && use.name in body && !template.includes('{{${hashVariable('')}' + use.name + '}}')) {
      body[use.name] = hash;
      rewrite = true;
    }
  }
  if (rewrite) pm.request.body.update({ mode: 'raw', raw: JSON.stringify(body, null, 2), options: { raw: { language: 'json' } } });
}
for (const [name, variable] of HEADERS[operationId] || []) {
  if (pm.request.headers.has(name)) continue;
  pm.request.headers.add({ key: name, value: variable === null ? hashes[name] : resolve('{{' + variable + '}}') });
}
})();`.split('\n');
}
