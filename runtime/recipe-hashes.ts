// The recipe language of spec/hash-recipes.yaml (x-hash-recipes): what a recipe hashes, and its hash
// with the digests the caller gives. No recipe is written here, and nothing is imported: a server
// passes Node's native digests and never loads @noble/hashes (about 6 ms of a cold start, measured);
// signing.ts is this with @noble/hashes' digests as the default, for clients and browsers.
export interface HashPart {
  secret?: 'passphrase';
  field?: string | string[];
  digest?: 'md5';
  decode?: 'base64';
  lowercase?: boolean;
}

export interface HashRecipe {
  summary?: string;
  source?: 'public' | 'defined';
  /** For a public recipe: the client that shows it. */
  evidence?: string;
  algorithm: 'md5' | 'hmac-sha256';
  lowercase?: boolean;
  parts?: readonly HashPart[];
  key?: { secret: 'passphrase' };
  message?: 'canonical-parameters';
  /** md5 of one field's decoded bytes, and nothing else (the batch fileHash): instead of parts. */
  file?: { field: string; decode: 'base64' };
  /**
   * An older form the gateway still accepts: the same parts with the passphrase itself where the
   * recipe has md5(passphrase). Servers verify it unless told to refuse it; clients never sign with it.
   */
  legacy?: {
    summary?: string;
    source?: 'public';
    example?: { passphrase: string; fields: Readonly<Record<string, unknown>>; hash: string };
  };
  /** The recipe's worked example in the spec (the generated runtime copy leaves it out). */
  example?: { passphrase: string; fields: Readonly<Record<string, unknown>>; hash: string; canonical?: string };
  /** Why a recipe the seed does not show is as it is (spec only). */
  inferred?: string;
}

export type HashRecipes = Readonly<Record<string, HashRecipe>>;

/** The digests the recipes use: @noble/hashes' (signing.ts, runs anywhere) or native ones (a server's). */
export interface Digests {
  /** md5 in lowercase hex; text is hashed as UTF-8. */
  md5Hex(data: string | Uint8Array): string;
  /** HMAC-SHA256 in lowercase hex, keyed by the UTF-8 bytes of key. */
  hmacSha256Hex(key: string, message: string): string;
}

type Fields = Readonly<Record<string, unknown>>;

/**
 * Fields a hash is computed over: request fields, path and query parameters, or result fields. A list
 * reads as one record in which the first layer holding a name wins, as `{ ...last, ...first }` would,
 * so that a server hashes a result over result and request without building that merged copy.
 */
export type HashInput = Fields | readonly Fields[];

const NONE: Fields = Object.freeze({});

/**
 * What `canonical-parameters` signs: a request's path parameters, query parameters and top-level
 * body fields, a later name replacing an earlier one (spec/hash-recipes.yaml), as layers.
 */
export function canonicalParameters(request: {
  params?: Fields | undefined;
  query?: Fields | undefined;
  body?: Fields | undefined;
}): HashInput {
  return [request.body ?? NONE, request.query ?? NONE, request.params ?? NONE];
}

function fieldOf(input: HashInput, name: string): unknown {
  if (!Array.isArray(input)) return (input as Fields)[name];
  for (const layer of input as readonly Fields[]) if (Object.hasOwn(layer, name)) return layer[name];
  return undefined;
}

function hasFields(layer: Fields): boolean {
  for (const _ in layer) return true;
  return false;
}

function merged(input: HashInput): Fields {
  if (!Array.isArray(input)) return input as Fields;
  const layers = (input as readonly Fields[]).filter(hasFields);
  return layers.length === 1 ? layers[0]! : Object.assign({}, ...layers.reverse());
}

function base64ToBytes(text: string): Uint8Array {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/** A field's value as the recipes hash it: as sent, with absent and empty-array values as ''. */
function fieldText(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (Array.isArray(value)) return value.length === 0 ? '' : JSON.stringify(value);
  if (typeof value === 'object') return canonicalJson(value);
  return String(value);
}

// md5(passphrase) is the same for every request of an account: compute it once per digest set.
const passphraseDigests = new WeakMap<Digests, Map<string, string>>();
function passphraseMd5(passphrase: string, digests: Digests): string {
  let cache = passphraseDigests.get(digests);
  if (!cache) {
    cache = new Map();
    passphraseDigests.set(digests, cache);
  }
  let hex = cache.get(passphrase);
  if (hex === undefined) {
    if (cache.size > 10_000) cache.clear();
    hex = digests.md5Hex(passphrase);
    cache.set(passphrase, hex);
  }
  return hex;
}

function partText(part: HashPart, passphrase: string, input: HashInput, digests: Digests): string {
  let text: string;
  if (part.secret === 'passphrase') {
    text = part.digest === 'md5' ? passphraseMd5(passphrase, digests) : passphrase;
  } else if (part.field !== undefined) {
    let raw = '';
    for (const name of typeof part.field === 'string' ? [part.field] : part.field) {
      const value = fieldOf(input, name);
      if (value !== undefined && value !== null) {
        raw = fieldText(value);
        break;
      }
    }
    if (part.digest === 'md5') {
      text = digests.md5Hex(part.decode === 'base64' ? base64ToBytes(raw) : raw);
    } else {
      text = raw;
    }
  } else {
    throw new Error('A hash part names neither a secret nor a field');
  }
  return part.lowercase ? text.toLowerCase() : text;
}

// Object keys recur from request to request (the contract's field names): each is quoted once.
const quotedKeys = new Map<string, string>();
function quoted(key: string): string {
  let text = quotedKeys.get(key);
  if (text === undefined) {
    text = JSON.stringify(key);
    if (quotedKeys.size < 10_000) quotedKeys.set(key, text);
  }
  return text;
}

/** JSON with the keys of every object sorted by UTF-16 code unit (JavaScript's default sort) and no white space. */
export function canonicalJson(value: unknown): string {
  if (typeof value !== 'object' || value === null) return JSON.stringify(value);
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) out += (i ? ',' : '') + canonicalJson(value[i]);
    return `${out}]`;
  }
  const object = value as Record<string, unknown>;
  let out = '{';
  let first = true;
  for (const key of Object.keys(object).sort()) {
    const member = object[key];
    if (member === undefined) continue;
    out += `${first ? '' : ','}${quoted(key)}:${typeof member === 'string' ? JSON.stringify(member) : canonicalJson(member)}`;
    first = false;
  }
  return `${out}}`;
}

/** The recipe of a recipe's legacy form (see HashRecipe.legacy): the passphrase unhashed, nothing else changed. */
export function legacyRecipe(recipe: HashRecipe): HashRecipe | undefined {
  if (!recipe.legacy || !recipe.parts) return undefined;
  const { legacy: _legacy, ...current } = recipe;
  return { ...current, parts: recipe.parts.map((part) => (part.secret ? { secret: part.secret } : part)) };
}

/** The string a recipe hashes, before hashing: useful to show a caller why two hashes differ. */
export function hashPreimage(recipe: HashRecipe, passphrase: string, input: HashInput, digests: Digests): string {
  if (recipe.algorithm === 'hmac-sha256') return canonicalJson(merged(input));
  if (recipe.file) return fieldText(fieldOf(input, recipe.file.field)); // the base64 text whose bytes are hashed
  let joined = '';
  for (const part of recipe.parts ?? []) joined += partText(part, passphrase, input, digests);
  return recipe.lowercase ? joined.toLowerCase() : joined;
}

/** How a redacted preimage shows the passphrase and its md5 (redactedPreimage). */
export const PASSPHRASE_PLACEHOLDER = '{passphrase}';
export const PASSPHRASE_MD5_PLACEHOLDER = '{md5(passphrase)}';

/**
 * The text a recipe hashes with every secret part shown as a placeholder: what a request log may show
 * a caller whose hash did not match (nothing in it is derived from the passphrase). An HMAC recipe's
 * text holds no secret (its key is the passphrase); a file recipe's is the file's bytes, named only.
 */
export function redactedPreimage(recipe: HashRecipe, input: HashInput, digests: Digests): string {
  if (recipe.algorithm === 'hmac-sha256') return canonicalJson(merged(input));
  if (recipe.file) return `{the bytes of ${recipe.file.field}, base64-decoded}`;
  let joined = '';
  for (const part of recipe.parts ?? [])
    joined += part.secret
      ? part.digest === 'md5'
        ? PASSPHRASE_MD5_PLACEHOLDER
        : PASSPHRASE_PLACEHOLDER
      : partText(part, '', input, digests);
  return recipe.lowercase ? joined.toLowerCase() : joined;
}

/** The hash a recipe gives for these fields, in lowercase hex. */
export function computeHash(recipe: HashRecipe, passphrase: string, input: HashInput, digests: Digests): string {
  return hashOfPreimage(recipe, passphrase, hashPreimage(recipe, passphrase, input, digests), digests);
}

/** Says what each hash was computed over (the CLI's `sign --preimage`); the signers call it when given. */
export type PreimageObserver = (name: string, preimage: string, hash: string) => void;

function observedHash(
  name: string,
  recipe: HashRecipe,
  passphrase: string,
  input: HashInput,
  digests: Digests,
  observe: PreimageObserver | undefined,
): string {
  if (!observe) return computeHash(recipe, passphrase, input, digests);
  const preimage = hashPreimage(recipe, passphrase, input, digests);
  const hash = hashOfPreimage(recipe, passphrase, preimage, digests);
  observe(name, preimage, hash);
  return hash;
}

function hashOfPreimage(recipe: HashRecipe, passphrase: string, preimage: string, digests: Digests): string {
  if (recipe.file) return digests.md5Hex(base64ToBytes(preimage));
  if (recipe.algorithm === 'hmac-sha256') return digests.hmacSha256Hex(passphrase, preimage);
  if (recipe.algorithm === 'md5') return digests.md5Hex(preimage);
  throw new Error(`Unknown hash algorithm ${String((recipe as { algorithm: unknown }).algorithm)}`);
}

/** Compares two strings in time that depends on their lengths only, not on where they first differ. */
export function constantTimeEqual(a: string, b: string): boolean {
  let diff = a.length ^ b.length;
  for (let i = 0; i < Math.max(a.length, b.length); i++) diff |= (a.charCodeAt(i) | 0) ^ (b.charCodeAt(i) | 0);
  return diff === 0;
}

/** Compares two hex hashes, ignoring case, in constant time. */
export const hashesEqual = (a: string, b: string): boolean => constantTimeEqual(a.toLowerCase(), b.toLowerCase());

/** The header names a header-authenticated operation signs with (x-header-auth in the spec). */
export interface HeaderNames {
  accountId: string;
  apiKey: string;
  messageHash: string;
}

/** The account a request is signed for. */
export interface SigningAccount {
  id: string;
  apiKey: string;
  passphrase: string;
}

/** A request as the header hash reads it: path parameters, query parameters, body. */
export interface SignedRequest {
  params?: Fields | undefined;
  query?: Fields | undefined;
  body?: Fields | undefined;
}

/** The message hash of a header-authenticated request: the recipe over its canonical parameters. */
export function messageHash(
  recipe: HashRecipe,
  passphrase: string,
  request: SignedRequest,
  digests: Digests,
  observe?: PreimageObserver,
  name = 'messageHash',
): string {
  return observedHash(name, recipe, passphrase, canonicalParameters(request), digests, observe);
}

/**
 * The one request signer for header-authenticated operations: the account id, the API key and the
 * message hash over the request's canonical parameters, in that order. The client, the contract
 * suite, its request builder and the bench sign through it; the CLI's `sign` through messageHash
 * (it has a passphrase, not an account).
 */
export function signHeaders(
  names: HeaderNames,
  recipe: HashRecipe,
  account: SigningAccount,
  request: SignedRequest,
  digests: Digests,
  observe?: PreimageObserver,
): Record<string, string> {
  return {
    [names.accountId]: account.id,
    [names.apiKey]: account.apiKey,
    [names.messageHash]: messageHash(recipe, account.passphrase, request, digests, observe, names.messageHash),
  };
}

/**
 * The one body signer: writes each hash field into the body, in the order given, each computed over
 * the body as it stands (a later hash sees an earlier one, as the gateway computes them). The caller
 * chooses which hash fields apply to its form; this only signs.
 */
export function signBodyHashes<B extends Record<string, unknown>>(
  body: B,
  uses: Iterable<{ name: string; recipe: HashRecipe }>,
  passphrase: string,
  digests: Digests,
  observe?: PreimageObserver,
): B {
  for (const use of uses)
    (body as Record<string, unknown>)[use.name] = observedHash(
      use.name,
      use.recipe,
      passphrase,
      body,
      digests,
      observe,
    );
  return body;
}
