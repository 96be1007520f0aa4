// A card's fingerprint as the store keys its rows. Before cb7bd95 the vault's fingerprint was the
// card's first keyed digest even where that digest reads as a card number (about 1 card in 500, per
// data key); such a card has another fingerprint now, and a blacklist entry or a vault entry stored
// under the first one was no longer found by it: a blacklisted card was approved, queried as not
// blacklisted, and could be listed twice; its vault entries' cardInfo with paymentFingerprint was
// withheld with a 500. A blacklist entry moves to the current fingerprint when the card is next
// presented (keeping its entry ID; where the card was listed again since, the newer entry is the
// card's one entry and the older is dropped, so that removing it unblocks the card); a vault entry
// when cardInfo reads it. For the other cards nothing is read or written beyond what was.
import { findCardNumber } from '../runtime/card-numbers.ts';
import type { Sandbox } from './context.ts';
import type { Row } from './store.ts';

/** The card's fingerprint, a blacklist entry stored under its earlier one moved to it first. */
export async function cardFingerprint(sb: Sandbox, merchantId: string, pan: string): Promise<string> {
  const { current, earlier } = sb.vault.fingerprints(pan);
  // By the blacklist's unique key: once the entry has moved, one indexed read finds nothing.
  if (
    earlier &&
    (await sb.store.get('SELECT 1 FROM blacklist WHERE merchant_id = ? AND fingerprint = ?', merchantId, earlier))
  ) {
    await sb.store.run(
      'DELETE FROM blacklist WHERE merchant_id = ? AND fingerprint = ? AND EXISTS (SELECT 1 FROM blacklist WHERE merchant_id = ? AND fingerprint = ?)',
      merchantId,
      earlier,
      merchantId,
      current,
    );
    await sb.store.run(
      'UPDATE blacklist SET fingerprint = ? WHERE merchant_id = ? AND fingerprint = ?',
      current,
      merchantId,
      earlier,
    );
  }
  return current;
}

/** A vault entry's fingerprint as cardInfo answers it: an earlier one, which reads as a card number, is moved on. */
export async function entryFingerprint(sb: Sandbox, row: Row): Promise<string> {
  if (!findCardNumber(row.fingerprint)) return row.fingerprint;
  const { current } = sb.vault.fingerprints(sb.vault.decrypt(row.pan_encrypted));
  await sb.store.run('UPDATE cards SET fingerprint = ? WHERE card_id = ?', current, row.card_id);
  return current;
}
