// A typed client of the sandbox control API, on openapi-fetch and the types generated from
// sandbox/control.openapi.yaml. Runs in browsers and Node (no node: imports).
import createClient from 'openapi-fetch';
import type { components, paths } from '../generated/sandbox-control.ts';

export type ControlSchemas = components['schemas'];
export type Delivery = ControlSchemas['Delivery'];

export interface ControlClientOptions {
  /** The sandbox's base URL (http://localhost:4010); the client adds /_sandbox. */
  baseUrl: string;
  /** merchantUUID or partnerUUID. */
  accountId: string;
  apiKey: string;
  fetch?: (request: Request) => Promise<Response>;
}

/** A control call refused (negative responseCode) or answered out of its contract. */
export class ControlError extends Error {
  override readonly name = 'ControlError';
  readonly responseCode: number | undefined;
  constructor(message: string, responseCode?: number) {
    super(message);
    this.responseCode = responseCode;
  }
}

type Answer = { responseCode: number; responseMessage?: string };

/** The data of an answer, or a ControlError for a refusal or an HTTP error. */
async function settled<T>(
  call: Promise<{ data?: T; error?: unknown; response: Response }>,
): Promise<Exclude<T, ControlSchemas['Refusal']>> {
  const { data, response } = await call;
  const answer = data as Answer | undefined;
  if (!response.ok || !answer)
    throw new ControlError(
      `The sandbox control API answered HTTP ${response.status}${response.status === 404 ? ' (is the control API on? npm start turns it on)' : ''}`,
    );
  if (answer.responseCode < 0) throw new ControlError(answer.responseMessage ?? 'Refused', answer.responseCode);
  return data as Exclude<T, ControlSchemas['Refusal']>;
}

export function createControlClient(options: ControlClientOptions) {
  const http = createClient<paths>({
    baseUrl: `${options.baseUrl.replace(/\/$/, '')}/_sandbox`,
    headers: { authorization: `Basic ${btoa(`${options.accountId}:${options.apiKey}`)}` },
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  return {
    clock: () => settled(http.GET('/clock')),
    advanceClock: (by: ControlSchemas['Advance']) => settled(http.POST('/clock/advance', { body: by })),
    forceNextOutcome: (forced: ControlSchemas['ForcedOutcome']) =>
      settled(http.POST('/outcomes/next', { body: forced })),
    returnPayoutTransaction: (payoutId: string, transactionId: string) =>
      settled(
        http.POST('/payouts/{payoutId}/transactions/{transactionId}/return', {
          params: { path: { payoutId, transactionId } },
        }),
      ),
    completePayout: (payoutId: string) =>
      settled(http.POST('/payouts/{payoutId}/complete', { params: { path: { payoutId } } })),
    dishonourDirectDebit: (transactionID: string, notify: ControlSchemas['Dishonour'] = {}) =>
      settled(
        http.POST('/direct-debits/{transactionID}/dishonour', { params: { path: { transactionID } }, body: notify }),
      ),
    triggerNotification: (trigger: ControlSchemas['Trigger']) =>
      settled(http.POST('/notifications', { body: trigger })),
    deliveries: (query: { after?: number; waitSeconds?: number; latest?: number } = {}, signal?: AbortSignal) =>
      settled(http.GET('/deliveries', { params: { query }, ...(signal ? { signal } : {}) })),
    delivery: (id: number) => settled(http.GET('/deliveries/{id}', { params: { path: { id } } })),
    resendDelivery: (id: number, to: ControlSchemas['Resend'] = {}) =>
      settled(http.POST('/deliveries/{id}/resend', { params: { path: { id } }, body: to })),
    requests: (
      query: {
        after?: number;
        operation?: string;
        outcome?: 'approved' | 'declined' | 'pending' | 'refused';
        since?: string;
        until?: string;
        latest?: number;
        waitSeconds?: number;
      } = {},
      signal?: AbortSignal,
    ) => settled(http.GET('/requests', { params: { query }, ...(signal ? { signal } : {}) })),
    chaos: () => settled(http.GET('/chaos')),
    setChaos: (setting: ControlSchemas['ChaosSetting']) => settled(http.PUT('/chaos', { body: setting })),
    stopChaos: (notifyURL: string) => settled(http.DELETE('/chaos', { params: { query: { notifyURL } } })),
    resetMerchant: (merchantUUID: string) =>
      settled(http.DELETE('/merchants/{merchantUUID}/data', { params: { path: { merchantUUID } } })),
  };
}

export type ControlClient = ReturnType<typeof createControlClient>;
