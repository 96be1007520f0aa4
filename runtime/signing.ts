// Computes the contract's message hashes from the recipes in the spec (x-hash-recipes). No recipe is
// written here: this module only knows the small recipe language that spec/hash-recipes.yaml defines.
// It runs in browsers as well as Node (no node: imports), because the typed client signs with it.
import { hmac } from '@noble/hashes/hmac.js';
import { md5 } from '@noble/hashes/legacy.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js';

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
  algorithm: 'md5' | 'hmac-sha256';
  lowercase?: boolean;
  parts?: readonly HashPart[];
  key?: { secret: 'passphrase' };
  message?: 'canonical-parameters';
}

export type HashRecipes = Readonly<Record<string, HashRecipe>>;

/** Fields a hash is computed over: request fields, path and query parameters, or result fields. */
export type HashInput = Readonly<Record<string, unknown>>;

const md5Hex = (bytes: Uint8Array): string => bytesToHex(md5(bytes));

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

function partText(part: HashPart, passphrase: string, input: HashInput): string {
  let text: string;
  if (part.secret === 'passphrase') {
    text = part.digest === 'md5' ? md5Hex(utf8ToBytes(passphrase)) : passphrase;
  } else if (part.field !== undefined) {
    const names = Array.isArray(part.field) ? part.field : [part.field];
    const name = names.find((n) => input[n] !== undefined && input[n] !== null);
    const raw = name === undefined ? '' : fieldText(input[name]);
    if (part.digest === 'md5') {
      text = md5Hex(part.decode === 'base64' ? base64ToBytes(raw) : utf8ToBytes(raw));
    } else {
      text = raw;
    }
  } else {
    throw new Error('A hash part names neither a secret nor a field');
  }
  return part.lowercase ? text.toLowerCase() : text;
}

/** JSON with the keys of every object sorted by code point and no white space. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** The string a recipe hashes, before hashing: useful to show a caller why two hashes differ. */
export function hashPreimage(recipe: HashRecipe, passphrase: string, input: HashInput): string {
  if (recipe.algorithm === 'hmac-sha256') return canonicalJson(input);
  const joined = (recipe.parts ?? []).map((part) => partText(part, passphrase, input)).join('');
  return recipe.lowercase ? joined.toLowerCase() : joined;
}

/** The hash a recipe gives for these fields, in lowercase hex. */
export function computeHash(recipe: HashRecipe, passphrase: string, input: HashInput): string {
  const preimage = utf8ToBytes(hashPreimage(recipe, passphrase, input));
  if (recipe.algorithm === 'hmac-sha256') return bytesToHex(hmac(sha256, utf8ToBytes(passphrase), preimage));
  if (recipe.algorithm === 'md5') return md5Hex(preimage);
  throw new Error(`Unknown hash algorithm ${String((recipe as { algorithm: unknown }).algorithm)}`);
}

/** Compares two hex hashes in time that does not depend on where they first differ. */
export function hashesEqual(a: string, b: string): boolean {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  let diff = x.length ^ y.length;
  for (let i = 0; i < Math.max(x.length, y.length); i++) diff |= (x.charCodeAt(i) | 0) ^ (y.charCodeAt(i) | 0);
  return diff === 0;
}
