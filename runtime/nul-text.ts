// No identifier or text of the gateway holds a NUL character (U+0000): a value that does is refused
// naming its field (spec/refusals.yaml, validationRefusals.nul), before it is looked up or stored.
// PostgreSQL cannot hold U+0000 in text at all (it refuses the statement), SQLite can: without the rule
// the two stores answered the same request differently (-4 against -2 or an approval).

/** Whether this text holds a NUL character. */
export const holdsNul = (text: string): boolean => text.includes('\u0000');

/** A name shown with its NUL characters escaped (a key that holds one is named, never sent back raw). */
const shownName = (name: string) => name.replaceAll('\u0000', '\\u0000');

/**
 * The field of the first text in a value (a string, or a body of objects and lists, at any depth)
 * that holds a NUL character, named as the refusals name fields ('payer.account.bsb',
 * 'transactions[0].reference'); a key that holds one is named itself. Undefined when none does.
 */
export function nulField(value: unknown): string | undefined {
  const at = nulPath(value);
  return at === undefined ? undefined : at.reverse().join('').replace(/^\./, '');
}

/** The path's parts, innermost first, built only for the text found (every request is read): `.key` and `[index]`. */
function nulPath(value: unknown): string[] | undefined {
  if (typeof value === 'string') return holdsNul(value) ? [] : undefined;
  if (typeof value !== 'object' || value === null) return undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = nulPath(value[i]);
      if (found) return found.concat(`[${i}]`);
    }
    return undefined;
  }
  for (const key in value) {
    if (holdsNul(key)) return [`.${shownName(key)}`];
    const found = nulPath((value as Record<string, unknown>)[key]);
    if (found) return found.concat(`.${shownName(key)}`);
  }
  return undefined;
}
