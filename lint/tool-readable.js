// Rules that keep the document readable by the tools teams point at it (docs/TOOLS.md), each where
// the choice costs no precision. Specmatic 2.55 is the strictest of them: it refuses an array without
// `items`, cannot follow a discriminator to a mapped union (R3002), warns on a length above 4 MiB
// (OAS0003), and replays only the request examples that have an answer example of the same name.
import { eachNode, operations, resolved } from './walk.js';

const COMPOSITIONS = ['oneOf', 'anyOf'];
const isArraySchema = (n) => n.type === 'array' || (Array.isArray(n.type) && n.type.includes('array'));
const schemaKeys = (k) => k !== 'examples' && k !== 'example' && !k.startsWith('x-');

/** A rule that looks at every schema object of the document once: `check(node, location, ctx)`. */
const everySchema = (check) => ({
  Root: {
    leave(root, ctx) {
      eachNode(ctx, root, ctx.location, {
        descend: schemaKeys,
        onNode: (n, location) => {
          if (!Array.isArray(n)) check(n, location, ctx);
        },
      });
    },
  },
});

/** contract/array-items: every array schema says what its items are (`items: false` for none). */
export function ArrayItems() {
  return everySchema((n, location, ctx) => {
    if (!isArraySchema(n) || 'items' in n || 'prefixItems' in n) return;
    ctx.report({
      message:
        'An array schema says what its items are: `items` (`items: false` for an array that is always empty); tools refuse an array without it.',
      location,
    });
  });
}

/** contract/discriminator-maps-objects: a discriminator maps each value to one object schema, never to a union. */
export function DiscriminatorMapsObjects() {
  return everySchema((n, location, ctx) => {
    if (!n.discriminator?.mapping) return;
    for (const [value, ref] of Object.entries(n.discriminator.mapping)) {
      const target = resolved(ctx, { $ref: ref }, location).node;
      const union = COMPOSITIONS.find((word) => target?.[word]);
      if (union)
        ctx.report({
          message: `The discriminator maps ${value} to a schema that is itself a union (${union}): tools cannot follow it. Leave the discriminator out where a value has several forms; each form's \`const\` tells them apart.`,
          location: location.child('discriminator').child('mapping').child(value),
        });
    }
  });
}

/** contract/size-for-tools: no length or count above what tools generate and check without warning. */
export function SizeForTools(options) {
  const most = options.max ?? 4194304;
  return everySchema((n, location, ctx) => {
    for (const word of ['maxLength', 'maxItems', 'maxProperties'])
      if (typeof n[word] === 'number' && n[word] > most)
        ctx.report({
          message: `${word} ${n[word]} is above ${most}, the most tools generate and check without warning (Specmatic's OAS0003); give the size the gateway really takes, with its reason.`,
          location: location.child(word),
        });
  });
}

/** contract/examples-paired: each operation's first request example has an answer example of the same name. */
export function ExamplesPaired() {
  return {
    Root: {
      leave(root, ctx) {
        for (const { area, key, verb, op, location, bodies } of operations(ctx, root, ctx.location)) {
          if (area === 'webhooks') continue;
          const answers = new Set(bodies.filter((b) => b.side === 'out').flatMap((b) => Object.keys(b.examples ?? {})));
          const descriptors = op['x-methods']
            ? Object.entries(op['x-methods']).map(
                ([m, raw]) => resolved(ctx, raw, location.child('x-methods').child(m)).node,
              )
            : [op['x-operation']];
          const firsts = new Set(descriptors.map((d) => d?.examples?.request?.[0]).filter(Boolean));
          for (const body of bodies.filter((b) => b.side === 'in'))
            for (const name of Object.keys(body.examples ?? {}))
              if (firsts.has(name) && !answers.has(name))
                ctx.report({
                  message: `${verb.toUpperCase()} ${key}: the request example ${name} has no answer example of the same name (tools pair them by name); spec/openapi.yaml's x-example-pairs: by-name has the bundling pair it.`,
                  location: body.examplesLocation.child(name),
                });
          for (const name of firsts)
            if (!bodies.some((b) => b.side === 'in' && b.examples?.[name]))
              ctx.report({
                message: `${verb.toUpperCase()} ${key}: the descriptor's first request example ${name} is not among the request's examples.`,
                location,
              });
        }
      },
    },
  };
}
