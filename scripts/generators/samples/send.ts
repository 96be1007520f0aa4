// A sample's plan sent for real: its steps first (the records its example names, which a fresh
// sandbox does not hold), each value a request takes set from its step's answer, every request
// signed by the one signer (runtime/signing.ts) for the sandbox's account. The docs samples' test
// holds the samples to these answers; the Specmatic runner (scripts/tools/specmatic.ts) makes the
// records with it and hands Specmatic the filled request.
import { computeHash, messageHash } from '../../../runtime/signing.ts';
import type { Body, RequestPlan, SamplePlan } from './plan.ts';

/** A request as it goes on the wire: its path with the query, its headers and its body, all signed. */
export interface SignedPlanRequest {
  verb: string;
  path: string;
  headers: Record<string, string>;
  body: Body | undefined;
}

/**
 * The plan's request signed with the passphrase: each body hash by its recipe, in order (a later one
 * sees an earlier one), then the header hash over the path parameters, the query and the body.
 */
export function signPlan(plan: RequestPlan, passphrase: string, query: Record<string, string> = {}): SignedPlanRequest {
  const body = plan.body ? structuredClone(plan.body) : undefined;
  const headers: Record<string, string> = Object.fromEntries(plan.headers.map((h) => [h.name, h.value]));
  for (const h of plan.hashes.filter((h) => h.in === 'body'))
    body![h.name] = computeHash(h.definition, passphrase, body!);
  for (const h of plan.hashes.filter((h) => h.in === 'header'))
    headers[h.name] = messageHash(h.definition, passphrase, { params: plan.params, query, body });
  if (body) headers['Content-Type'] = plan.contentType;
  const search = new URLSearchParams(query).toString();
  return { verb: plan.verb, path: search ? `${plan.path}?${search}` : plan.path, headers, body };
}

/** The plan's request signed and sent; its answer's bytes (a zip passes through unchanged). */
export async function sendPlan(plan: RequestPlan, base: string, passphrase: string): Promise<Buffer> {
  const request = signPlan(plan, passphrase);
  const answer = await fetch(base + request.path, {
    method: request.verb,
    headers: request.headers,
    body: request.body ? JSON.stringify(request.body) : null,
  });
  return Buffer.from(await answer.arrayBuffer());
}

/**
 * The plan's steps sent in order, then the plan's own request with the values it takes from them
 * (not sent: the caller sends it, or hands it to a tool).
 */
export async function afterSteps(plan: SamplePlan, base: string, passphrase: string): Promise<RequestPlan> {
  const answers: unknown[] = [];
  const sent: RequestPlan[] = [];
  const filled = (request: RequestPlan): RequestPlan => {
    const copy = structuredClone(request);
    for (const take of request.takes) {
      const from = take.source === 'answer' ? answers[take.step] : sent[take.step]!.body;
      const value = take.from.reduce<any>((at, key) => at?.[key], from);
      if (take.into === 'body') copy.body![take.name] = value;
      else copy.params[take.name] = value;
    }
    copy.path = request.template.replace(/\{(\w+)\}/g, (_, n: string) => encodeURIComponent(copy.params[n]!));
    return copy;
  };
  for (const step of plan.steps) {
    sent.push(filled(step));
    answers.push(JSON.parse((await sendPlan(sent.at(-1)!, base, passphrase)).toString('utf8')));
  }
  return filled(plan);
}

/**
 * The operations whose example's success no sequence of requests gives on a fresh sandbox, with the
 * answer they get instead and why: the sandbox's clock or a notification has to move first.
 */
export const UNREACHABLE: Record<string, { answer: string; why: string }> = {
  queryDD: {
    answer: 'declined (10)',
    why: "a direct debit is pending (10) until its settlement date: the sandbox's clock has to be moved (its control API) to get the example's approved (0)",
  },
  getPayoutTransactionNotify: {
    answer: 'refused -2',
    why: 'it answers the last notification sent for the payout transaction, and a fresh payout has sent none (resendPayoutNotifications or a status change sends one; no value of the example names that step)',
  },
};
