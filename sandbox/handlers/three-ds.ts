// Access tokens, 3D Secure and BIN queries, with deterministic sandbox outcomes: Visa and Mastercard
// cards are enrolled and authenticate (status Y, ECI 05; 3DS 1: A, ECI 06); others are not enrolled.
// checkEnrollment opens a session; an outcome is given only for a session of the same merchant whose
// card is enrolled.
import { accessTokenLifetimeMinutes } from '../../generated/spec-constants.ts';
import { type GatewayHandlers, type HandlerContext, refusals as stubRefusals } from '../../server-stubs/index.ts';
import { cardType, luhn } from '../cards.ts';
import { ok, type Sandbox } from '../context.ts';
import { refused, sandboxRefusals as refusals } from '../refusals.ts';
import { cavv, threeDSXid, token } from '../ids.ts';
import { askedOutcome } from '../scenarios.ts';
import { cardOf } from './card-payments.ts';

type H = GatewayHandlers<HandlerContext>;

export function threeDSHandlers(sb: Sandbox) {
  const { store, clock } = sb;
  // How long an access token lasts: the contract says it, on the result that carries its expiry.
  const accessTokenMs = accessTokenLifetimeMinutes * 60_000;
  /** Why a 3DS outcome cannot be given for this session: none opened for the merchant, or no card enrolled. */
  const sessionRefusal = async (merchantId: string, threeDSToken: string) => {
    const session = await store.get(
      'SELECT enrolled FROM three_ds_sessions WHERE token = ? AND merchant_id = ?',
      threeDSToken,
      merchantId,
    );
    if (!session) return refused(refusals.noThreeDSSession());
    return session.enrolled ? undefined : refused(refusals.notEnrolled());
  };
  return {
    getAccessToken: async ({ body }, { account }) => {
      const expiry = clock.timestamp(accessTokenMs);
      const accessToken = await store.transaction(async () => {
        const id = await store.freshId('access_tokens', 'token', () => token('at'));
        // Stored only while the account still holds the credentials the request was authenticated
        // with: `sandbox accounts rotate` may have replaced them since (and deleted the tokens they
        // were issued), and a token stored after that would work under the old ones for its lifetime.
        // FOR SHARE locks the account's row until this transaction commits: on PostgreSQL a rotation
        // under way (it holds the row FOR UPDATE) is waited for and the credentials compared again
        // with what it committed, and a rotation that comes later waits for this commit, so its
        // DELETE of the merchant's tokens sees this one. SQLite runs the two transactions one at a time.
        const { changes } = await store.run(
          `INSERT INTO access_tokens (token, merchant_id, amount, currency, expires_at)
           SELECT ?, id, ?, ?, ? FROM accounts WHERE kind = ? AND id = ? AND api_key = ? AND passphrase = ? FOR SHARE`,
          id,
          body.transactionAmount,
          body.transactionCurrency,
          expiry,
          account.kind,
          account.id,
          account.apiKey,
          account.passphrase,
        );
        return changes === 1 ? id : undefined;
      });
      if (accessToken === undefined)
        return refused(stubRefusals.credentials('the credentials were replaced (rotated) during the request'));
      return { responseCode: '0', responseMessage: ok, accessToken, accessTokenExpiry: expiry };
    },
    checkEnrollment: async ({ body }, { account }) => {
      const source = await cardOf(sb, account.id, body);
      if ('refusal' in source) return source.refusal;
      if (!luhn(source.card.number)) return refused(refusals.failsLuhn(source.field));
      const type = cardType(source.card.number);
      // A scenario's answer (Y, N or U) is the session's too: checkTDSAuth finds it enrolled or not.
      const asked = askedOutcome('threeDSEnrolment')?.set?.enrolled as 'Y' | 'N' | 'U' | undefined;
      const enrolled = asked ? asked === 'Y' : type === 'visa' || type === 'mc';
      const threeDSToken = await store.transaction(async () => {
        const id = await store.freshId('three_ds_sessions', 'token', () => token('tds'));
        await store.run(
          'INSERT INTO three_ds_sessions (token, merchant_id, enrolled, created_at) VALUES (?, ?, ?, ?)',
          id,
          account.id,
          enrolled ? 1 : 0,
          clock.timestamp(),
        );
        return id;
      });
      return {
        responseCode: '0',
        responseMessage: ok,
        threeDSToken,
        enrolled: asked ?? (enrolled ? ('Y' as const) : ('N' as const)),
        ...(enrolled
          ? {
              threeDSV2Version: '2.2.0',
              acsURL: 'https://acs.sandbox.test/challenge',
              challenge: Buffer.from(JSON.stringify({ messageType: 'CReq' })).toString('base64'),
            }
          : {}),
      };
    },
    checkTDSAuth: async ({ body }, { account }) =>
      (await sessionRefusal(account.id, body.threeDSToken)) ?? {
        responseCode: '0',
        responseMessage: ok,
        threeDSToken: body.threeDSToken,
        threeDSStatus: 'Y' as const,
        threeDSEci: '05',
        threeDSCavv: cavv(),
        threeDSV2Version: '2.2.0',
      },
    checkPARes: async ({ body }, { account }) =>
      (await sessionRefusal(account.id, body.threeDSToken)) ?? {
        responseCode: '0',
        responseMessage: ok,
        threeDSToken: body.threeDSToken,
        threeDSStatus: 'A' as const,
        threeDSEci: '06',
        threeDSCavv: cavv(),
        threeDSXid: threeDSXid(),
      },
    queryBIN: async ({ body }) => {
      const type = cardType(`${body.cardBin}0000000000`);
      return {
        responseCode: '0',
        responseMessage: ok,
        cardBin: body.cardBin,
        cardType: type as 'visa',
        cardFunding: 'credit' as const,
        cardIssuer: 'Sandbox Bank',
        cardCountry: 'AU' as const,
      };
    },
  } satisfies Partial<H>;
}
