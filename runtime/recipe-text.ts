// A hash recipe written out as the formula it computes, for people: `payment-gateway sign --list`
// and the docs' recipe table show it. It reads the same recipe language runtime/signing.ts runs.
import type { HashPart, HashRecipe } from './signing.ts';

function partFormula(part: HashPart): string {
  let text: string;
  if (part.secret === 'passphrase') text = part.digest === 'md5' ? 'md5(passphrase)' : 'passphrase';
  else {
    const names = typeof part.field === 'string' ? part.field : `first of (${(part.field ?? []).join(' | ')})`;
    const value = part.decode === 'base64' ? `base64decode(${names})` : names;
    text = part.digest === 'md5' ? `md5(${value})` : value;
  }
  return part.lowercase ? `lower(${text})` : text;
}

/**
 * e.g. `md5(lower(md5(passphrase) + merchantUUID + transactionAmount + transactionCurrency))`;
 * with `multiline`, one part a line, for a narrow column.
 */
export function recipeFormula(recipe: HashRecipe, multiline = false): string {
  if (recipe.algorithm === 'hmac-sha256') {
    return multiline
      ? 'hmac-sha256(\n  key = passphrase,\n  message = canonical JSON of\n    path parameters + query parameters + body fields,\n    keys sorted, no white space\n)'
      : 'hmac-sha256(key = passphrase, message = canonical JSON of path parameters + query parameters + body fields, keys sorted, no white space)';
  }
  // The batch file's checksum has no parts: md5 of the field's decoded bytes alone.
  if (recipe.file) return `md5(base64decode(${recipe.file.field}))`;
  const parts = (recipe.parts ?? []).map(partFormula);
  if (!multiline) {
    const joined = parts.join(' + ');
    return `md5(${recipe.lowercase ? `lower(${joined})` : joined})`;
  }
  const body = parts.map((p, i) => `${i ? '  + ' : '    '}${p}`).join('\n');
  return recipe.lowercase ? `md5(lower(\n${body}\n))` : `md5(\n${body}\n)`;
}

/** The rules every recipe shares: what a field's value is when it is hashed. */
export const FIELD_RULES =
  'A field counts as sent (amounts with their two decimals, e.g. 10.00); an absent or null field, or an empty array, counts as the empty string; md5 answers 32 lowercase hex digits.';
