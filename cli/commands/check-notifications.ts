#!/usr/bin/env node
// payment-gateway contract --notifications URL: holds a merchant's notification endpoint to what the
// gateway sends. For every webhook of the spec, from its example re-dated to now and about a subject
// of its own (fresh identifiers for each case): a valid delivery must be acknowledged (2xx) within the
// gateway's time-out (x-notification-delivery); one with a wrong signature, a tampered body or (where
// it carries a time) a stale date must be refused (4xx, so never taken as real); a repeat and an older
// delivery after a newer one must be acknowledged, so that the gateway stops sending them. What the
// endpoint did with each cannot be seen from its answers: given --effects URL (the endpoint's own
// record of the notifications it applied, a JSON array), the check also reads whether each valid one
// was applied before it was acknowledged, a repeat not applied again, a refused one never applied, and
// an older one not applied over the newer.
import { readFileSync } from 'node:fs';
import { type CommandSpec, packageFile, startCommand, type CommandOutput, usageMistake } from '../../cli-kit/index.ts';
import {
  deliveryKey,
  fieldAt,
  notificationDelivery,
  parseNotification,
  signTestNotification,
  subjectOf,
  webhooks,
  type Notification,
  type WebhookName,
} from '../../notifications/index.ts';
import { wallTime } from '../../runtime/gateway-time.ts';
import type { BoundedClient } from '../../runtime/bounded-fetch.ts';
import { commandClient, ExchangeFailed, isTimeout, request } from './http-client.ts';

export interface Check {
  webhook: WebhookName;
  name: string;
  /** What the check expects, in words: 2xx, refused (4xx), handled once… */
  expect: string;
  /** What it saw, in words: the status (and the endpoint's own words when it failed), a count. */
  got: string;
  ok: boolean;
}

/** Posts in a row without an answer (none in time, refused, dropped, past the cap) after which no more are sent. */
export const GIVE_UP_AFTER = 3;

export interface CheckOptions {
  passphrase: string;
  partnerPassphrase?: string;
  hashSalt?: string;
  /** How old the replayed delivery is. Default 3600 s. */
  staleSeconds?: number;
  /** The endpoint's record of what it applied: GET answers a JSON array of the notifications, oldest first. */
  effects?: string;
  /** How long one answer may take: the gateway's time-out (x-notification-delivery) by default. */
  timeoutSeconds?: number;
  /** The endpoint's client; its `gaveUp` says afterwards whether the endpoint stopped answering. */
  client?: BoundedClient;
}

/** The checks --effects adds, named for the line that says they were not made. */
export const EFFECT_CHECKS =
  'whether each valid notification is applied before it is acknowledged, a repeat not applied again, a refused one never applied, and an older one not applied over a newer';

const spec = () => JSON.parse(readFileSync(packageFile('openapi.json'), 'utf8'));
/** The most of an endpoint's answer read (its words, for a failure's line); the record of effects may be long. */
const ANSWER_BYTES = 4096;
const EFFECTS_BYTES = 32 << 20;

function setAt(body: Record<string, unknown>, path: string, value: unknown): void {
  const parts = path.split('.');
  let target: any = body;
  for (const part of parts.slice(0, -1)) target = Array.isArray(target) ? target.at(Number(part)) : target[part];
  const last = parts.at(-1)!;
  if (Array.isArray(target)) target[target.length + Number(last)] = value;
  else target[last] = value;
}

/**
 * Each webhook's first example, re-dated `ageSeconds` ago where it carries a time, about a subject no
 * other case shares: the identifiers naming its subject end in `tag` (hex, as long as what it replaces,
 * so that an identifier keeps its form).
 */
function sample(webhook: WebhookName, ageSeconds: number, tag: string): Notification {
  const examples = spec().webhooks[webhook].post.requestBody.content['application/json'].examples;
  const body = structuredClone(Object.values<{ value: Record<string, unknown> }>(examples)[0]!.value);
  delete body.hash;
  const table = webhooks[webhook] as { occurredAt?: { at: string; zone: string }; subject?: readonly string[] };
  // Written in the zone the notification's descriptor gives (x-operation.receive.occurredAt.zone).
  if (table.occurredAt)
    setAt(body, table.occurredAt.at, wallTime(new Date(Date.now() - ageSeconds * 1000), table.occurredAt.zone));
  for (const path of table.subject ?? []) {
    const value = fieldAt(body, path);
    if (typeof value === 'string')
      setAt(
        body,
        path,
        value.replace(/[0-9a-f]{1,8}$/, (hex) => tag.slice(-hex.length).padStart(hex.length, '0')),
      );
  }
  return body as Notification;
}

/** A tag unique to one case of one run: 8 hex digits. */
function tags(): () => string {
  const run = Math.floor(Math.random() * 0x10000);
  let n = 0;
  return () => ((run << 16) | ++n).toString(16).padStart(8, '0').slice(-8);
}

export async function checkNotificationEndpoint(url: string, options: CheckOptions): Promise<Check[]> {
  const checks: Check[] = [];
  const timeoutSeconds = options.timeoutSeconds ?? notificationDelivery.timeoutSeconds;
  const staleSeconds = options.staleSeconds ?? 3600;
  const tag = tags();
  // One client for the endpoint (runtime/bounded-fetch.ts): after GIVE_UP_AFTER posts in a row without
  // an answer, every later one fails at once with the same line, so a silent endpoint costs a few
  // time-outs, not one per check. --effects is another party, with its own.
  const endpoint = options.client ?? commandClient(GIVE_UP_AFTER);
  const effects = commandClient(GIVE_UP_AFTER);
  const post = async (signed: { body: string; headers: Record<string, string> }) => {
    try {
      const answer = await request(
        endpoint,
        url,
        { method: 'POST', headers: signed.headers, body: signed.body },
        { timeoutMs: timeoutSeconds * 1000, maxBytes: ANSWER_BYTES },
      );
      // The endpoint's own words say why it refused (listen shows them the same way).
      return {
        status: answer.status,
        answer: answer.text.replace(/\s+/g, ' ').trim().slice(0, 200),
        late: false,
        unsent: false,
      };
    } catch (error) {
      return {
        status: 0,
        answer: (error as Error).message,
        late: isTimeout(error),
        unsent: error instanceof ExchangeFailed && error.kind === 'given-up',
      };
    }
  };
  /**
   * Why the record of effects is not read again: it answered past its cap once. A record only grows,
   * so every later read would be past it too (32 MiB read and thrown away for each check).
   */
  let pastCap: string | undefined;
  /** What the endpoint says it applied, or why that could not be read. */
  const applied = async (): Promise<Notification[] | string> => {
    if (pastCap) return pastCap;
    try {
      const answer = await request(
        effects,
        options.effects!,
        { method: 'GET' },
        { timeoutMs: timeoutSeconds * 1000, maxBytes: EFFECTS_BYTES },
      );
      if (answer.status !== 200) return `--effects answered ${answer.status}`;
      if (answer.cut) {
        pastCap = `--effects answered more than ${EFFECTS_BYTES} bytes (not read again)`;
        return pastCap;
      }
      const list: unknown = JSON.parse(answer.text);
      if (!Array.isArray(list)) return '--effects answered no JSON array';
      return list.flatMap((item) => {
        try {
          return [parseNotification(JSON.stringify(item))];
        } catch {
          return [];
        }
      });
    } catch (error) {
      return `--effects could not be read: ${(error as Error).message}`;
    }
  };
  const answered = (expect: '2xx' | 'refused', a: { status: number; answer: string }) => {
    const ok = expect === '2xx' ? a.status >= 200 && a.status < 300 : a.status >= 400 && a.status < 500;
    const got = a.status ? `got ${a.status}` : 'got no answer';
    return { expect, ok, got: `${got}${!ok && a.answer ? `: ${a.answer}` : ''}` };
  };
  /** A check of what the endpoint applied: `judge` answers whether it is right, and what was seen. */
  const effect = async (
    webhook: WebhookName,
    name: string,
    expect: string,
    judge: (list: Notification[]) => { ok: boolean; got: string },
  ) => {
    if (!options.effects) return;
    const list = await applied();
    checks.push({ webhook, name, expect, ...(typeof list === 'string' ? { ok: false, got: list } : judge(list)) });
  };
  const times = (list: Notification[], key: string) => list.filter((n) => deliveryKey(n) === key).length;
  const timesWord = (n: number) => (n === 1 ? 'applied once' : `applied ${n} times`);
  const notApplied = (key: string) => (list: Notification[]) => {
    const n = times(list, key);
    return { ok: n === 0, got: n ? timesWord(n) : 'not applied' };
  };

  for (const webhook of Object.keys(webhooks) as WebhookName[]) {
    const passphrase =
      webhooks[webhook].signature.secret === 'partner'
        ? (options.partnerPassphrase ?? options.passphrase)
        : options.passphrase;
    const sign = (n: Notification, p = passphrase) =>
      signTestNotification(n, { passphrase: p, hashSalt: options.hashSalt ?? '' });
    let late = 0;
    let unsent = 0;
    let posts = 0;
    const send = async (signed: { body: string; headers: Record<string, string> }) => {
      const a = await post(signed);
      posts++;
      if (a.late) late++;
      if (a.unsent) unsent++;
      return a;
    };
    const record = (name: string, expect: '2xx' | 'refused', a: { status: number; answer: string }) =>
      checks.push({ webhook, name, ...answered(expect, a) });

    const valid = sample(webhook, 0, tag());
    const fresh = sign(valid);
    const key = deliveryKey(valid);
    record('a valid notification is acknowledged', '2xx', await send(fresh));
    await effect(webhook, 'a valid notification is handled by the time it is acknowledged', 'applied once', (list) => {
      const n = times(list, key);
      return { ok: n === 1, got: n ? timesWord(n) : 'not applied yet (a crash after the answer loses it)' };
    });
    record('the same notification again is acknowledged (a gateway retry)', '2xx', await send(fresh));
    await effect(webhook, 'the same notification again is not handled again', 'applied at most once', (list) => {
      const n = times(list, key);
      return { ok: n <= 1, got: timesWord(n) };
    });

    const forgedBody = sample(webhook, 0, tag());
    const forged = sign(forgedBody, `${passphrase}-not`);
    const forgedName = 'a notification signed with another passphrase';
    record(`${forgedName} is refused`, 'refused', await send(forged));
    await effect(webhook, `${forgedName} is not handled`, 'not applied', notApplied(deliveryKey(forgedBody)));

    const tamperedFrom = sample(webhook, 0, tag());
    const tampered = JSON.parse(sign(tamperedFrom).body);
    const field = Object.keys(tampered).find((k) => !['event', 'hash'].includes(k))!;
    tampered[field] = typeof tampered[field] === 'string' ? `${tampered[field]}0` : { tampered: true };
    const tamperedName = `a notification whose ${field} was changed after signing`;
    record(
      `${tamperedName} is refused`,
      'refused',
      await send({ body: JSON.stringify(tampered), headers: sign(tamperedFrom).headers }),
    );
    await effect(webhook, `${tamperedName} is not handled`, 'not applied', (list) => {
      const n = list.filter(
        (x) => deliveryKey(x) === deliveryKey(tampered as Notification) || deliveryKey(x) === deliveryKey(tamperedFrom),
      ).length;
      return { ok: n === 0, got: n ? timesWord(n) : 'not applied' };
    });

    if ((webhooks[webhook] as { occurredAt?: unknown }).occurredAt) {
      const staleBody = sample(webhook, staleSeconds, tag());
      const staleName = `a notification dated ${staleSeconds} s ago (a replay)`;
      record(`${staleName} is refused`, 'refused', await send(sign(staleBody)));
      await effect(webhook, `${staleName} is not handled`, 'not applied', notApplied(deliveryKey(staleBody)));
    }

    // Out of order: where a webhook reports a state (kinds), a newer state first, then an older one.
    const kinds = (webhooks[webhook] as { kinds?: { by: string; names: Record<string, string> } }).kinds;
    if (kinds) {
      const subject = tag();
      const original = sample(webhook, 0, subject);
      const [older, newer] = Object.keys(kinds.names).filter((v) => v !== String(fieldAt(original, kinds.by)));
      const later = sample(webhook, 0, subject);
      setAt(later as Record<string, unknown>, kinds.by, newer);
      const earlier = sample(webhook, 60, subject);
      setAt(earlier as Record<string, unknown>, kinds.by, older);
      await send(sign(later));
      const name = `a ${older} notification dated before the ${newer} one it follows`;
      record(`${name} is acknowledged (out of order)`, '2xx', await send(sign(earlier)));
      await effect(webhook, `${name} does not replace it`, `the ${newer} one stays the last applied`, (list) => {
        const last = list.filter((n) => subjectOf(n) === subjectOf(later)).at(-1);
        const lastState = last && String(fieldAt(last, kinds.by));
        return {
          ok: lastState === undefined || deliveryKey(last!) === deliveryKey(later),
          got: lastState === undefined ? 'neither applied yet' : `the ${lastState} one is the last applied`,
        };
      });
    }
    checks.push({
      webhook,
      name: `every answer comes within the gateway's time-out (${timeoutSeconds} s)`,
      expect: `${posts} within ${timeoutSeconds} s`,
      got:
        late || unsent
          ? [
              late &&
                `${late} of ${posts} not answered within ${timeoutSeconds} s (each counts as failed and is sent again)`,
              unsent && `${unsent} of ${posts} not sent (the endpoint had stopped answering)`,
            ]
              .filter(Boolean)
              .join('; ')
          : `${posts} in time`,
      ok: late === 0 && unsent === 0,
    });
  }
  return checks;
}

/** `payment-gateway contract --notifications URL`: its options (`payment-gateway contract --help` lists them too). */
export const COMMAND: CommandSpec = {
  name: 'payment-gateway contract',
  usage: '--notifications URL [options]',
  summary: `Sends the endpoint at URL the notifications of the spec, valid and not, each about a subject of its
own: each valid one must be acknowledged (2xx) within the gateway's time-out, a repeat and an
out-of-order one too; a wrong signature, a tampered body and a stale date must be refused (4xx).
With --effects, what the endpoint applied is checked too: ${EFFECT_CHECKS}.
Exit code 0 when every check passes, 1 otherwise.`,
  positionals: true,
  options: {
    notifications: { type: 'string', value: 'URL', help: 'the endpoint to check' },
    passphrase: {
      type: 'string',
      value: 'TEXT',
      help: "the merchant's passphrase the endpoint verifies with (required)",
    },
    'partner-passphrase': {
      type: 'string',
      value: 'TEXT',
      default: "the merchant's",
      help: "the partner's, for merchantCreated",
    },
    'hash-salt': {
      type: 'string',
      value: 'TEXT',
      default: "''",
      help: 'the hashSalt the endpoint expects in directDebitOutcome',
    },
    'stale-seconds': { type: 'string', value: 'N', default: '3600', help: 'how old the replayed notification is' },
    effects: {
      type: 'string',
      value: 'URL',
      help: "the endpoint's record of what it applied (a test-only route): GET answers a JSON array of the notifications, oldest first",
    },
    'timeout-seconds': {
      type: 'string',
      value: 'S',
      default: String(notificationDelivery.timeoutSeconds),
      help: "how long an answer may take (the gateway's time-out)",
    },
  },
};

/** One check as printed: a failure says what the endpoint answered, so its reason shows. */
export function checkLine(c: Check): string {
  return `${c.ok ? 'pass' : 'FAIL'}  ${c.webhook}: ${c.name} (expected ${c.expect}, ${c.got})`;
}

export async function run(argv: string[], options: CommandOutput = {}): Promise<number> {
  const { print, printError, parsed } = startCommand(COMMAND, argv, options);
  if (typeof parsed === 'number') return parsed;
  const { positionals } = parsed;
  const values = parsed.values as Record<string, string | undefined>;
  const url = values.notifications ?? positionals[0];
  if (!url || !/^https?:\/\//.test(url) || !values.passphrase)
    return usageMistake(
      COMMAND,
      '--notifications needs an http(s) URL and --passphrase the passphrase it verifies with',
      printError,
    );
  if (values.effects !== undefined && !/^https?:\/\//.test(values.effects))
    return usageMistake(COMMAND, '--effects needs an http(s) URL, e.g. http://localhost:3000/test/effects', printError);
  for (const option of ['stale-seconds', 'timeout-seconds'] as const) {
    const value = values[option];
    if (value !== undefined && !/^[1-9]\d{0,5}$/.test(value))
      return usageMistake(
        COMMAND,
        `--${option} must be a whole number of seconds from 1 to 999999, not '${value}'`,
        printError,
      );
  }
  const client = commandClient(GIVE_UP_AFTER);
  const checks = await checkNotificationEndpoint(url, {
    client,
    passphrase: values.passphrase,
    ...(values['partner-passphrase'] ? { partnerPassphrase: values['partner-passphrase'] } : {}),
    ...(values['hash-salt'] !== undefined ? { hashSalt: values['hash-salt'] } : {}),
    ...(values['stale-seconds'] ? { staleSeconds: Number(values['stale-seconds']) } : {}),
    ...(values['timeout-seconds'] ? { timeoutSeconds: Number(values['timeout-seconds']) } : {}),
    ...(values.effects ? { effects: values.effects } : {}),
  });
  for (const c of checks) print(checkLine(c));
  const failed = checks.filter((c) => !c.ok).length;
  if (!values.effects) print(`not checked without --effects URL: ${EFFECT_CHECKS}`);
  print(`${checks.length - failed} passed, ${failed} failed`);
  if (client.gaveUp) printError(`${COMMAND.name}: the endpoint stopped answering: ${client.gaveUp}`);
  return failed ? 1 : 0;
}

if (import.meta.main) process.exitCode = await run(process.argv.slice(2));
