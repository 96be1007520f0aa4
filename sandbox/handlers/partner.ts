// Merchant onboarding: addMerchant answers a requestReference and, for an approved request, creates
// the merchant at once and sends merchantCreated to the partner's notification address. In the
// sandbox a new merchant shares its partner's API key and passphrase.
import type { GatewayHandlers, HandlerContext } from '../../server-stubs/index.ts';
import { ok, type Sandbox } from '../context.ts';
import { refused, sandboxRefusals as refusals } from '../refusals.ts';
import { DEFAULT_SURCHARGE_BP } from '../data.ts';
import { addSurchargeRates } from '../accounts.ts';
import { merchantId, reference } from '../ids.ts';

type H = GatewayHandlers<HandlerContext>;

export function partnerHandlers(sb: Sandbox) {
  const { store, clock, notifier } = sb;
  return {
    addMerchant: async ({ body }, { account }) =>
      store.transaction(async () => {
        const requestReference = await store.freshId('merchant_requests', 'reference', () => reference('MREQ'));
        const status = body.status ?? 'approved';
        let created: string | null = null;
        if (status === 'approved') {
          created = await store.freshId('accounts', 'id', merchantId);
          const { method: _m, partnerUUID: _p, apiKey: _k, hash: _h, ...profile } = body;
          await store.run(
            'INSERT INTO accounts (kind, id, api_key, passphrase, partner_id, profile, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
            'merchant',
            created,
            account.apiKey,
            account.passphrase,
            account.id,
            JSON.stringify(profile),
            clock.timestamp(),
          );
          await addSurchargeRates(store, created, DEFAULT_SURCHARGE_BP);
        }
        await store.run(
          'INSERT INTO merchant_requests (reference, partner_id, status, merchant_id, created_at) VALUES (?, ?, ?, ?, ?)',
          requestReference,
          account.id,
          status,
          created,
          clock.timestamp(),
        );
        const notifyUrl = (
          await store.get('SELECT notify_url FROM accounts WHERE kind = ? AND id = ?', 'partner', account.id)
        )?.notify_url;
        if (created && notifyUrl)
          await notifier.merchantCreated(account, notifyUrl, {
            requestReference,
            status: 'approved',
            merchantUUID: created,
          });
        return { responseCode: 0, responseMessage: ok, requestReference };
      }),
    checkMerchant: async ({ body }, { account }) => {
      const row = await store.get(
        'SELECT * FROM merchant_requests WHERE partner_id = ? AND reference = ?',
        account.id,
        body.requestReference,
      );
      if (!row) return refused(refusals.noSuchPartnerRequest());
      return {
        responseCode: 0,
        responseMessage: ok,
        requestReference: row.reference,
        status: row.status,
        ...(row.merchant_id ? { merchantUUID: row.merchant_id } : {}),
      };
    },
    updateMerchant: async ({ body }, { account }) =>
      store.transaction(async () => {
        const row = await store.get(
          'SELECT * FROM accounts WHERE kind = ? AND id = ? AND partner_id = ? FOR UPDATE',
          'merchant',
          body.merchantUUID,
          account.id,
        );
        if (!row) return refused(refusals.notPartnersMerchant());
        const { method: _m, partnerUUID: _p, apiKey: _k, hash: _h, merchantUUID: _u, ...changes } = body;
        await store.run(
          'UPDATE accounts SET profile = ? WHERE kind = ? AND id = ?',
          JSON.stringify({ ...JSON.parse(row.profile), ...changes }),
          'merchant',
          body.merchantUUID,
        );
        return { responseCode: 0, responseMessage: ok, merchantUUID: body.merchantUUID };
      }),
  } satisfies Partial<H>;
}
