// The one form chooser: which form (oneOf branch) of an operation's request a body is sent as, and
// which hash fields that form signs. The client, the contract suite, its request builder and the
// bench all choose through it, from the forms the operation table carries (OperationModel's
// requestForms, or the client table's compact copy of them). Runs in browsers: no validator needed.

/** One form of a request body, as the operation table describes it (generated from the form's schema). */
export interface RequestForm<Recipe extends string = string, Kind extends string = string> {
  /** The form's schema (component name). */
  schema: string;
  /** Every field the form declares. */
  accepts: readonly string[];
  /** The fields it requires less those a sender fills in (method, body credentials, hash fields). */
  required: readonly string[];
  /** The body credential kinds the form takes (x-body-credentials; tokens aside): their id and key fields are filled in. */
  fill: readonly Kind[];
  /** The body hashes the form takes, in signing order; `when`: made only once one of these fields is sent (dependentRequired). */
  hashes: readonly { name: string; recipe: Recipe; when?: readonly string[] }[];
}

/** What the chooser reads of a form: its fields, absent where the operation has one form only. */
export interface FormFields {
  accepts?: readonly string[];
  required?: readonly string[];
}

type Body = Readonly<Record<string, unknown>>;

const sent = (body: Body, field: string) => body[field] !== undefined;

/**
 * The form a body is in: the first whose required fields it has and whose fields it stays within;
 * when none fits, the one whose required fields it has most of, so that the gateway (or the
 * validator) names what is wrong with the form the caller most likely meant.
 */
export function chooseForm<F extends FormFields>(forms: readonly F[], body: Body): F {
  if (forms.length === 1) return forms[0]!;
  const keys = Object.keys(body).filter((k) => sent(body, k));
  const fits = forms.find(
    (f) => (f.required ?? []).every((r) => sent(body, r)) && keys.every((k) => !f.accepts || f.accepts.includes(k)),
  );
  if (fits) return fits;
  const score = (f: F) => (f.required ?? []).filter((r) => sent(body, r)).length;
  return forms.reduce((best, f) => (score(f) > score(best) ? f : best));
}

/**
 * Each form's own fields: those it requires that not every form of the operation requires (a card
 * number, a payframe token, a wallet's cryptogram), the fields that tell the forms apart.
 */
export function ownFields(forms: readonly FormFields[]): ReadonlySet<string>[] {
  const required = forms.map((f) => f.required ?? []);
  return required.map((own) => new Set(own.filter((r) => !required.every((other) => other.includes(r)))));
}

/** The hash fields a body in this form is signed with: each the form takes, a conditional one only when its trigger is sent. */
export function formHashes<H extends { name: string; when?: readonly string[] }>(
  form: { hashes: readonly H[] },
  body: Body,
): H[] {
  return form.hashes.filter((h) => !h.when || h.when.some((f) => sent(body, f)));
}
