// contract/wire-format-limits: every request and answer the wire formats carry (x-wire-formats: the
// spec's own on every path, the form/XML mode on its paths) held to what each format's protocol
// module declares it cannot carry (runtime/protocols/<id>.ts, `limits`), reported at the property in
// its own file (the method's file for a shared path's method) with the fix. The same limits stop the
// bundle (scripts/generators/wire-formats.ts).
import { createRequire } from 'node:module';
import { limitProblems } from '../runtime/protocols/limits.ts';
import { operations, resolved } from './walk.js';

const require = createRequire(import.meta.url);

/** A protocol module's declared limits, by its id in x-wire-formats. */
const limitsOf = (id) => require(`../runtime/protocols/${id}.ts`).limits;

export function WireFormatLimits() {
  return {
    Root: {
      leave(root, ctx) {
        const formats = Object.entries(root['x-wire-formats'] ?? {});
        if (!formats.length) return;
        // The bodies the formats write and read are the spec's own: its first format's media type.
        const own = formats[0][1].paths === undefined ? formats[0][1].request : undefined;
        const walker = {
          resolve: (node, at) => {
            const here = resolved(ctx, node, at);
            return { node: here.node, at: here.location };
          },
          child: (at, key) => at.child(key),
          key: (at) => `${at.source.absoluteRef}#${at.pointer}`,
        };
        const reported = new Set();
        for (const { area, key, bodies } of operations(ctx, root, ctx.location)) {
          if (area !== 'paths') continue;
          const served = formats.filter(([, f]) => f.paths === undefined || f.paths.includes(key));
          for (const body of bodies) {
            const media = body.location.pointer.split('/').at(-2)?.replace(/~1/g, '/');
            if (own !== undefined && media !== own) continue;
            const side = body.side === 'in' ? 'request' : 'answer';
            for (const [id] of served) {
              for (const problem of limitProblems(limitsOf(id), side, body.schema, body.location, walker)) {
                const where = `${walker.key(problem.at)} ${problem.limit}`;
                if (reported.has(where)) continue;
                reported.add(where);
                ctx.report({
                  message: `contract/wire-format-limits: the ${id} wire format (runtime/protocols/${id}.ts) cannot carry this ${side} field: ${problem.message}. Fix: ${problem.fix}.`,
                  location: problem.at,
                });
              }
            }
          }
        }
      },
    },
  };
}
