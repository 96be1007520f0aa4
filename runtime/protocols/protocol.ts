// What a wire format is to the rest of the package: a protocol (Smithy's word). Each is one module
// in this folder, named as the spec's x-wire-formats names it (json.ts; form.ts, a form request
// answered in XML), holding its reader, its writer and the limits it declares; x-wire-formats.<id>
// declares its media types, the paths it serves and its settings (generated/protocols.ts binds the
// declaration to the module). The stubs' core, the mock's front, the contract suite and
// the generators work on typed values and a Protocol, and never name a format themselves.

/**
 * The most fields and list items a request body may hold, counted at every depth, whatever its
 * protocol: refused before the body is parsed (each protocol's reader counts first), so that the work
 * a refusal costs is bounded by this, not by what the body holds (a million unknown fields took
 * JSON.parse 2.6 s, and the unknown-field pass as long again). The contract's largest request holds
 * about 12 000: createPayouts, 1000 transactions of a dozen fields each.
 */
export const MAX_FIELDS = 16_384;

/** The refusal's words for a body past MAX_FIELDS. */
export const TOO_MANY_FIELDS = `holds more than ${MAX_FIELDS} fields and list items`;

/** The JSON types a schema allows. */
export type JsonType = 'string' | 'boolean' | 'integer' | 'number' | 'object' | 'array' | 'null';

/**
 * A value's shape as the protocols need it, read from its schema by the generator (the operation
 * table's `shapes`): what a text becomes (a form and XML carry only text), and what a list's items
 * are called. Only what is not a plain string is listed: a field absent from `fields` is a string.
 */
export interface Shape {
  /** The types its schema allows (each branch of a union); absent: a string. */
  readonly types?: readonly JsonType[];
  /** An object's fields that are not plain strings. */
  readonly fields?: { readonly [name: string]: Shape };
  /** A list's items. */
  readonly items?: Shape;
  /** The name of one item (the items' `xml.name`), for a protocol that names each item. */
  readonly itemName?: string;
}

/** An operation's shapes: its request (null without a body), its result and its refusal. */
export interface OperationShapes {
  readonly request: Shape | null;
  readonly result: Shape;
  readonly refusal: Shape;
}

/**
 * Why a body cannot be read: the refusal catalogue's entry that says so (spec/refusals.yaml), with
 * its arguments. A protocol names the entry; the caller makes the refusal.
 */
export interface Unreadable {
  readonly refusal: string;
  readonly args: readonly unknown[];
}
/**
 * A body read, or why it cannot be. `nulFree`: the protocol has seen in the text that no value or key
 * of it holds a NUL character (runtime/nul-text.ts), so that no walk of what it read need look.
 */
export type Read = { ok: unknown; nulFree?: boolean } | { unreadable: Unreadable };

/** An answer read back as a client of the protocol reads it, or why it is no answer of the protocol. */
export type AnswerRead = { ok: Record<string, unknown> } | { error: string };

/** A wire format as the spec declares it (x-wire-formats.<id>, served by runtime/protocols/<id>.ts). */
export interface WireFormatDeclaration {
  /** The media type of its requests. */
  request: string;
  /** The media type of its answers. */
  answer: string;
  /** The paths it serves; absent: every path. */
  paths?: readonly string[];
  /** On its paths, a request whose body type is none of the protocols' is answered in it (unless another's mark is sent). */
  default?: boolean;
  'x-inferred'?: string;
  readonly [setting: string]: unknown;
}

/** What a protocol cannot carry, found in a schema: the problem and how to fix the schema. */
export interface LimitProblem {
  readonly limit: string;
  readonly message: string;
  readonly fix: string;
}

/** A property of a request or an answer, as a protocol's limits look at it. */
export interface PropertyView {
  readonly side: 'request' | 'answer';
  /** The property's name, and the names of the objects and lists it is inside (outermost first). */
  readonly name: string;
  readonly within: readonly string[];
  /** Whether it is inside a list's items. */
  readonly inList: boolean;
  /** Its schema, its $refs resolved (branches of a union are looked at one by one). */
  readonly schema: Record<string, any>;
  /** The names of the answer's (or request's) top-level fields. */
  readonly topLevel: ReadonlySet<string>;
}

/** A rule of what a protocol cannot carry, checked over every property when the document is bundled and linted. */
export interface Limit {
  readonly id: string;
  check(property: PropertyView): Omit<LimitProblem, 'limit'> | undefined;
}

export interface Protocol {
  /** Its name in x-wire-formats (and on the contract suite's command line, --wire). */
  readonly id: string;
  /** What reports call it: JSON, form/XML. */
  readonly label: string;
  readonly requestType: string;
  readonly answerType: string;
  /** The paths it serves; null: every path. */
  readonly paths: readonly string[] | null;
  /** A header (lower case) that marks a request as this protocol's when its body type names none. */
  readonly mark: string | undefined;
  /** Whether it answers, on its paths, a request whose body type names no protocol (and that carries no mark). */
  readonly isDefault: boolean;
  /**
   * The one charset its bodies are read in, where its Content-Type may name one (a form's: UTF-8, its
   * percent-escapes being UTF-8 bytes): a body of its media type naming another charset is not its,
   * and is refused saying so. Absent: a charset named is not read.
   */
  readonly charset?: string;
  /** What it cannot carry, checked over the spec when it is bundled and linted (runtime/protocols/limits.ts). */
  readonly limits: readonly Limit[];

  /** Whether a body sent with this Content-Type is this protocol's. */
  takes(contentType: string | undefined): boolean;
  /**
   * A header the protocol requires that is missing or wrong (the JSON mode's version header); or,
   * where the body's first bytes plainly are another format, that (the header would not make it
   * readable). Only the body's start is looked at: this check comes before the body is read.
   */
  checkHeaders(
    headers: Readonly<Record<string, string | undefined>>,
    body?: string | Uint8Array,
  ): Unreadable | undefined;
  /** A request body as sent: its fields, untyped where the protocol carries only text. */
  read(body: string | Uint8Array): Read;
  /**
   * Of a body `read` refused (a field sent twice, a character a form field cannot hold), the top-level
   * text fields named, read leniently where they can be (each field apart from the one at fault), for
   * a request log to find whose request it was: never to serve it. Absent, or undefined: none can be.
   */
  salvage?(body: string, names: readonly string[]): Record<string, string> | undefined;
  /** The fields of a read body as its operation's schema types them (shape), once the operation is known. */
  typed(value: unknown, shape: Shape | null): unknown;
  /** The headers a request of this protocol carries (its Content-Type when it has a body). */
  requestHeaders(withBody: boolean): Record<string, string>;
  /** A request body written in the protocol. */
  writeRequest(value: Readonly<Record<string, unknown>>): string;
  /** An answer written in the protocol; throws (CannotCarry) on a value it cannot carry. */
  writeAnswer(value: Readonly<Record<string, unknown>>, shape?: Shape | null): string;
  /**
   * A quick look at an answer it wrote: true when no value in it can hold a card number, so that the
   * value-by-value reading (runtime/card-numbers.ts cardNumberIn) may be skipped; false when the
   * values must be read. Absent: they always are.
   */
  cannotHoldCardNumber?(written: string): boolean;
  /** An answer read back as the protocol's clients read it, typed by its schema's shape. */
  readAnswer(text: string, shape?: Shape | null): AnswerRead;
  /**
   * A top-level text field's value read from the start of a body not yet whole (the bytes so far, as
   * latin1 text), where the protocol can tell: what an adapter reads of a body depends on its method.
   */
  peek(head: string, field: string): string | undefined;
  /** The responseCode of an answer written in it, for the request log. */
  responseCode(text: string): string | number | undefined;
  /**
   * Its request's content entry in the bundled document (examples aside), for a protocol added beside
   * the spec's own: `schema` is the spec's own, `nested` the request's object and list fields.
   */
  describeRequest?(schema: Record<string, unknown>, nested: readonly string[]): Record<string, unknown>;
  /** Its answer's content entry in the bundled document (examples aside), `schema` the spec's own. */
  describeAnswer?(schema: Record<string, unknown>): Record<string, unknown>;
  /**
   * What its reader does to a request's values before the schema judges them, for the published
   * document's tolerant copies of the request schemas (scripts/generators/tolerant-requests.ts):
   * whether an empty value is a field not sent, and the text (as a JSON Schema) a boolean, integer or
   * number field is read from where the protocol carries only text.
   */
  readonly asSent: {
    readonly emptyIsAbsent: boolean;
    readonly text?: Readonly<Record<'boolean' | 'integer' | 'number', Record<string, unknown>>>;
  };
  /** How the docs show a protocol added beside the spec's own: its curl sample, and a sentence on each method's page. */
  readonly docs?: {
    /** The curl sample's label, and the comment that opens it. */
    readonly sample: string;
    readonly note: string;
    /** The path a sample posts to, as its clients write it (`/post/`). */
    path(path: string): string;
    /** How a method of a shared path is sent in it and answered, after "Also taken". */
    taken(method: string): string;
  };
}

/** The fields every protocol takes from its declaration as they are. */
export function declared(
  id: string,
  declaration: WireFormatDeclaration,
): Pick<Protocol, 'id' | 'requestType' | 'answerType' | 'paths' | 'isDefault'> {
  return {
    id,
    requestType: declaration.request,
    answerType: declaration.answer,
    paths: declaration.paths ?? null,
    isDefault: declaration.default === true,
  };
}

/** A regular expression made once per field name, for a protocol's peek(). */
export function peeker(make: (field: string) => RegExp): (head: string, field: string) => string | undefined {
  const made = new Map<string, RegExp>();
  return (head, field) => {
    let pattern = made.get(field);
    if (!pattern) {
      pattern = make(field.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
      made.set(field, pattern);
    }
    return pattern.exec(head)?.[1];
  };
}

/** A value a protocol cannot carry, found while writing it (the answer's fault, never the caller's). */
export class CannotCarry extends TypeError {}

/** The media type of a Content-Type header, lower case, without its parameters; `undefined` when two are sent at once. */
export function mediaType(contentType: string): string | undefined {
  if (contentType.includes(',')) return undefined;
  const semicolon = contentType.indexOf(';');
  return (semicolon < 0 ? contentType : contentType.slice(0, semicolon)).trim().toLowerCase();
}

/** The charset a Content-Type names (`; charset=…`, quotes taken off), as sent; undefined when it names none. */
export function charsetOf(contentType: string): string | undefined {
  return /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(contentType)?.[1];
}

/**
 * A name defined as the object's own field, as JSON.parse defines it: `__proto__` too, which an
 * assignment would take for the prototype (so only it pays for defineProperty).
 */
export function define(object: Record<string, unknown>, name: string, value: unknown): void {
  if (name === '__proto__')
    Object.defineProperty(object, name, { value, enumerable: true, writable: true, configurable: true });
  else object[name] = value;
}
