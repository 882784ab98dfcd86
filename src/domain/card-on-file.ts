// A card on file (a token) never keeps its full number. It keeps what the gateway's answers show
// (first six and last four, in card_masked, and the expiry) and, only when a scenario or fixture
// names its number, a fingerprint: a hash that scenario rules compare the numbers they name with.
// A number nobody's files name gets no fingerprint, so nothing stored can be turned back into it.
// (With six and four digits shown and a Luhn check, about 100,000 numbers are left to try: a hash of
// any number would be searched out in a moment, and a secret key would not help, as it would have
// to be stored beside it for every replica and restart. So what is hashed is the thing limited.)
import { createHmac } from "node:crypto";
import { maskCard } from "./card-numbers.js";

/** The fingerprint of a card number. */
function cardFingerprint(number: string): string {
  return createHmac("sha256", "sandgate card on file").update(number).digest("base64url").slice(0, 27);
}

/** What a token keeps of its card: `named` when a scenario rule or fixture names the number. */
export function cardOnFileFields(number: string, named: boolean): { card_masked: string; card_fingerprint?: string } {
  return named ? { card_masked: maskCard(number), card_fingerprint: cardFingerprint(number) } : { card_masked: maskCard(number) };
}

/** Does this stored token still hold a full card number (a state file or Redis from before)? */
const holdsFullNumber = (token: object): token is { card_number: string } => typeof (token as { card_number?: unknown }).card_number === "string";

/**
 * A token from before (with card_number) as it is kept now; returns false when it had no number.
 * `named` says whether a scenario names the number (only then is it fingerprinted).
 */
export function forgetFullNumber(token: object, named: (number: string) => boolean): boolean {
  if (!holdsFullNumber(token)) return false;
  const number = token.card_number;
  delete (token as { card_number?: string }).card_number;
  Object.assign(token, cardOnFileFields(number, named(number)));
  return true;
}

/**
 * The card of a payment by token as scenario rules see it (the `card` field): the first six and
 * last four digits, and equality with the numbers rules name through the fingerprint.
 */
export class CardOnFile {
  /** fingerprints of the numbers rules named, worked out once per number */
  private static readonly seen = new Map<string, string>();

  constructor(
    /** "424242******4242": the first six, a star per hidden digit, the last four */
    readonly masked: string,
    private readonly fingerprint: string | undefined,
  ) {}

  static of(token: { card_masked: string; card_fingerprint?: string | undefined }): CardOnFile {
    return new CardOnFile(token.card_masked, token.card_fingerprint);
  }

  /** Is this card the number `value` (as a rule wrote it)? Known only for a fingerprinted card. */
  is(value: string | number | boolean): boolean {
    if (this.fingerprint === undefined) return false;
    const number = String(value).replace(/[\s-]/g, "");
    if (number.length !== this.masked.length) return false;
    let fp = CardOnFile.seen.get(number);
    if (fp === undefined) {
      if (CardOnFile.seen.size > 10_000) CardOnFile.seen.clear();
      CardOnFile.seen.set(number, (fp = cardFingerprint(number)));
    }
    return fp === this.fingerprint;
  }

  toString(): string {
    return this.masked;
  }
}
