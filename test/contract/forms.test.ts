// The one form chooser (runtime/forms.ts) against Ajv: for every request example and for values drawn
// from each form's own schema, the form chosen from the operation table's field lists is the one
// whose schema validates the body. The client, the contract suite and the bench choose with it, so a
// wrong choice here would sign a body for the wrong form everywhere.
import { describe, expect, it } from 'vitest';
import { sampleValid } from '../../contract/arbitraries.ts';
import { operations as table } from '../../generated/operations.ts';
import { chooseForm, formHashes, ownFields } from '../../runtime/forms.ts';
import { exampleValue } from '../../runtime/document.ts';
import { doc, validatorFor } from '../support/contract.ts';

const multiForm = table.filter((op) => op.forms);
const validates = (form: string, body: unknown) => validatorFor(`#/components/schemas/${form}`)(body);

describe('the form chooser', () => {
  it('every operation with a request body carries one requestForm per form', () => {
    for (const op of table.filter((o) => o.request))
      expect(
        op.requestForms!.map((f) => f.schema),
        op.operationId,
      ).toEqual(op.forms ?? [op.request]);
    for (const op of table.filter((o) => !o.request)) expect(op.requestForms).toBeNull();
  });

  it.each(table.filter((op) => op.request).map((op) => [op.operationId, op] as const))(
    '%s: each request example is chosen as the form that validates it',
    (_, op) => {
      for (const name of op.examples.request) {
        const body = exampleValue(doc, name) as Record<string, unknown>;
        const valid = (op.forms ?? [op.request!]).filter((f) => validates(f, body));
        expect(valid, name).toHaveLength(1);
        expect(chooseForm(op.requestForms!, body).schema, name).toBe(valid[0]);
      }
    },
  );

  it.each(multiForm.map((op) => [op.operationId, op] as const))(
    '%s: values drawn from each form are chosen as that form',
    (_, op) => {
      for (const [i, form] of op.forms!.entries()) {
        const values = sampleValid(doc, doc.components.schemas[form], (v) => validates(form, v), 25, 1000 + i);
        for (const value of values)
          expect(
            chooseForm(op.requestForms!, value as Record<string, unknown>).schema,
            JSON.stringify(value).slice(0, 200),
          ).toBe(form);
      }
    },
  );

  it('a field no form of the method declares is no sign of a form: the gateway drops it before it chooses', () => {
    const op = table.find((o) => o.operationId === 'processCard')!;
    const external3DS = exampleValue(doc, 'processCardExternal3DS') as Record<string, unknown>;
    // Without the stray field it fits the external 3-D Secure form; no form takes the stray field.
    expect(chooseForm(op.requestForms!, { ...external3DS, stray: 1 }).schema).toBe('ProcessCardExternal3DS');
  });

  it("a form's own fields are those it requires that no other form of the method declares", () => {
    const own = (id: string) =>
      ownFields(table.find((o) => o.operationId === id)!.requestForms!).map((names) => [...names].sort());
    // The payframe form takes accessToken and the card-data form the 3-D Secure result, unrequired:
    // neither is a 3-D Secure form's own; the external 3-D Secure form's card data is the card form's too.
    expect(own('processCard')).toEqual([[], ['payframeKey', 'payframeToken'], [], ['cardID'], ['digitalWalletToken']]);
    expect(own('processAuth')).toEqual([
      ['paymentCardExpiry', 'paymentCardName', 'paymentCardNumber'],
      ['payframeKey', 'payframeToken'],
    ]);
    // The wallet forms of kind A and B take a digitalWalletToken too.
    expect(own('walletProcessCard')).toEqual([
      [],
      ['walletAApplicationExpirationDate', 'walletAApplicationPrimaryAccountNumber', 'walletAOnlinePaymentCryptogram'],
      ['walletBCryptogram', 'walletBExpirationMonth', 'walletBExpirationYear', 'walletBPan'],
    ]);
  });

  it('a conditional hash is signed only once its trigger is sent (dependentRequired)', () => {
    const form = table.find((o) => o.operationId === 'processDDebitAuth')!.requestForms![0]!;
    expect(formHashes(form, {}).map((h) => h.name)).toEqual(['hash']);
    expect(formHashes(form, { returnURL: 'https://x' }).map((h) => h.name)).toEqual(['hash', 'urlHash']);
  });
});
