#!/usr/bin/env node
// payment-gateway contract --notifications URL (to be wired by the CLI): holds a merchant's
// notification endpoint to what the gateway sends. For every webhook of the spec, from its example
// re-dated to now: a valid delivery must be acknowledged (2xx); one with a wrong signature, a tampered
// body or (where it carries a time) a stale date must be refused (not 2xx, so never taken as real);
// a repeat and an older delivery after a newer one must be acknowledged, so that the gateway stops
// retrying. Whether a repeat is handled once cannot be seen from outside: the endpoint's own tests
// (NotificationDispatcher, a DuplicateCheck) must show that.
import { readFileSync } from 'node:fs';
import { type CommandSpec, packageFile, startCommand, type CommandOutput, usageMistake } from '../../cli-kit/index.ts';
import {
  fieldAt,
  signTestNotification,
  webhooks,
  type Notification,
  type WebhookName,
} from '../../notifications/index.ts';
import { wallTime } from '../../runtime/gateway-time.ts';

export interface Check {
  webhook: WebhookName;
  name: string;
  expect: '2xx' | 'refused';
  status: number;
  /** What the endpoint answered (its body, on one line, cut at 200 characters), or why nothing came. */
  answer: string;
  ok: boolean;
}

const spec = () => JSON.parse(readFileSync(packageFile('openapi.json'), 'utf8'));

function setAt(body: Record<string, unknown>, path: string, value: unknown): void {
  const parts = path.split('.');
  let target: any = body;
  for (const part of parts.slice(0, -1)) target = Array.isArray(target) ? target.at(Number(part)) : target[part];
  const last = parts.at(-1)!;
  if (Array.isArray(target)) target[target.length + Number(last)] = value;
  else target[last] = value;
}

/** Each webhook's first example, re-dated `ageSeconds` ago where the notification carries a time. */
function sample(webhook: WebhookName, ageSeconds: number): Notification {
  const examples = spec().webhooks[webhook].post.requestBody.content['application/json'].examples;
  const body = structuredClone(Object.values<{ value: Record<string, unknown> }>(examples)[0]!.value);
  delete body.hash;
  const at = (webhooks[webhook] as { occurredAt?: { at: string; zone: string } }).occurredAt;
  // Written in the zone the notification's descriptor gives (x-operation.receive.occurredAt.zone).
  if (at) setAt(body, at.at, wallTime(new Date(Date.now() - ageSeconds * 1000), at.zone));
  return body as Notification;
}

export async function checkNotificationEndpoint(
  url: string,
  options: { passphrase: string; partnerPassphrase?: string; hashSalt?: string; staleSeconds?: number },
): Promise<Check[]> {
  const checks: Check[] = [];
  const post = async (body: string, headers: Record<string, string>) => {
    try {
      const response = await fetch(url, { method: 'POST', headers, body, signal: AbortSignal.timeout(10_000) });
      // The endpoint's own words say why it refused (listen shows them the same way).
      return { status: response.status, answer: (await response.text()).replace(/\s+/g, ' ').trim().slice(0, 200) };
    } catch (error) {
      return { status: 0, answer: (error as Error).message };
    }
  };
  const record = (
    webhook: WebhookName,
    name: string,
    expect: Check['expect'],
    { status, answer }: { status: number; answer: string },
  ) =>
    checks.push({
      webhook,
      name,
      expect,
      status,
      answer,
      ok: expect === '2xx' ? status >= 200 && status < 300 : status >= 400 && status < 500,
    });
  for (const webhook of Object.keys(webhooks) as WebhookName[]) {
    const passphrase =
      webhooks[webhook].signature.secret === 'partner'
        ? (options.partnerPassphrase ?? options.passphrase)
        : options.passphrase;
    const sign = (n: Notification, p = passphrase) =>
      signTestNotification(n, { passphrase: p, hashSalt: options.hashSalt ?? '' });
    const fresh = sign(sample(webhook, 0));
    record(webhook, 'a valid notification is acknowledged', '2xx', await post(fresh.body, fresh.headers));
    record(
      webhook,
      'the same notification again is acknowledged (a gateway retry)',
      '2xx',
      await post(fresh.body, fresh.headers),
    );
    const forged = sign(sample(webhook, 0), `${passphrase}-not`);
    record(
      webhook,
      'a notification signed with another passphrase is refused',
      'refused',
      await post(forged.body, forged.headers),
    );
    const tampered = JSON.parse(fresh.body);
    const field = Object.keys(tampered).find((k) => !['event', 'hash'].includes(k))!;
    tampered[field] = typeof tampered[field] === 'string' ? `${tampered[field]}0` : { tampered: true };
    record(
      webhook,
      `a notification whose ${field} was changed after signing is refused`,
      'refused',
      await post(JSON.stringify(tampered), fresh.headers),
    );
    if ((webhooks[webhook] as { occurredAt?: unknown }).occurredAt) {
      const stale = sign(sample(webhook, options.staleSeconds ?? 3600));
      record(
        webhook,
        `a notification dated ${options.staleSeconds ?? 3600} s ago (a replay) is refused`,
        'refused',
        await post(stale.body, stale.headers),
      );
    }
    // Out of order: where a webhook reports a state (kinds), a newer state first, then an older one.
    const kinds = (webhooks[webhook] as { kinds?: { by: string; names: Record<string, string> } }).kinds;
    if (kinds) {
      const original = sample(webhook, 0);
      const [older, newer] = Object.keys(kinds.names).filter((v) => v !== String(fieldAt(original, kinds.by)));
      const later = sample(webhook, 0);
      setAt(later as Record<string, unknown>, kinds.by, newer);
      const earlier = sample(webhook, 60);
      setAt(earlier as Record<string, unknown>, kinds.by, older);
      const first = sign(later);
      const second = sign(earlier);
      await post(first.body, first.headers);
      record(
        webhook,
        `a ${older} notification dated before the ${newer} one it follows is acknowledged (out of order)`,
        '2xx',
        await post(second.body, second.headers),
      );
    }
  }
  return checks;
}

/** `payment-gateway contract --notifications URL`: its options (`payment-gateway contract --help` lists them too). */
export const COMMAND: CommandSpec = {
  name: 'payment-gateway contract',
  usage: '--notifications URL [options]',
  summary: `Sends the endpoint at URL the notifications of the spec, valid and not: each valid one must be
acknowledged (2xx), a repeat and an out-of-order one too; a wrong signature, a tampered body and a
stale date must be refused (4xx). Exit code 0 when every check passes, 1 otherwise.`,
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
  },
};

/** One check as printed: a failure says what the endpoint answered, so its reason shows. */
export function checkLine(c: Check): string {
  const got = c.status ? `got ${c.status}` : 'got no answer';
  const why = !c.ok && c.answer ? `: ${c.answer}` : '';
  return `${c.ok ? 'pass' : 'FAIL'}  ${c.webhook}: ${c.name} (expected ${c.expect}, ${got}${why})`;
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
  const checks = await checkNotificationEndpoint(url, {
    passphrase: values.passphrase,
    ...(values['partner-passphrase'] ? { partnerPassphrase: values['partner-passphrase'] } : {}),
    ...(values['hash-salt'] !== undefined ? { hashSalt: values['hash-salt'] } : {}),
    ...(values['stale-seconds'] ? { staleSeconds: Number(values['stale-seconds']) } : {}),
  });
  for (const c of checks) print(checkLine(c));
  const failed = checks.filter((c) => !c.ok).length;
  print(`${checks.length - failed} passed, ${failed} failed`);
  return failed ? 1 : 0;
}

if (import.meta.main) process.exitCode = await run(process.argv.slice(2));
