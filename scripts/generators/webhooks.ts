// The webhook table: each notification the gateway posts, with how it is signed and what a receiver
// checks beyond the signature (x-operation.hashes and x-operation.receive), for notifications/index.ts.
import { resolvePointer, schemaName, type Doc, type Operation } from '../lib/contract.ts';
import { tsHeader } from './banner.ts';

export function webhooksModule(doc: Doc, ops: Operation[]): string {
  const hooks = ops.filter((op) => op.webhook);
  const delivery = doc['x-notification-delivery'];
  if (!delivery) throw new Error('The document lacks x-notification-delivery (how notifications are retried)');
  const table = Object.fromEntries(
    hooks.map((op) => {
      const hash = op.hashes?.[0];
      if (!hash) throw new Error(`Webhook ${op.path} declares no signature (x-operation.hashes)`);
      if (!op.receive) throw new Error(`Webhook ${op.path} lacks x-operation.receive`);
      return [
        op.path,
        {
          operationId: op.operationId,
          schema: schemaName(op.request!),
          /** The body's required fields (its schema's `required`), which a parser checks. */
          required: resolvePointer(doc, op.request!).required ?? [],
          signature: { in: hash.in ?? 'body', name: hash.name, recipe: hash.recipe, secret: hash.secret ?? 'merchant' },
          ...(op.receive.occurredAt ? { occurredAt: op.receive.occurredAt } : {}),
          key: op.receive.key,
          ...(op.receive.kinds ? { kinds: op.receive.kinds } : {}),
          ...(op.receive.subject ? { subject: op.receive.subject } : {}),
          /** The fields a triggered notification may be given (x-operation.trigger.set). */
          settable: op.trigger?.set ?? [],
        },
      ];
    }),
  );
  const kinds = hooks.flatMap((op) =>
    Object.values(op.receive?.kinds?.names ?? {}).map((kind) => [kind, op.path] as const),
  );
  return [
    tsHeader(
      'The webhook table: how each notification is signed and what its receiver checks (x-operation.hashes, x-operation.receive).',
    ).trimEnd(),
    "import type { components } from './types.ts';",
    '',
    `export const webhooks = ${JSON.stringify(table, null, 2)} as const;`,
    '',
    'export type WebhookName = keyof typeof webhooks;',
    '',
    "/** Each notification's body, by webhook name. */",
    'export interface NotificationBodies {',
    ...hooks.map((op) => `  ${op.path}: components['schemas'][${JSON.stringify(schemaName(op.request!))}];`),
    '}',
    '',
    "/** Finer names for one webhook by a field's value (x-operation.receive.kinds), and the webhook each refines. */",
    `export const notificationKinds = ${JSON.stringify(Object.fromEntries(kinds), null, 2)} as const;`,
    '',
    'export type NotificationKind = keyof typeof notificationKinds;',
    '',
    '/** How the gateway delivers a notification (x-notification-delivery): the time-out of one post, the waits before each retry. */',
    `export const notificationDelivery = ${JSON.stringify({ timeoutSeconds: delivery.timeoutSeconds, retryAfterMinutes: delivery.retryAfterMinutes })} as const;`,
    '',
  ].join('\n');
}
