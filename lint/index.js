// The contract's own lint rules, a Redocly CLI plugin (redocly.yaml: plugins, rules contract/*), run by
// `npm run lint` and so by `npm test`. Each rule walks the whole document from its root (walk.js).
//
//   contract/no-card-data-out      no answer or webhook carries a card number unmasked, or a CSC
//   contract/card-amount-format    every amount of a card operation (x-tagGroups: Card payments) uses the card amount format
//   contract/examples-per-outcome  every operation names a success and a refusal example, and has them
//   contract/inferred-has-reason   everything marked inferred says why
//   contract/rule-in-prose         a schema whose description states a rule about values (a time zone,
//                                  business days, an echo, a sum, what a file lists, how attempts follow
//                                  one another) carries the mark that states it (spec/extensions/rules.schema.yaml)
//   contract/array-items, discriminator-maps-objects, size-for-tools, examples-paired
//                                  the document stays readable by third-party tools (tool-readable.js)
//   contract/wire-format-limits    every body is one its wire formats can carry (protocol-limits.js)
import { readFileSync } from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { WireFormatLimits } from './protocol-limits.js';
import { ArrayItems, DiscriminatorMapsObjects, ExamplesPaired, SizeForTools } from './tool-readable.js';
import { eachNode, eachProperty, operations, resolved } from './walk.js';

/**
 * A schema the rule options name (`file#/Name`, relative to the root document of spec/): in a bundled
 * document (generated/openapi.json, linted as shipped) it is the component of that name, else it is
 * read from its file.
 */
function namedSchema(rootPath, root, ref) {
  const [file, pointer = ''] = ref.split('#');
  const name = pointer.split('/').filter(Boolean).at(-1);
  const component = name ? root?.components?.schemas?.[name] : undefined;
  if (component) return component;
  const doc = YAML.parse(readFileSync(path.resolve(path.dirname(rootPath), file), 'utf8'));
  return pointer
    .split('/')
    .filter(Boolean)
    .reduce((node, key) => node?.[key], doc);
}

// Names of card data. A CSC has no masked form at all; a card number must be masked (X in its pattern).
const CSC = /(^|[a-z_])(csc|cvv2?|cvc2?|cv2|cid)$|securitycode/i;
const CARD_NUMBER = /(^|[a-z_])(cardnumber|pan)$/i;
const FULL_PAN_PATTERN = /\{1[2-9],\s*19\}/;

/** Digit runs of 13 to 19 that pass the Luhn check: a card number written into an example. */
function luhnNumbers(text) {
  const found = [];
  for (const [run] of text.matchAll(/(?<![0-9])[0-9]{13,19}(?![0-9])/g)) {
    let sum = 0;
    for (let i = 0; i < run.length; i++) {
      let d = Number(run[run.length - 1 - i]);
      if (i % 2 === 1) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
      sum += d;
    }
    if (sum % 10 === 0) found.push(run);
  }
  return found;
}

function NoCardDataOut() {
  return {
    Root: {
      leave(root, ctx) {
        const reported = new Set();
        const report = (message, location) => {
          const key = `${location.source.absoluteRef}#${location.pointer}`;
          if (reported.has(key)) return;
          reported.add(key);
          ctx.report({ message, location });
        };
        for (const { area, key, verb, bodies } of operations(ctx, root, ctx.location)) {
          const where = area === 'webhooks' ? `webhook ${key}` : `${verb.toUpperCase()} ${key}`;
          for (const body of bodies.filter((b) => b.side === 'out')) {
            eachProperty(ctx, body.schema, body.location, (name, node, location) => {
              if (CSC.test(name))
                report(`${where} answers \`${name}\`: a card security code is never sent back.`, location);
              else if (CARD_NUMBER.test(name) && !(typeof node?.pattern === 'string' && node.pattern.includes('X'))) {
                report(
                  `${where} answers \`${name}\` unmasked: a card number goes out as its first six digits, XXXXXX and its last four (a pattern with X).`,
                  location,
                );
              } else if (typeof node?.pattern === 'string' && FULL_PAN_PATTERN.test(node.pattern)) {
                report(
                  `${where} answers \`${name}\` with the pattern of a full card number (${node.pattern}).`,
                  location,
                );
              }
            });
            for (const [name, raw] of Object.entries(body.examples ?? {})) {
              const example = resolved(ctx, raw, body.examplesLocation.child(name));
              for (const number of luhnNumbers(JSON.stringify(example.node?.value ?? ''))) {
                report(
                  `${where}: the example ${name} carries a card number (${number.slice(0, 6)}…${number.slice(-4)}) unmasked.`,
                  example.location,
                );
              }
            }
          }
        }
      },
    },
  };
}

function CardAmountFormat(options) {
  const webhooks = new Set(options.webhooks ?? []);
  return {
    Root: {
      leave(root, ctx) {
        // The format is the amount schema's own pattern, read from the spec: written once.
        const format = { node: namedSchema(ctx.location.source.absoluteRef, root, options.schema) };
        if (!format.node?.pattern) {
          ctx.report({
            message: `contract/card-amount-format: the amount schema ${options.schema} has no pattern.`,
            location: ctx.location,
          });
          return;
        }
        const amount = new RegExp(format.node.pattern);
        // Card operations: those tagged with a tag of the spec's own tag group for card payments.
        const group = (root['x-tagGroups'] ?? []).find((g) => g.name === options.tagGroup);
        if (!group) {
          ctx.report({
            message: `contract/card-amount-format: no x-tagGroups entry named ${options.tagGroup}.`,
            location: ctx.location,
          });
          return;
        }
        const cardTags = new Set(group.tags);
        const seen = new Set();
        for (const { area, key, verb, op, bodies } of operations(ctx, root, ctx.location)) {
          const card = area === 'webhooks' ? webhooks.has(key) : (op.tags ?? []).some((t) => cardTags.has(t));
          if (!card) continue;
          for (const body of bodies) {
            eachProperty(ctx, body.schema, body.location, (name, node, location) => {
              if (!/(^a|A)mount$/.test(name)) return;
              // A field the gateway takes but never reads (x-unread: why) keeps the form clients send.
              if (node?.['x-unread']) return;
              if (node?.anyOf?.some((b, i) => resolved(ctx, b, location.child('anyOf').child(i)).node?.['x-unread']))
                return;
              const id = `${location.source.absoluteRef}#${location.pointer}`;
              if (seen.has(id)) return;
              seen.add(id);
              const isAmount = (n) =>
                n?.type === 'string' &&
                (n.pattern === format.node.pattern || (typeof n.const === 'string' && amount.test(n.const)));
              // A tolerant copy's field (x-tolerant-of: a mode whose reader takes '' for a field not
              // sent) is the amount or the empty text, and nothing else.
              const tolerated =
                Array.isArray(node?.anyOf) &&
                node.anyOf.some((b, i) => isAmount(resolved(ctx, b, location.child('anyOf').child(i)).node)) &&
                node.anyOf.every(
                  (b, i) => b?.const === '' || isAmount(resolved(ctx, b, location.child('anyOf').child(i)).node),
                );
              // A copy's requirement that the field holds a value (not '') says nothing of its format.
              const asksValue = node && Object.keys(node).length === 1 && node.not?.const === '';
              if (!isAmount(node) && !tolerated && !asksValue) {
                ctx.report({
                  message: `${area === 'webhooks' ? `webhook ${key}` : `${verb.toUpperCase()} ${key}`}: \`${name}\` is a card amount; it must use the amount format (${options.schema}: a string, ${format.node.pattern}).`,
                  location,
                });
              }
            });
          }
        }
      },
    },
  };
}

function ExamplesPerOutcome() {
  return {
    Root: {
      leave(root, ctx) {
        for (const { area, key, verb, op, location, bodies } of operations(ctx, root, ctx.location)) {
          // Notifications have no refusal: the gateway sends them, nothing refuses them.
          if (area === 'webhooks') continue;
          const descriptors = op['x-methods']
            ? Object.entries(op['x-methods']).map(([method, raw]) => ({
                id: method,
                ...resolved(ctx, raw, location.child('x-methods').child(method)),
              }))
            : op['x-operation']
              ? [{ id: op.operationId, node: op['x-operation'], location: location.child('x-operation') }]
              : [];
          if (!descriptors.length)
            ctx.report({
              message: `${verb.toUpperCase()} ${key} has no descriptor (x-methods or x-operation).`,
              location,
            });
          const names = new Set(bodies.filter((b) => b.side === 'out').flatMap((b) => Object.keys(b.examples ?? {})));
          for (const d of descriptors) {
            for (const role of ['result', 'refusal']) {
              const listed = d.node?.examples?.[role] ?? [];
              if (!listed.length)
                ctx.report({
                  message: `${d.id} names no ${role === 'result' ? 'success' : 'refusal'} example (examples.${role}).`,
                  location: d.location.child('examples'),
                });
              for (const name of listed) {
                if (!names.has(name))
                  ctx.report({
                    message: `${d.id}: its ${role} example ${name} is not among the success response's examples.`,
                    location: d.location.child('examples').child(role),
                  });
              }
            }
          }
        }
      },
    },
  };
}

function InferredHasReason(options) {
  const min = options.minLength ?? 20;
  const reason = (value) => typeof value === 'string' && value.trim().length >= min;
  return {
    Root: {
      leave(root, ctx) {
        eachNode(ctx, root, ctx.location, {
          descend: (k) => k !== 'examples' && k !== 'example',
          onNode: (n, location) => {
            if ('x-inferred' in n && !reason(n['x-inferred']))
              ctx.report({
                message: `x-inferred must say why (a reason of ${min} characters or more), not ${JSON.stringify(n['x-inferred'])}.`,
                location: location.child('x-inferred'),
              });
            // Descriptors: seeded or inferred, and the reason given.
            if (n.examples && Array.isArray(n.examples.request) && !n.seed && !('inferred' in n))
              ctx.report({
                message:
                  'An operation descriptor says where the seed shows it (seed) or why it is inferred (inferred).',
                location: location,
              });
            for (const word of ['inferred', 'resultInferred', 'payloadInferred']) {
              if (word in n && (n.examples || n.algorithm) && !reason(n[word]))
                ctx.report({
                  message: `${word} must say why (${min} characters or more).`,
                  location: location.child(word),
                });
            }
            // A recipe no public source shows is this contract's own decision: it says so and why.
            if (n.algorithm && n.source === 'defined' && !reason(n.inferred))
              ctx.report({
                message: 'A recipe with source: defined must give its reason in `inferred`.',
                location: location,
              });
          },
        });
      },
    },
  };
}

// What a description says, and the marks any one of which states it machine-readably.
const RULES_IN_PROSE = [
  {
    says: /\b(AEDT|AEST|UTC|GMT|time ?zone|Eastern time|local time)\b/i,
    marks: ['x-time', 'x-settlement-date', 'x-settlement-file'],
    what: 'a time zone',
  },
  { says: /\bbusiness days?\b/i, marks: ['x-settlement-date', 'x-settlement-file'], what: 'business days' },
  { says: /(?<![\w-])(echo(ed|es)?|as sent)\b/i, marks: ['x-echo'], what: 'an echo of the request' },
  { says: /\b(sum of|is the sum|adds up to)\b/i, marks: ['x-sum'], what: 'a sum' },
  {
    says: /\b(settled between|lists? (only )?(the )?(rows|transactions) )/i,
    marks: ['x-settlement-file'],
    what: 'which rows a file lists',
  },
  {
    says: /\b(followed by|attempts? in the order|once every|until every)\b/i,
    marks: ['x-attempts', 'x-rollup', 'x-status-progression'],
    what: 'how statuses or attempts follow one another',
  },
];

const isSchema = (n) =>
  ['type', 'properties', 'items', '$ref', 'enum', 'pattern', 'allOf', 'oneOf', 'const'].some((k) => k in n);

function RuleInProse() {
  return {
    Root: {
      leave(root, ctx) {
        const check = (n, marks, location) => {
          if (Array.isArray(n) || typeof n.description !== 'string' || !isSchema(n)) return;
          for (const rule of RULES_IN_PROSE)
            if (rule.says.test(n.description) && !rule.marks.some((m) => marks.has(m)))
              ctx.report({
                message: `The description states ${rule.what} ("${n.description.match(rule.says)[0]}") that no mark carries: add ${rule.marks.join(' or ')} (spec/extensions/rules.schema.yaml), or say it without stating a rule.`,
                location: location.child('description'),
              });
        };
        eachNode(ctx, root, ctx.location, {
          // A $ref with a description beside it: the description is the property's own, and so are the marks beside it.
          onRef: (raw, location) => check(raw, new Set(Object.keys(raw)), location),
          descend: (k) => k !== 'examples' && k !== 'example' && !k.startsWith('x-'),
          onNode: (n, location) => {
            // An object's description may speak of its properties: their marks count for it.
            const marks = new Set([
              ...Object.keys(n),
              ...Object.values(n.properties ?? {}).flatMap((p) => (p && typeof p === 'object' ? Object.keys(p) : [])),
            ]);
            check(n, marks, location);
          },
        });
      },
    },
  };
}

export default function contractRules() {
  return {
    id: 'contract',
    rules: {
      oas3: {
        'no-card-data-out': NoCardDataOut,
        'card-amount-format': CardAmountFormat,
        'examples-per-outcome': ExamplesPerOutcome,
        'inferred-has-reason': InferredHasReason,
        'rule-in-prose': RuleInProse,
        'array-items': ArrayItems,
        'discriminator-maps-objects': DiscriminatorMapsObjects,
        'size-for-tools': SizeForTools,
        'examples-paired': ExamplesPaired,
        'wire-format-limits': WireFormatLimits,
      },
    },
  };
}
