// How the sandbox POSTs a notification: to the address the URL policy checked, never to whatever a
// second lookup of the name answers (DNS rebinding), and without following a redirect (whose target
// the policy never saw): a 3xx is an answer like any other non-2xx, and the delivery is retried.
import { isIP, type LookupFunction } from 'node:net';
import { http, https } from '../runtime/node-http.ts';

export interface SendInit {
  method: 'POST';
  headers: Record<string, string>;
  body: string;
  signal: AbortSignal;
  redirect: 'manual';
}

/** Posts a notification to url, connecting to address (checked by the policy); answers the status. */
export type Send = (url: string, init: SendInit, address: string) => Promise<{ status: number }>;

/** The sandbox's own sender: node:http(s), the connection pinned to the checked address. */
export const pinnedSend: Send = (url, init, address) =>
  new Promise((resolve, reject) => {
    const target = new URL(url);
    const family = isIP(address) === 6 ? 6 : 4;
    const pinned: LookupFunction = (_host, options, callback) =>
      options.all
        ? (callback as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [
            { address, family },
          ])
        : callback(null, address, family);
    const request = (target.protocol === 'https:' ? https() : http).request(target, {
      method: init.method,
      headers: init.headers,
      signal: init.signal,
      lookup: pinned,
      ...(target.protocol === 'https:' ? { servername: target.hostname.replace(/^\[|\]$/g, '') } : {}),
    });
    request.on('response', (response) => {
      response.resume(); // the body is not read: the status is the answer
      resolve({ status: response.statusCode ?? 0 });
    });
    request.on('error', reject);
    request.end(init.body);
  });
