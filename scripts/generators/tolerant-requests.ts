// The request bodies as the gateway reads them, in the bundled document: each operation's request
// body (JSON, and the form/XML mode's) points at a tolerant copy of its exact request schema, so that
// a validator generated from the published document (ajv, express-openapi-validator, Prism...)
// accepts what the gateway accepts, and refuses what it refuses. The exact schemas stay in
// components (closed objects, upper-case codes): the types and the typed client are made from them,
// and the server stubs validate against them after reading the body as the gateway does
// (server-stubs/core/request.ts). Each tolerant copy says what it is a copy of (x-tolerant-of).
//
// What the gateway does before it validates, and the tolerant copy says in JSON Schema:
// - x-unknown-fields: ignore: a field no form of the operation declares is dropped. The copy is
//   open (no additionalProperties: false); a field another form of the operation declares stays
//   forbidden (`name: false`), as the gateway keeps it and the form's own schema refuses it.
// - x-normalise: uppercase: the field is read upper-cased. The copy's field takes its values in
//   any letter case (a pattern of [Aa][Uu][Dd] alternatives, from the exact schema's enumeration).
// - What each protocol's reader does (runtime/protocols/, `asSent`): where an empty value is the
//   field not sent (the form/XML mode's x-wire-formats form.empty), the protocol's copy takes '' for
//   any field, and every `required` of it asks for a value that is not '' (dependentRequired written
//   as if/then to the same end); where the protocol carries only text, a boolean, integer or number
//   field also takes the text its reader turns into one.
import { deref } from '../../runtime/document.ts';
import { withExactSchemas, withExactSchemasAtRoot } from '../../runtime/exact-requests.ts';
import type { Protocol } from '../../runtime/protocols/protocol.ts';
import type { Doc, DocNode } from '../lib/contract.ts';
import { protocolsOf } from '../lib/protocols.ts';
import { SpecProblem } from './wire-formats.ts';

/** A protocol as its tolerant copies need it: what its reader does, and the copies' names. */
interface Mode {
  asSent: Protocol['asSent'];
  /** The copies' name suffix (AsSent for the spec's own protocol, As<Id>Sent for another) and title words. */
  suffix: string;
  label: string;
}

const modeOf = (protocol: Protocol, own: boolean): Mode => ({
  asSent: protocol.asSent,
  suffix: own ? 'AsSent' : `As${protocol.id[0]!.toUpperCase()}${protocol.id.slice(1)}Sent`,
  label: protocol.label,
});

const REF = '#/components/schemas/';
const nameOf = (ref: string) => (ref.startsWith(REF) ? ref.slice(REF.length) : undefined);
const NOT_EMPTY = { not: { const: '' } };
const EMPTY = { const: '' };

/** The values a schema allows, from its enum, const and anyOf/oneOf branches of those; undefined when it allows others. */
function allowedValues(doc: Doc, node: DocNode): string[] | undefined {
  const s = deref(doc, node);
  if (Array.isArray(s.enum)) return s.enum.every((v: unknown) => typeof v === 'string') ? s.enum : undefined;
  if (typeof s.const === 'string') return [s.const];
  if (s.maxLength === 0) return [''];
  const branches = s.anyOf ?? s.oneOf;
  if (!Array.isArray(branches)) return undefined;
  const values: string[] = [];
  for (const branch of branches) {
    const some = allowedValues(doc, branch);
    if (!some) return undefined;
    values.push(...some);
  }
  return values;
}

const anyCase = (value: string) =>
  [...value]
    .map((c) =>
      c.toUpperCase() !== c.toLowerCase()
        ? `[${c.toUpperCase()}${c.toLowerCase()}]`
        : c.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
    )
    .join('');

/** The type a deref'd schema gives its values, when it is one of the form reader's coerced types. */
function coercedType(doc: Doc, node: DocNode): 'boolean' | 'integer' | 'number' | undefined {
  const s = deref(doc, node);
  const type = Array.isArray(s.type) ? s.type.find((t: string) => t !== 'null') : s.type;
  return type === 'boolean' || type === 'integer' || type === 'number' ? type : undefined;
}

class Tolerant {
  private readonly doc: Doc;
  private readonly schemas: DocNode;
  constructor(doc: Doc) {
    this.doc = doc;
    this.schemas = doc.components.schemas;
  }

  /** A field type read upper-cased, in any letter case: its own component, made once. */
  private anyCaseOf(name: string): DocNode {
    const target = `${name}AnyCase`;
    if (!this.schemas[target]) {
      const exact = this.schemas[name];
      const values = allowedValues(this.doc, exact);
      if (!values)
        throw new Error(`${name} has x-normalise: uppercase but no list of values to take in any letter case`);
      this.schemas[target] = {
        type: 'string',
        description: `${name} in any letter case: the gateway reads it upper-cased (x-normalise).`,
        pattern: `^(?:${values.map(anyCase).join('|')})$`,
        'x-tolerant-of': name,
        ...(exact['x-expected'] ? { 'x-expected': exact['x-expected'] } : {}),
      };
    }
    return { $ref: `${REF}${target}` };
  }

  /** A property's schema as the gateway reads it in this mode. */
  private property(node: DocNode | boolean, mode: Mode): DocNode | boolean {
    if (typeof node === 'boolean') return node;
    const name = typeof node.$ref === 'string' ? nameOf(node.$ref) : undefined;
    const target = name ? this.schemas[name] : node;
    let out: DocNode =
      name && target?.['x-normalise'] === 'uppercase'
        ? this.anyCaseOf(name)
        : deref(this.doc, node).type === 'object' && mode.asSent.emptyIsAbsent
          ? this.object(deref(this.doc, node), mode, undefined)
          : node;
    const type = mode.asSent.text ? coercedType(this.doc, node) : undefined;
    const text = type ? mode.asSent.text![type] : undefined;
    if (text || mode.asSent.emptyIsAbsent)
      out = { anyOf: [out, ...(text ? [text] : []), ...(mode.asSent.emptyIsAbsent ? [EMPTY] : [])] };
    return out;
  }

  /**
   * An object schema as the gateway reads it: open to fields no form declares when `declared` (the
   * operation's fields) is given, its properties tolerant, its requirements asking for a value in the
   * form mode. A nested object (`declared` undefined) stays closed: the gateway drops top-level fields only.
   */
  private object(schema: DocNode, mode: Mode, declared: Set<string> | undefined): DocNode {
    const { additionalProperties, properties, title: _title, ...rest } = schema;
    const out: DocNode = { ...rest };
    if (!declared && additionalProperties !== undefined) out.additionalProperties = additionalProperties;
    out.properties = Object.fromEntries(
      Object.entries<DocNode>(properties ?? {}).map(([field, node]) => [field, this.property(node, mode)]),
    );
    // A field another form declares: the gateway keeps it and this form refuses it (sent empty in a form, it is not sent).
    for (const field of declared ?? [])
      if (!(field in out.properties)) out.properties[field] = mode.asSent.emptyIsAbsent ? EMPTY : false;
    return mode.asSent.emptyIsAbsent ? requiringValues(out) : out;
  }

  /** The tolerant copy of a request schema (a method's, with its forms, or a form's), made once per mode. */
  request(name: string, mode: Mode, declared?: Set<string>): DocNode {
    const target = `${name}${mode.suffix}`;
    if (!this.schemas[target]) {
      const exact = this.schemas[name];
      if (!exact) throw new Error(`no schema ${name}`);
      const forms: string[] = (exact.oneOf ?? []).map((f: DocNode) => nameOf(f.$ref)!);
      const fields =
        declared ??
        new Set([...fieldsOf(this.doc, exact), ...forms.flatMap((f) => fieldsOf(this.doc, this.schemas[f]))]);
      const { oneOf: _forms, ...method } = exact;
      if (forms.length) apart(this.doc, name, forms);
      // The forms' copies exclude each other by construction (apart), so a request matches one of
      // them at most: `anyOf` takes what `oneOf` would, without asking a validator to count matches
      // (nor Redocly's no-illogical-composition-keywords to see a `false` field as a refusal).
      const copy = forms.length
        ? {
            ...this.object(withoutRepeated(method, formSchemas(this.doc, forms)), mode, undefined),
            anyOf: forms.map((form) => this.request(form, mode, fields)),
          }
        : this.object(exact, mode, fields);
      this.schemas[target] = {
        title: `${exact.title ?? name} (${mode.label}, as sent)`,
        ...copy,
        'x-tolerant-of': name,
      };
    }
    return { $ref: `${REF}${target}` };
  }
}

const fieldsOf = (doc: Doc, schema: DocNode): string[] => Object.keys(deref(doc, schema)?.properties ?? {});

const formSchemas = (doc: Doc, forms: string[]): DocNode[] =>
  forms.map((form) => deref(doc, doc.components.schemas[form]));

/**
 * A method's schema without what every form says alike (its `method`, declared and required): each
 * form's copy says it. Left beside the forms, a generator makes the copy "those fields, or a form"
 * (openapi-typescript: `{ method } | A | B`), which takes a body of `method` alone.
 */
function withoutRepeated(method: DocNode, forms: DocNode[]): DocNode {
  const declaredAlike = (field: string) =>
    forms.every((form) => JSON.stringify(form.properties?.[field]) === JSON.stringify(method.properties?.[field]));
  const requiredByAll = (field: string) => forms.every((form) => (form.required ?? []).includes(field));
  const { properties: all, required: asked, ...rest } = method;
  const properties = Object.fromEntries(Object.entries(all ?? {}).filter(([field]) => !declaredAlike(field)));
  const required = (asked ?? []).filter((field: string) => !(declaredAlike(field) && requiredByAll(field)));
  return {
    ...rest,
    ...(Object.keys(properties).length && { properties }),
    ...(required.length && { required }),
  };
}

/**
 * Each two forms of a request are told apart by a field one of them requires and the other does not
 * declare. Their copies then exclude each other in every mode: that form's copy asks the field for a
 * value, the other's refuses it (`false`; where an empty value is the field not sent, it takes '' only).
 */
function apart(doc: Doc, request: string, forms: string[]): void {
  const schemas = forms.map((form) => deref(doc, doc.components.schemas[form]));
  const requiresUndeclared = (a: DocNode, b: DocNode) =>
    (a.required ?? []).some((field: string) => !(field in (b.properties ?? {})));
  for (const [i, a] of schemas.entries())
    for (const [j, b] of schemas.entries())
      if (i < j && !requiresUndeclared(a, b) && !requiresUndeclared(b, a))
        throw new SpecProblem(
          `${request}: its forms ${forms[i]} and ${forms[j]} are told apart by no field: each declares every field the other requires, so a request the gateway reads with its fields unknown to both dropped could be either (the published document's tolerant copies could not refuse it in the one and take it in the other). Give one of them a required field the other does not declare.`,
        );
}

/**
 * The requirements where an empty value is the field not sent: each `required` of the schema (and of its if/then/else and
 * combinators) asks for a value that is not '', and dependentRequired becomes if/then, triggered by
 * a value that is not '': an empty value is the field not sent.
 */
function requiringValues(schema: DocNode): DocNode {
  if (!schema || typeof schema !== 'object' || Array.isArray(schema)) return schema;
  const out: DocNode = { ...schema };
  for (const key of ['if', 'then', 'else', 'not'])
    if (out[key] && typeof out[key] === 'object') out[key] = requiringValues(out[key]);
  for (const key of ['allOf', 'anyOf', 'oneOf'])
    if (Array.isArray(out[key])) out[key] = out[key].map((s: DocNode) => (s.$ref ? s : requiringValues(s)));
  if (Array.isArray(out.required) && out.required.length) {
    const valued = Object.fromEntries(out.required.map((f: string) => [f, NOT_EMPTY]));
    out.allOf = [...(out.allOf ?? []), { properties: valued }];
  }
  if (out.dependentRequired) {
    const rules = Object.entries<string[]>(out.dependentRequired).map(([field, needs]) => ({
      if: { required: [field], properties: { [field]: NOT_EMPTY } },
      // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then, not a thenable
      then: { required: needs, properties: Object.fromEntries(needs.map((f) => [f, NOT_EMPTY])) },
    }));
    delete out.dependentRequired;
    out.allOf = [...(out.allOf ?? []), ...rules];
  }
  return out;
}

/** The bundled document with every request body pointing at its tolerant copy, in each protocol that serves it. */
export function withTolerantRequests(doc: Doc): Doc {
  if (doc['x-unknown-fields']?.policy !== 'ignore') return doc;
  const tolerant = new Tolerant(doc);
  const protocols = protocolsOf(doc);
  const own = protocols.canonical;
  // A spec from before the wire formats (an older release, bundled by the diff) declares none.
  if (!own) return doc;
  for (const item of Object.values<DocNode>(doc.paths ?? {})) {
    for (const op of Object.values<DocNode>(item)) {
      const content = op?.requestBody?.content;
      const exact = content?.[own.requestType];
      if (!exact?.schema) continue;
      const schema = exact.schema;
      const refs: string[] = (schema.oneOf ?? [schema]).map((s: DocNode) => nameOf(s.$ref ?? ''));
      if (refs.some((r) => !r))
        throw new Error(`a request body's schema is not a list of component $refs: ${JSON.stringify(schema)}`);
      const copies = (mode: Mode) => {
        const list = refs.map((r) => tolerant.request(r, mode));
        if (!schema.oneOf) return list[0];
        const mapping = schema.discriminator?.mapping as Record<string, string> | undefined;
        return {
          ...schema,
          oneOf: list,
          // The discriminator maps each method to its branch: the copy of the schema it mapped to.
          ...(mapping && {
            discriminator: {
              ...schema.discriminator,
              mapping: Object.fromEntries(
                Object.entries(mapping).map(([value, ref]) => [value, tolerant.request(nameOf(ref)!, mode).$ref]),
              ),
            },
          }),
        };
      };
      // Each added protocol's entry is the spec's own schema as its reader reads it, then the own one.
      for (const protocol of protocols.all)
        if (protocol !== own && content[protocol.requestType])
          content[protocol.requestType].schema = copies(modeOf(protocol, false));
      exact.schema = copies(modeOf(own, true));
    }
  }
  return doc;
}

/** The component schema each $ref under `node` names (a pointer into one names it too). */
function schemasNamed(node: unknown, seen = new Set<unknown>(), out = new Set<string>()): Set<string> {
  if (!node || typeof node !== 'object' || seen.has(node)) return out;
  seen.add(node);
  const ref = (node as DocNode).$ref;
  const name = typeof ref === 'string' ? nameOf(ref)?.split('/')[0] : undefined;
  if (name) out.add(name);
  for (const value of Object.values(node)) schemasNamed(value, seen, out);
  return out;
}

/** The names `from` $refs, and every schema those $ref in turn. */
function closure(schemas: Record<string, DocNode>, from: Iterable<string>): Set<string> {
  const out = new Set<string>();
  const todo = [...from];
  for (let name = todo.pop(); name !== undefined; name = todo.pop()) {
    if (out.has(name) || !schemas[name]) continue;
    out.add(name);
    todo.push(...schemasNamed(schemas[name]));
  }
  return out;
}

/**
 * The document as it is published (generated/openapi.json): the exact request schemas its tolerant
 * copies are made of, which no operation uses, kept out of its components under x-exact-requests
 * (runtime/exact-requests.ts), with what only they use.
 */
export function published(doc: Doc): Doc {
  const schemas: Record<string, DocNode> = doc.components?.schemas ?? {};
  // What the wire uses: every component schema the paths, webhooks and other components reach by $ref.
  const { schemas: _named, ...components } = doc.components;
  const used = closure(schemas, schemasNamed({ ...doc, components }));
  // The schemas copies are made of that the wire no longer uses, and what they alone use (their forms).
  const unused = (name: string) => !used.has(name);
  const copied: string[] = Object.values(schemas).flatMap((s) => s['x-tolerant-of'] ?? []);
  const exact = [...closure(schemas, copied.filter(unused))].filter(unused);
  return withExactSchemasAtRoot(doc, new Set(exact));
}

/**
 * The document with every request body pointing at the exact schema its tolerant copy was made from,
 * and without the copies: what the types are made from (the typed client sends exact requests). The
 * published document's exact schemas are taken back among the components first (withExactSchemas).
 */
export function withExactRequests(published: Doc): Doc {
  const doc = withExactSchemas(published);
  const schemas = doc.components?.schemas ?? {};
  const exact = (node: DocNode): DocNode => {
    const name = typeof node?.$ref === 'string' ? nameOf(node.$ref) : undefined;
    const of = name ? schemas[name]?.['x-tolerant-of'] : undefined;
    return of ? { ...node, $ref: `${REF}${of}` } : node;
  };
  const paths = Object.fromEntries(
    Object.entries<DocNode>(doc.paths ?? {}).map(([path, item]) => [
      path,
      Object.fromEntries(
        Object.entries<DocNode>(item).map(([verb, op]) => {
          const content = op?.requestBody?.content;
          if (!content) return [verb, op];
          const entries = Object.entries<DocNode>(content).map(([type, entry]) => {
            const schema = entry.schema;
            if (!schema) return [type, entry];
            if (!schema.oneOf) return [type, { ...entry, schema: exact(schema) }];
            const mapping = schema.discriminator?.mapping as Record<string, string> | undefined;
            return [
              type,
              {
                ...entry,
                schema: {
                  ...schema,
                  oneOf: schema.oneOf.map(exact),
                  ...(mapping && {
                    discriminator: {
                      ...schema.discriminator,
                      mapping: Object.fromEntries(
                        Object.entries(mapping).map(([value, ref]) => [value, exact({ $ref: ref }).$ref]),
                      ),
                    },
                  }),
                },
              },
            ];
          });
          return [verb, { ...op, requestBody: { ...op.requestBody, content: Object.fromEntries(entries) } }];
        }),
      ),
    ]),
  );
  const kept = Object.fromEntries(Object.entries<DocNode>(schemas).filter(([, s]) => !s?.['x-tolerant-of']));
  return { ...doc, paths, components: { ...doc.components, schemas: kept } } as Doc;
}
