// Card numbers at rest: AES-256-GCM (node:crypto) under the sandbox's data key, and a keyed
// fingerprint that identifies a card number without revealing it. The security code is never stored.
import {
  createCipheriv,
  createDecipheriv,
  createHmac,
  createSecretKey,
  randomBytes,
  type KeyObject,
} from 'node:crypto';
import { findCardNumber } from '../runtime/card-numbers.ts';

export class VaultCrypto {
  // A KeyObject made once: given raw bytes, every cipher and HMAC imports the key again, which cost
  // more than the AES-GCM itself (a 20,000-line batch spent 0.9 s in key imports).
  private readonly key: KeyObject;

  /** key: 32 bytes; a fresh random key when none is given (an in-memory sandbox). */
  constructor(key?: Buffer) {
    const bytes = key ?? randomBytes(32);
    if (bytes.length !== 32) throw new Error('The vault key must be 32 bytes');
    this.key = createSecretKey(bytes);
  }

  encrypt(plain: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64');
  }

  decrypt(sealed: string): string {
    const raw = Buffer.from(sealed, 'base64');
    const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
  }

  /**
   * 32 hex digits, the same for every entry of one card number, that never read as a card number.
   * About 1 keyed digest in 500 holds a run of decimal digits the card-number reading takes for a
   * card's (a 14-digit Luhn-valid run with a card's prefix): the stubs would then withhold every
   * answer that carries it (cardInfo with paymentFingerprint: 500, for that card, for ever). Such a
   * digest is derived again, with a round number after the card number, until the reading finds
   * none: still a function of the key and the card alone (sandbox/ids.ts redraws its random
   * identifiers the same way).
   */
  fingerprint(pan: string): string {
    return this.fingerprints(pan).current;
  }

  /**
   * The card's fingerprint, and where it differs, the one a sandbox stored for it before the digest
   * was derived again (its first digest, which reads as a card number): rows stored under that one
   * move to the current one (sandbox/card-fingerprint.ts).
   */
  fingerprints(pan: string): { current: string; earlier?: string } {
    const first = this.digest(pan, 0);
    if (!findCardNumber(first)) return { current: first };
    for (let round = 1; ; round++) {
      const digest = this.digest(pan, round);
      if (!findCardNumber(digest)) return { current: digest, earlier: first };
    }
  }

  private digest(pan: string, round: number): string {
    return createHmac('sha256', this.key)
      .update(round === 0 ? pan : `${pan}:${round}`)
      .digest('hex')
      .slice(0, 32);
  }
}
