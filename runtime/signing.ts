// Signs with the contract's hash recipes (x-hash-recipes) anywhere: the recipe language of
// recipe-hashes.ts with @noble/hashes' digests as the default. It runs in browsers as well as Node
// (no node: imports), because the typed client and the docs' try-it console sign with it. A server
// imports recipe-hashes.ts and passes native digests, so that its start does not load @noble/hashes.
import { hmac } from '@noble/hashes/hmac.js';
import { md5 } from '@noble/hashes/legacy.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js';
import * as recipes from './recipe-hashes.ts';
import type {
  Digests,
  HashInput,
  HashRecipe,
  HeaderNames,
  PreimageObserver,
  SignedRequest,
  SigningAccount,
} from './recipe-hashes.ts';

export * from './recipe-hashes.ts';

const bytes = (data: string | Uint8Array) => (typeof data === 'string' ? utf8ToBytes(data) : data);

export const portableDigests: Digests = {
  md5Hex: (data) => bytesToHex(md5(bytes(data))),
  hmacSha256Hex: (key, message) => bytesToHex(hmac(sha256, utf8ToBytes(key), utf8ToBytes(message))),
};

// Each of these is recipe-hashes.ts's function of the same name, with the portable digests when none
// are given; its parameters are written again here because a default cannot be added to a type.

/** The string a recipe hashes, before hashing: useful to show a caller why two hashes differ. */
export function hashPreimage(recipe: HashRecipe, passphrase: string, input: HashInput, digests = portableDigests) {
  return recipes.hashPreimage(recipe, passphrase, input, digests);
}

/** The text a recipe hashes with every secret part shown as a placeholder (see recipe-hashes.ts). */
export function redactedPreimage(recipe: HashRecipe, input: HashInput, digests = portableDigests) {
  return recipes.redactedPreimage(recipe, input, digests);
}

/** The hash a recipe gives for these fields, in lowercase hex. */
export function computeHash(recipe: HashRecipe, passphrase: string, input: HashInput, digests = portableDigests) {
  return recipes.computeHash(recipe, passphrase, input, digests);
}

/** The message hash of a header-authenticated request: the recipe over its canonical parameters. */
export function messageHash(
  recipe: HashRecipe,
  passphrase: string,
  request: SignedRequest,
  digests = portableDigests,
  observe?: PreimageObserver,
  name?: string,
) {
  return recipes.messageHash(recipe, passphrase, request, digests, observe, name);
}

/**
 * The one request signer for header-authenticated operations: the account id, the API key and the
 * message hash over the request's canonical parameters, in that order.
 */
export function signHeaders(
  names: HeaderNames,
  recipe: HashRecipe,
  account: SigningAccount,
  request: SignedRequest,
  digests = portableDigests,
  observe?: PreimageObserver,
) {
  return recipes.signHeaders(names, recipe, account, request, digests, observe);
}

/**
 * The one body signer: writes each hash field into the body, in the order given, each computed over
 * the body as it stands (a later hash sees an earlier one, as the gateway computes them).
 */
export function signBodyHashes<B extends Record<string, unknown>>(
  body: B,
  uses: Iterable<{ name: string; recipe: HashRecipe }>,
  passphrase: string,
  digests = portableDigests,
  observe?: PreimageObserver,
): B {
  return recipes.signBodyHashes(body, uses, passphrase, digests, observe);
}
