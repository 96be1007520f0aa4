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

// Each of these is recipe-hashes.ts's function of the same name (documented there), with the
// portable digests when none are given.

export const hashPreimage = (recipe: HashRecipe, passphrase: string, input: HashInput, digests = portableDigests) =>
  recipes.hashPreimage(recipe, passphrase, input, digests);

export const redactedPreimage = (recipe: HashRecipe, input: HashInput, digests = portableDigests) =>
  recipes.redactedPreimage(recipe, input, digests);

export const computeHash = (recipe: HashRecipe, passphrase: string, input: HashInput, digests = portableDigests) =>
  recipes.computeHash(recipe, passphrase, input, digests);

export const messageHash = (
  recipe: HashRecipe,
  passphrase: string,
  request: SignedRequest,
  digests = portableDigests,
  observe?: PreimageObserver,
  name?: string,
) => recipes.messageHash(recipe, passphrase, request, digests, observe, name);

export const signHeaders = (
  names: HeaderNames,
  recipe: HashRecipe,
  account: SigningAccount,
  request: SignedRequest,
  digests = portableDigests,
  observe?: PreimageObserver,
) => recipes.signHeaders(names, recipe, account, request, digests, observe);

export const signBodyHashes = <B extends Record<string, unknown>>(
  body: B,
  uses: Iterable<{ name: string; recipe: HashRecipe }>,
  passphrase: string,
  digests = portableDigests,
  observe?: PreimageObserver,
) => recipes.signBodyHashes(body, uses, passphrase, digests, observe);
