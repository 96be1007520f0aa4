// The forms every refusal message takes, written once, and their reader. The server stubs word their
// refusals through `forms` (server-stubs/core/refusals.ts), the sandbox its business refusals
// (sandbox/refusals.ts); a client reads the field and the rule back out of a message with
// readRefusal, since the answer itself carries only responseCode and responseMessage. Runs in browsers.

/** The words a refusal names its subject with: a body field, a header, a path or query parameter. */
export type RefusalKind = 'Field' | 'Header' | 'Parameter';

export const forms = {
  /** "Field 'x' <predicate>": the base of the others. */
  field: (name: string, predicate: string, kind: RefusalKind = 'Field') => `${kind} '${name}' ${predicate}`,
  /** "Field 'x' is required", with what follows (a condition, the allowed values). */
  required: (name: string, more = '', kind: RefusalKind = 'Field') => forms.field(name, `is required${more}`, kind),
  invalid: (name: string, why: string, kind: RefusalKind = 'Field') => forms.field(name, `is invalid: ${why}`, kind),
  notAllowed: (name: string, kind: RefusalKind = 'Field') => forms.field(name, 'is not allowed', kind),
  /** "The body <predicate>": a rule of the body as a whole. */
  body: (predicate: string) => `The body ${predicate}`,
  /** A refusal that names no field (the request as a whole). */
  request: (why?: string) => (why === undefined ? 'The request is invalid' : `The request is invalid: ${why}`),
};

/** What a refusal message says: the field (header, parameter) it names and the rule, when it names one. */
export interface RefusalReading {
  kind?: RefusalKind;
  field?: string;
  rule: string;
}

const NAMED = /^(Field|Header|Parameter) '([^']+)' (.+)$/s;
const INVALID = 'is invalid: ';

/**
 * The field and the rule of a refusal message worded by `forms`: "Field 'x' is invalid: must be Y"
 * reads { kind: 'Field', field: 'x', rule: 'must be Y' }; a message that names no field is its own rule.
 */
export function readRefusal(message: string): RefusalReading {
  const named = NAMED.exec(message);
  if (!named) return { rule: message };
  const predicate = named[3]!;
  return {
    kind: named[1] as RefusalKind,
    field: named[2]!,
    rule: predicate.startsWith(INVALID) ? predicate.slice(INVALID.length) : predicate,
  };
}
