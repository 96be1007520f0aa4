// The fields a triggered notification may be given (the spec's x-operation.trigger.set on each
// webhook, in generated/webhooks.ts as `settable`), each value held to the rule of its field in the
// notification's own schema, and the body they make held to the whole schema. The sandbox's control
// API and payment-gateway trigger --set both judge overrides here: the command before it sends them,
// the sandbox before it queues anything.
import type { Ajv2020, ValidateFunction } from 'ajv/dist/2020.js';
import { webhooks, type WebhookName } from '../generated/webhooks.ts';
import { ruleInWords } from '../server-stubs/index.ts';
import { newAjv } from './ajv.ts';

/** Field paths (dotted; an array's item by index, -1 for its last, `*` for every one) and their values. */
export type Overrides = Record<string, unknown>;

/** Why an override (or the body it makes) is refused: the field as the caller named it, and the rule. */
export interface OverrideRefusal {
  field: string;
  rule: string;
}

type Schema = Record<string, any>;
const INDEX = /^(-1|\d+|\*)$/;

/** Whether the caller's path is one the webhook lets a trigger set. */
export function isSettable(event: WebhookName, path: string): boolean {
  const parts = path.split('.');
  return (webhooks[event].settable as readonly string[]).some((allowed) => {
    const want = allowed.split('.');
    return (
      want.length === parts.length &&
      want.every((w, i) => w === parts[i] || (w === '*' && INDEX.test(parts[i]!)) || (w === '-1' && parts[i] === '-1'))
    );
  });
}

export class NotificationOverrides {
  private ajv: Ajv2020 | undefined;
  private readonly schemas: Record<string, Schema>;
  private readonly compiled = new Map<string, ValidateFunction>();

  /** doc: the bundled contract (generated/openapi.json), whose component schemas the webhooks name. */
  constructor(doc: { components?: { schemas?: Record<string, Schema> } }) {
    this.schemas = doc.components?.schemas ?? {};
  }

  private validator(pointer: string): ValidateFunction {
    let v = this.compiled.get(pointer);
    if (!v) {
      // Made on the first override (few runs set one), not at every start: adding the components walks them all.
      if (!this.ajv) {
        this.ajv = newAjv({ strict: false, allErrors: false, validateSchema: false });
        // The schemas' own $refs (#/components/schemas/…) resolve inside this one.
        this.ajv.addSchema({ $id: 'pgw', components: { schemas: this.schemas } });
      }
      v = this.ajv.compile({ $ref: `pgw#${pointer}` });
      this.compiled.set(pointer, v);
    }
    return v;
  }

  /** The schema of the field at path (a JSON pointer into the components), following $refs. */
  private pointerOf(event: WebhookName, path: string): string | undefined {
    let pointer = `/components/schemas/${webhooks[event].schema}`;
    const at = (p: string): Schema | undefined => {
      let node: any = { components: { schemas: this.schemas } };
      for (const part of p.split('/').slice(1)) node = node?.[part.replace(/~1/g, '/').replace(/~0/g, '~')];
      return node;
    };
    for (const part of path.split('.')) {
      let node = at(pointer);
      while (typeof node?.$ref === 'string' && node.$ref.startsWith('#/')) {
        pointer = node.$ref.slice(1);
        node = at(pointer);
      }
      if (!node) return undefined;
      if (INDEX.test(part)) {
        if (!node.items) return undefined;
        pointer += '/items';
      } else {
        if (!node.properties || !Object.hasOwn(node.properties, part)) return undefined;
        pointer += `/properties/${part.replace(/~/g, '~0').replace(/\//g, '~1')}`;
      }
    }
    return pointer;
  }

  /** The fields a trigger may set on this notification, as the spec lists them. */
  settable(event: WebhookName): readonly string[] {
    return webhooks[event].settable;
  }

  /**
   * A value typed on a command line, as its field takes it: the text itself when the field takes that
   * string, else the text read as JSON (a number, a list), else the text (refused by its rule later).
   */
  coerce(event: WebhookName, path: string, text: string): unknown {
    const pointer = this.pointerOf(event, path);
    if (!pointer || this.validator(pointer)(text)) return text;
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  }

  /** The first override that the spec does not let a trigger set, or whose value breaks its field's rule. */
  refusal(event: WebhookName, set: Overrides): OverrideRefusal | undefined {
    for (const [path, value] of Object.entries(set)) {
      const pointer = isSettable(event, path) ? this.pointerOf(event, path) : undefined;
      if (!pointer)
        return {
          field: path,
          rule: `a ${event} notification's ${path} cannot be set; these can: ${this.settable(event).join(', ')}`,
        };
      const validate = this.validator(pointer);
      if (!validate(value)) {
        const error = validate.errors![0]!;
        const inner = error.instancePath.replace(/^\//, '').replace(/\//g, '.');
        return { field: inner ? `${path}.${inner}` : path, rule: ruleInWords(error) };
      }
    }
    return undefined;
  }

  /** A copy of the body with the overrides applied (`*` on every item, -1 on the last). */
  apply<T extends Record<string, unknown>>(body: T, set: Overrides): T {
    const out = structuredClone(body);
    for (const [path, value] of Object.entries(set)) {
      let targets: any[] = [out];
      const parts = path.split('.');
      for (const part of parts.slice(0, -1)) {
        targets = targets.flatMap((t) =>
          part === '*' && Array.isArray(t) ? t : [Array.isArray(t) ? t.at(Number(part)) : t?.[part]],
        );
      }
      const last = parts.at(-1)!;
      for (const t of targets) {
        if (t === null || typeof t !== 'object') continue;
        if (!Array.isArray(t)) t[last] = structuredClone(value);
        else if (last === '*') t.fill(structuredClone(value));
        else if (t.length) t[Number(last) < 0 ? t.length + Number(last) : Number(last)] = structuredClone(value);
      }
    }
    return out;
  }

  /** The first rule the whole body breaks, with its field. */
  bodyRefusal(event: WebhookName, body: unknown): OverrideRefusal | undefined {
    const validate = this.validator(`/components/schemas/${webhooks[event].schema}`);
    if (validate(body)) return undefined;
    const error = validate.errors![0]!;
    const field = error.instancePath.replace(/^\//, '').replace(/\//g, '.');
    return { field: field || 'body', rule: ruleInWords(error) };
  }
}
