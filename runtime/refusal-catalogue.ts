// A refusal catalogue's entries made callable: spec/refusals.yaml, as generated/refusal-catalogue.ts
// carries it, becomes the functions the server stubs and the sandbox refuse with (Fastify's
// createError: a caller names the entry and passes only what varies). The message is the entry's
// own, its arguments put in; the code, responseCode and status are written once, in the spec.
import type { RefusalKind } from './refusal-text.ts';

export interface Refusal<Code extends string = string> {
  code: -1 | -2 | -3 | -4;
  message: string;
  /**
   * The refusal's stable code (`PGW_BODY_TOO_LARGE`): which catalogue entry made it. Never sent (the
   * gateway's answer is responseCode and responseMessage only): the request log, the generated
   * docs/REFUSALS.md and a server team's tests read it. A server's own refusal (refuse()) has none.
   */
  errorCode?: Code;
  /** HTTP status; the operation's success status unless the request could not be read. */
  status?: number;
  /** For the request log only, never the answer: which check failed (a -1 says no more to the caller). */
  reason?: string;
  /** The field (or header, parameter) refused and the rule it broke (a JSON Schema keyword), for logs and tools. */
  field?: string;
  rule?: string;
}

/** A refusal made without a catalogue entry: it carries no code (a server team's own). */
export const refuse = (code: Refusal['code'], message: string, status?: number): Refusal<never> =>
  status === undefined ? { code, message } : { code, message, status };

/**
 * One entry of a refusal catalogue: called with what varies, it makes the refusal with its code.
 * `when` and `example` are for the generated catalogue page (docs/REFUSALS.md): when the refusal is
 * made, and the arguments its message is shown with (a placeholder such as `{field}` for a name).
 */
export interface CatalogueEntry<Args extends unknown[] = never[], Code extends string = string> {
  (...args: Args): Refusal<Code>;
  readonly errorCode: Code;
  readonly when: string;
  readonly example: Args;
}

/** A catalogue entry: its stable code written once, beside the refusal it names (Fastify's createError). */
export function entry<Args extends unknown[], Code extends string = string>(
  errorCode: Code,
  when: string,
  make: (...args: Args) => Refusal,
  ...example: NoInfer<Args>
): CatalogueEntry<Args, Code> {
  const coded = (...args: Args): Refusal<Code> => ({ ...make(...args), errorCode });
  return Object.assign(coded, { errorCode, when, example });
}

/** An entry as spec/refusals.yaml writes it (and generated/refusal-catalogue.ts carries it). */
export interface EntryText {
  readonly code: string;
  readonly responseCode: Refusal['code'];
  readonly status?: number;
  /** Its arguments' names and types, in order (see spec/refusals.yaml). */
  readonly args?: readonly (readonly [name: string, type: string])[];
  readonly message: string | readonly string[];
  readonly when: string;
  readonly example?: readonly unknown[];
}

const PLACEHOLDER = /\{([A-Za-z]+)\}/g;

/** An argument as its message writes it: a kind left out is `Field`, an `upper` one in capitals. */
function written(value: unknown, type: string): unknown {
  if (type.startsWith('kind') && value === undefined) return 'Field' satisfies RefusalKind;
  if (type.startsWith('upper') && typeof value === 'string') return value.toUpperCase();
  return value;
}

/** Whether each placeholder of a message has a value to put in (not left out, not empty). */
const given = (message: string, values: Record<string, unknown>) =>
  [...message.matchAll(PLACEHOLDER)].every(([, name]) => values[name!] !== undefined && values[name!] !== '');

/** The entry of a catalogue the spec writes, callable. */
export function entryOf<Args extends unknown[], Code extends string = string>(
  text: EntryText,
): CatalogueEntry<Args, Code> {
  const names = text.args ?? [];
  const messages = typeof text.message === 'string' ? [text.message] : text.message;
  const make = (...args: Args): Refusal => {
    const values: Record<string, unknown> = {};
    names.forEach(([name, type], i) => {
      values[name] = written(args[i], type);
    });
    const message = messages.find((m) => given(m, values)) ?? messages.at(-1)!;
    const status = typeof values.httpStatus === 'number' ? values.httpStatus : text.status;
    const refusal = refuse(
      text.responseCode,
      message.replace(PLACEHOLDER, (_, name: string) => String(values[name])),
      status,
    );
    return values.reason === undefined ? refusal : { ...refusal, reason: values.reason as string };
  };
  return entry<Args, Code>(text.code as Code, text.when, make, ...((text.example ?? []) as NoInfer<Args>));
}

/** A catalogue's entries, by name, callable. */
export function catalogueOf<Entries extends Record<string, unknown[]>, Code extends string = string>(texts: {
  readonly [name: string]: EntryText;
}): { [Name in keyof Entries]: CatalogueEntry<Entries[Name], Code> } {
  return Object.fromEntries(Object.entries(texts).map(([name, text]) => [name, entryOf(text)])) as never;
}
