// A merchant's notification receiver, written right and written in each of the ways receivers go
// wrong in production. Each applies a notification by recording it (`applied`, served as JSON at
// /effects: what `contract --notifications --effects URL` reads), answers 2xx to acknowledge and 4xx
// to refuse. The broken ones are plausible code, each with one mistake:
//   acceptsBadSignature     logs a signature that does not match, and goes on
//   handlesDuplicateTwice   no duplicate check: a retry or a resend is applied again
//   breaksOnReordering      applies every notification as the newest state, in the order they arrive
//   acceptsStale            no replay window: a delivery dated an hour ago is applied
//   answersBeforeVerifying  answers 200 at once and verifies and applies later, from a queue
//   slow                    right, but answers after `slowMs` (a synchronous call to a slow system)
import http from 'node:http';
import {
  NotificationDispatcher,
  NotificationError,
  parseNotification,
  type DuplicateCheck,
  type Notification,
  type VerifyOptions,
} from '../../notifications/index.ts';
import { onLoopback } from '../support/loopback.ts';

export const RECEIVER_KINDS = [
  'correct',
  'acceptsBadSignature',
  'handlesDuplicateTwice',
  'breaksOnReordering',
  'acceptsStale',
  'answersBeforeVerifying',
  'slow',
] as const;
export type ReceiverKind = (typeof RECEIVER_KINDS)[number];

/** Each receiver's mistake, in words. */
export const MISTAKES: Record<ReceiverKind, string> = {
  correct: 'none',
  acceptsBadSignature: 'accepts a bad signature',
  handlesDuplicateTwice: 'handles a duplicate twice',
  breaksOnReordering: 'breaks on reordering',
  acceptsStale: 'accepts a stale delivery',
  answersBeforeVerifying: 'answers 200 before verifying',
  slow: 'is slow',
};

export interface ReceiverOptions extends VerifyOptions {
  /** How long the slow receiver takes to answer. */
  slowMs?: number;
  /** Where the correct receiver remembers delivery keys (default in memory). */
  duplicates?: DuplicateCheck;
  /** The first this many posts are answered 503 unread: a receiver restarting (the sender must send them again). */
  outage?: number;
}

export interface Receiver {
  /** Where notifications are posted. */
  url: string;
  /** GET: the notifications applied, oldest first, as JSON. */
  effects: string;
  applied: Notification[];
  /** Every answer it gave: the status and what it said. */
  answers: { status: number; said: string }[];
  close(): Promise<void>;
}

const never: DuplicateCheck = { firstTime: () => true };

export async function startReceiver(kind: ReceiverKind, options: ReceiverOptions): Promise<Receiver> {
  const applied: Notification[] = [];
  const answers: Receiver['answers'] = [];
  let outage = options.outage ?? 0;
  const dispatcher = new NotificationDispatcher({
    ...options,
    ...(kind === 'acceptsStale' ? { toleranceSeconds: Number.POSITIVE_INFINITY } : {}),
    ...(kind === 'handlesDuplicateTwice' ? { duplicates: never } : {}),
    ...(kind === 'breaksOnReordering' ? { order: false as const } : {}),
  });
  for (const event of ['merchantCreated', 'directDebitOutcome', 'payoutTransaction', 'batchNotify'] as const)
    dispatcher.on(event, (n) => void applied.push(n));

  /** What the receiver does with one delivery: the status it answers and why. */
  const handle = async (raw: Buffer, headers: Record<string, string>): Promise<[number, string]> => {
    if (kind === 'acceptsBadSignature') {
      // The mistake: a signature that does not match is logged, not refused ("we will enforce it later").
      const signed = await dispatcher.handle(raw, headers);
      if (signed.status !== 'refused' || signed.error.reason !== 'badSignature')
        return signed.status === 'refused' ? [400, `refused: ${signed.error.message}`] : [200, signed.status];
      const notification = parseNotification(raw);
      applied.push(notification);
      return [200, 'handled (signature mismatch logged)'];
    }
    const outcome = await dispatcher.handle(raw, headers);
    return outcome.status === 'refused' ? [400, `refused: ${outcome.error.message}`] : [200, outcome.status];
  };

  // answersBeforeVerifying's queue, worked once a second.
  const queue: [Buffer, Record<string, string>][] = [];
  const worker =
    kind === 'answersBeforeVerifying'
      ? setInterval(() => {
          for (const [raw, headers] of queue.splice(0)) void handle(raw, headers).catch(() => {});
        }, 1000)
      : undefined;

  const server = http.createServer(async (req, res) => {
    if (req.method === 'GET' && req.url === '/effects')
      return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(applied));
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks);
    const headers = req.headers as Record<string, string>;
    let status: number;
    let said: string;
    if (outage > 0) {
      outage--;
      [status, said] = [503, 'restarting'];
    } else if (kind === 'answersBeforeVerifying') {
      // The mistake: acknowledged before anything is checked or kept; a crash loses what is queued.
      queue.push([raw, headers]);
      [status, said] = [200, 'queued'];
    } else {
      try {
        [status, said] = await handle(raw, headers);
      } catch (error) {
        [status, said] = error instanceof NotificationError ? [400, error.message] : [500, 'failed'];
      }
      if (kind === 'slow') await new Promise((r) => setTimeout(r, options.slowMs ?? 3000));
    }
    answers.push({ status, said });
    if (!res.destroyed) res.writeHead(status, { 'content-type': 'text/plain' }).end(said);
  });
  const { base, close } = await onLoopback(server);
  return {
    url: `${base}/hooks`,
    effects: `${base}/effects`,
    applied,
    answers,
    close: async () => {
      clearInterval(worker);
      server.closeAllConnections();
      await close();
    },
  };
}
