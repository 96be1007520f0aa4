// Walking the hand-written spec from inside a Redocly rule: the rules here need to know which side
// of the wire a schema is on and which path it belongs to, which Redocly's per-node visitors do not
// say once a shared component is reached through a $ref. So each rule starts at the root and walks
// on its own, resolving every $ref with the rule context's resolver (across files), and reports at
// the node's own location in its own file.

/** @typedef {{ source: { absoluteRef: string }, pointer: string, child(key: string | number): Location }} Location */

/**
 * The node a value stands for, with its location: a $ref resolved (repeatedly), else the value.
 * @param {any} ctx @param {any} node @param {Location} location
 * @returns {{ node: any, location: Location }}
 */
export function resolved(ctx, node, location) {
  let current = { node, location };
  for (let i = 0; current.node && typeof current.node.$ref === 'string' && i < 20; i++) {
    const next = ctx.resolve(current.node, current.location.source.absoluteRef);
    if (!next.node) return { node: undefined, location: current.location };
    current = { node: next.node, location: next.location };
  }
  return current;
}

/**
 * Calls onNode(node, location) for every object and array of the document below root, each once (by
 * file and pointer), $refs resolved; onRef(raw, location) first for a $ref object itself (what stands
 * beside the $ref is the referring node's own). Keys for which descend(key) is false are not entered.
 * @param {any} ctx @param {any} root @param {Location} rootLocation
 * @param {{ onNode: (node: any, location: Location) => void, onRef?: (raw: any, location: Location) => void, descend: (key: string) => boolean }} how
 */
export function eachNode(ctx, root, rootLocation, { onNode, onRef, descend }) {
  const seen = new Set();
  const visit = (node, location) => {
    if (onRef && node && typeof node === 'object' && typeof node.$ref === 'string') onRef(node, location);
    const here = resolved(ctx, node, location);
    if (!here.node || typeof here.node !== 'object') return;
    const id = `${here.location.source.absoluteRef}#${here.location.pointer}`;
    if (seen.has(id)) return;
    seen.add(id);
    onNode(here.node, here.location);
    if (Array.isArray(here.node)) for (const [i, v] of here.node.entries()) visit(v, here.location.child(i));
    else for (const [k, v] of Object.entries(here.node)) if (descend(k)) visit(v, here.location.child(k));
  };
  visit(root, rootLocation);
}

const COMPOSITIONS = ['allOf', 'oneOf', 'anyOf'];
const SUBSCHEMAS = ['items', 'additionalProperties', 'not', 'if', 'then', 'else', 'contains', 'prefixItems'];

/**
 * Calls visit(name, propertySchema, propertyLocation, parentSchema) for every property of a schema
 * and of every schema inside it, each schema once (by file and pointer).
 * @param {any} ctx @param {any} schema @param {Location} location
 * @param {(name: string, node: any, location: Location, raw: any) => void} visit
 * @param {Set<string>} [seen]
 */
export function eachProperty(ctx, schema, location, visit, seen = new Set()) {
  const here = resolved(ctx, schema, location);
  if (!here.node || typeof here.node !== 'object') return;
  const key = `${here.location.source.absoluteRef}#${here.location.pointer}`;
  if (seen.has(key)) return;
  seen.add(key);
  const node = here.node;
  for (const [name, property] of Object.entries(node.properties ?? {})) {
    const target = resolved(ctx, property, here.location.child('properties').child(name));
    visit(name, target.node, here.location.child('properties').child(name), property);
    eachProperty(ctx, property, here.location.child('properties').child(name), visit, seen);
  }
  for (const word of COMPOSITIONS) {
    for (const [i, sub] of (node[word] ?? []).entries())
      eachProperty(ctx, sub, here.location.child(word).child(i), visit, seen);
  }
  for (const word of SUBSCHEMAS) {
    const sub = node[word];
    if (Array.isArray(sub))
      for (const [i, s] of sub.entries()) eachProperty(ctx, s, here.location.child(word).child(i), visit, seen);
    else if (sub && typeof sub === 'object') eachProperty(ctx, sub, here.location.child(word), visit, seen);
  }
}

const VERBS = ['get', 'put', 'post', 'delete', 'patch'];

/**
 * Every operation of the document, resolved: paths and webhooks, with what it sends and answers.
 * `out` is what the gateway writes (responses; a webhook's request body), `in` what it reads.
 * @param {any} ctx @param {any} root @param {Location} rootLocation
 */
export function* operations(ctx, root, rootLocation) {
  for (const area of ['paths', 'webhooks']) {
    for (const [key, rawItem] of Object.entries(root[area] ?? {})) {
      const item = resolved(ctx, rawItem, rootLocation.child(area).child(key));
      if (!item.node) continue;
      for (const verb of VERBS) {
        const op = item.node[verb];
        if (!op) continue;
        const location = item.location.child(verb);
        const bodies = [];
        const requestBody = op.requestBody ? resolved(ctx, op.requestBody, location.child('requestBody')) : undefined;
        for (const [media, content] of Object.entries(requestBody?.node?.content ?? {})) {
          if (content.schema)
            bodies.push({
              side: area === 'webhooks' ? 'out' : 'in',
              schema: content.schema,
              location: requestBody.location.child('content').child(media).child('schema'),
              examples: content.examples,
              examplesLocation: requestBody.location.child('content').child(media).child('examples'),
            });
        }
        for (const [code, rawResponse] of Object.entries(op.responses ?? {})) {
          const response = resolved(ctx, rawResponse, location.child('responses').child(code));
          for (const [media, content] of Object.entries(response.node?.content ?? {})) {
            if (content.schema)
              bodies.push({
                side: area === 'webhooks' ? 'in' : 'out',
                schema: content.schema,
                location: response.location.child('content').child(media).child('schema'),
                examples: content.examples,
                examplesLocation: response.location.child('content').child(media).child('examples'),
              });
          }
        }
        yield { area, key, verb, op, location, bodies };
      }
    }
  }
}
