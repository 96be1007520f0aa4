// The method map narrows: RequestOf / ResultOf give one method's own request and result, not the
// union of the path. These assertions are checked by `tsc` (the last test reads its run over the
// project: the run's one compilation for the type tests, test/support/type-check.ts).
import { describe, expect, expectTypeOf, it } from 'vitest';
import type {
  MethodMap,
  OperationRequest,
  OperationResult,
  RefusalOf,
  RequestOf,
  ResponseOf,
  ResultOf,
} from '../../generated/methods.ts';
import type { components, paths } from '../../generated/types.ts';
import { typeCheck } from '../support/type-check.ts';

type S = components['schemas'];

describe('generated types', () => {
  it('ResultOf and RequestOf give exactly one method’s own types', () => {
    expectTypeOf<ResultOf<'/post', 'processCapture'>>().toEqualTypeOf<S['CaptureResult']>();
    expectTypeOf<RequestOf<'/post', 'processCapture'>>().toEqualTypeOf<S['ProcessCaptureRequest']>();
    expectTypeOf<ResultOf<'/post', 'getSurcharge'>>().toEqualTypeOf<S['SurchargeResult']>();
    expectTypeOf<ResultOf<'/token', 'cardInfo'>>().toEqualTypeOf<S['StoredCardResult']>();
    expectTypeOf<ResultOf<'/partner', 'addMerchant'>>().toEqualTypeOf<S['MerchantRequestResult']>();
    expectTypeOf<RefusalOf<'/post', 'processCapture'>>().toEqualTypeOf<S['Refusal']>();
    expectTypeOf<ResponseOf<'/post', 'processCapture'>>().toEqualTypeOf<S['CaptureResult'] | S['Refusal']>();
    // A capture result is not the union of the path's results.
    type PostUnion = paths['/post']['post']['responses'][200]['content']['application/json'];
    expectTypeOf<ResultOf<'/post', 'processCapture'>>().not.toEqualTypeOf<PostUnion>();
  });

  it('the same method name on two paths gives each path its own request', () => {
    expectTypeOf<RequestOf<'/token', 'processCard'>>().toEqualTypeOf<S['TokenProcessCardRequest']>();
    expectTypeOf<RequestOf<'/post', 'processCard'>>().toEqualTypeOf<S['ProcessCardRequest']>();
    expectTypeOf<RequestOf<'/processCard', 'processCard'>>().toEqualTypeOf<S['WalletProcessCardRequest']>();
    expectTypeOf<keyof MethodMap['/partner']>().toEqualTypeOf<'addMerchant' | 'updateMerchant' | 'checkMerchant'>();
  });

  it('operations by id cover the standalone paths too', () => {
    expectTypeOf<OperationRequest<'createPayToPayment'>>().toEqualTypeOf<S['CreatePayToPaymentRequest']>();
    expectTypeOf<OperationResult<'getPayId'>>().toEqualTypeOf<S['PayIdResult']>();
    expectTypeOf<OperationResult<'getPayoutTransactionStatus'>>().toEqualTypeOf<S['PayoutTransactionResult']>();
  });

  it('keeps the quirks in the types: string | number codes, [] custom echoes, literal methods', () => {
    expectTypeOf<S['TransactionResult']['responseCode']>().toEqualTypeOf<string | number>();
    expectTypeOf<S['PayToPaymentResult']['responseCode']>().toEqualTypeOf<number>();
    // @ts-expect-error a capture result is not a surcharge quote
    expectTypeOf<ResultOf<'/post', 'processCapture'>>().toEqualTypeOf<S['SurchargeResult']>();
    expectTypeOf<S['TransactionResult']['custom1']>().toEqualTypeOf<string | []>();
    expectTypeOf<S['ProcessCaptureRequest']['method']>().toEqualTypeOf<'processCapture'>();
    expectTypeOf<RequestOf<'/post', 'processCard'>['method']>().toEqualTypeOf<'processCard'>();
  });

  it('type-checks: tsc finds no error in the project, these assertions included', async () => {
    const { errors, examples, other } = await typeCheck();
    const ours = new Set([...examples, 'bad-handlers.ts']);
    expect(Object.entries(errors).filter(([file]) => !ours.has(file))).toEqual([]);
    expect(other).toBe('');
  }, 300_000);
});
