// Request bodies several test files send, written once: the same customer and the same merchant
// wherever a test needs "a direct debit" or "a new merchant" and nothing about them in particular.

/** A direct debit from Jane's bank account (BSB 802950, 123321) of `amount`; `extra` adds or overrides fields. */
export function bankDebit(amount: string, extra: Record<string, string> = {}) {
  return {
    paymentAccountBSB: '802950',
    paymentAccountNumber: '123321',
    paymentAccountName: 'Jane',
    transactionAmount: amount,
    transactionCurrency: 'AUD' as const,
    transactionProduct: 'Plan',
    customerName: 'Jane',
    ...extra,
  };
}

/** A partner's new merchant, approved at once: Widgets Pty Ltd, settling to BSB 802950, 123321. */
export const widgetsMerchant = {
  merchantCompanyLegalName: 'Widgets Pty Ltd',
  merchantCompanyTradingName: 'Widgets',
  merchantCompanyRegNumber: '51824753556',
  merchantIndustry: 'Retail',
  merchantCountry: 'AU',
  merchantTimezone: 'Australia/Brisbane',
  merchantContactName: 'Sam',
  merchantContactEmail: 'sam@widgets.test',
  merchantCategoryCode: '5999',
  settlementAccountName: 'Widgets',
  settlementAccountBSB: '802950',
  settlementAccountNumber: '123321',
  status: 'approved',
} as const;
