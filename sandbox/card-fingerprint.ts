// A card's fingerprint as the store keys its rows. Before cb7bd95 the vault's fingerprint was the
// card's first keyed digest even where that digest reads as a card number (about 1 card in 500, per
// data key); such a card has another fingerprint now, and a blacklist entry or a vault entry stored
// under the first one was no longer found by it: a blacklisted card was approved, queried as not
// blacklisted, and could be listed twice; its vault entries' cardInfo with paymentFingerprint was
// withheld with a 500. Those rows move to the current fingerprint when the card is next presented,
// and a vault entry's also when cardInfo reads it. The blacklist entry keeps its entry ID; where the
// card was listed again since, the newer entry is the one found, and the older one stays as it is.
import { findCardNumber } from '../runtime/card-numbers.ts';
import type { Sandbox } from './context.ts';
import type { Row } from './store.ts';

/** The card's fingerprint, its rows stored under an earlier one moved to it first. */
export async function cardFingerprint(sb: Sandbox, merchantId: string, pan: string): Promise<string> {
  const { current, earlier } = sb.vault.fingerprints(pan);
  if (earlier) {
    await sb.store.run(
      'UPDATE blacklist SET fingerprint = ? WHERE merchant_id = ? AND fingerprint = ? AND NOT EXISTS (SELECT 1 FROM blacklist WHERE merchant_id = ? AND fingerprint = ?)',
      current,
      merchantId,
      earlier,
      merchantId,
      current,
    );
    await sb.store.run(
      'UPDATE cards SET fingerprint = ? WHERE merchant_id = ? AND fingerprint = ?',
      current,
      merchantId,
      earlier,
    );
  }
  return current;
}

/** A vault entry's fingerprint as cardInfo answers it: an earlier one that reads as a card number is moved on. */
export async function entryFingerprint(sb: Sandbox, row: Row): Promise<string> {
  if (!findCardNumber(row.fingerprint)) return row.fingerprint;
  return cardFingerprint(sb, row.merchant_id, sb.vault.decrypt(row.pan_encrypted));
}
