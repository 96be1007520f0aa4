// The one form chooser: which form (oneOf branch) of an operation's request a body is sent as, and
// which hash fields that form signs. The client, the contract suite, its request builder, the bench
// and the gateway stubs (which form a refused body is read as) all choose through it, from the forms
// the operation table carries (OperationModel's requestForms, or the client table's compact copy of
// them). Runs in browsers: no validator needed.

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
  /**
   * The fields the form requires only when none of others is sent (`if: {not: {required: [transactionID]}},
   * then: {required: [transactionReferenceID]}`), each with those others: a refusal names both. Absent: none.
   */
  unless?: Readonly<Record<string, readonly string[]>>;
}

/** What the chooser reads of a form: its fields, absent where the operation has one form only. */
export interface FormFields {
  accepts?: readonly string[];
  required?: readonly string[];
}

type Body = Readonly<Record<string, unknown>>;

const sent = (body: Body, field: string) => body[field] !== undefined;

/**
 * The form a body is in, for the client, the contract suite and the gateway alike (the server reads a
 * body no form accepts as the form chosen here, so it names what is wrong with the form the caller
 * signed it as): the first whose required fields the body has and whose fields it stays within; when
 * none fits, the form the body is blamed on (blameForm). A field no form of the operation declares
 * is no sign of any form: the gateway drops it (x-unknown-fields: ignore) before it chooses.
 */
export function chooseForm<F extends FormFields>(forms: readonly F[], body: Body): F {
  if (forms.length === 1) return forms[0]!;
  const within = staysWithin(forms, body);
  return forms.find((f) => (f.required ?? []).every((r) => sent(body, r)) && within(f)) ?? blameForm(forms, body);
}

/**
 * The form a body no form accepts is read as: the first, in the spec's order, whose own fields
 * (ownFields) it holds; when it holds none, the first whose fields it stays within; else the first.
 * So a purchase without any card fields is the card form's (told its card number is required), and
 * one with merchant credentials and an accessToken but no payframe token the payframe form's.
 */
export function blameForm<F extends FormFields>(forms: readonly F[], body: Body): F {
  const { own } = tableOf(forms);
  const pointed = forms.find((_, i) => [...own[i]!].some((name) => sent(body, name)));
  return pointed ?? forms.find(staysWithin(forms, body)) ?? forms[0]!;
}

/** Whether a form declares every field the body holds that some form of the operation declares. */
function staysWithin(forms: readonly FormFields[], body: Body): (form: FormFields) => boolean {
  const { declared } = tableOf(forms);
  const keys = Object.keys(body).filter((k) => sent(body, k) && (!declared || declared.has(k)));
  return (form) => !form.accepts || keys.every((k) => form.accepts!.includes(k));
}

/**
 * Each form's own fields: those it requires that no other form of the operation declares, even
 * unrequired (a payframe token; not processCard's accessToken, which the payframe form takes beside
 * the 3-D Secure forms that require it, nor its card number, which the external 3-D Secure form takes
 * too). A body holding one can be no other form.
 */
export function ownFields(forms: readonly FormFields[]): ReadonlySet<string>[] {
  return forms.map(
    (form) =>
      new Set(
        (form.required ?? []).filter((name) =>
          forms.every((other) => other === form || !(other.accepts ?? other.required ?? []).includes(name)),
        ),
      ),
  );
}

// Per table of forms (an operation's requestForms, a client table's forms), built once: each form's
// own fields, and every field some form declares (undefined where a form's fields are not listed).
const tables = new WeakMap<
  readonly FormFields[],
  { own: readonly ReadonlySet<string>[]; declared: ReadonlySet<string> | undefined }
>();
function tableOf(forms: readonly FormFields[]) {
  let table = tables.get(forms);
  if (!table) {
    const declared = forms.every((f) => f.accepts) ? new Set(forms.flatMap((f) => f.accepts!)) : undefined;
    table = { own: ownFields(forms), declared };
    tables.set(forms, table);
  }
  return table;
}

/** The hash fields a body in this form is signed with: each the form takes, a conditional one only when its trigger is sent. */
export function formHashes<H extends { name: string; when?: readonly string[] }>(
  form: { hashes: readonly H[] },
  body: Body,
): H[] {
  return form.hashes.filter((h) => !h.when || h.when.some((f) => sent(body, f)));
}
