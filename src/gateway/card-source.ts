// Where a direct payment's card comes from: the `card` field (checked: digits, Luhn, expiry), or a
// stored token of the merchant's (token_id); and keeping a card on file as a token (token_flag, a
// subscription). The payer pages pay through the same.
import { GatewayError, type FieldProblem } from "../domain/codes.js";
import { fail } from "../http/fields.js";
import { text } from "../domain/field-text.js";
import type { ScenarioRegistry } from "../scenarios/registry.js";
import type { CardToken } from "../domain/types.js";
import { cardOnFileFields } from "../domain/card-on-file.js";
import type { PaymentRequest } from "./payment-schema.js";
import { isExpired, normaliseExpiry } from "../domain/card-expiry.js";
import { maskCard, passesLuhn } from "../domain/card-numbers.js";
import type { Ids } from "../domain/ids.js";
import type { Repository } from "../domain/records.js";

/** What keeping a card on file needs: new ids, and whether a scenario names the number (then it is fingerprinted). */
export interface CardKeeping {
  store: { ids: Ids };
  scenarios: Pick<ScenarioRegistry, "namesCard">;
}

export interface CardSource {
  /** the number sent ("" for a card on file: its number is not kept) */
  number: string;
  masked: string;
  expired: boolean;
  /** the token paid with, if any */
  token: CardToken | undefined;
}

/** A stored token of this merchant (another merchant's token is as good as unknown). */
export function ownToken(records: Pick<Repository, "token">, tokenId: string, merchantId: string): CardToken | undefined {
  const token = records.token(tokenId);
  return token?.merchant_id === merchantId ? token : undefined;
}

export function cardSource(request: PaymentRequest, merchantId: string, records: Pick<Repository, "token">, now: Date): CardSource {
  if (request.token_id) {
    const token = ownToken(records, request.token_id, merchantId);
    if (!token) throw new GatewayError("token_not_found", `no token "${request.token_id}" for merchant ${merchantId}`);
    return { number: "", masked: token.card_masked, expired: isExpired(token.expiration_month, token.expiration_year, now), token };
  }
  const problems = cardProblems(request);
  if (problems.length) fail(problems);
  const number = cardNumber(request.card);
  const { month, year } = normaliseExpiry(request.expiration_month!, request.expiration_year!);
  return { number, masked: maskCard(number), expired: isExpired(month, year, now), token: undefined };
}

const cardNumber = (value: unknown) => text(value).replace(/[\s-]/g, "");
const isText = (value: unknown) => value === undefined || value === null || typeof value === "string" || typeof value === "number";

/**
 * What a payment without token_id lacks or gets wrong in its card data. Reads the raw body, so
 * these problems can be reported together with the schema's; values of the wrong type are left
 * to the schema.
 */
export function cardProblems(body: Record<string, unknown>): FieldProblem[] {
  if (text(body.token_id) !== "" && text(body.card) !== "") {
    return [{ field: "token_id", message: "and card were both sent: pay with one of them" }];
  }
  if (text(body.token_id) !== "") return [];
  const problems: FieldProblem[] = [];
  const number = cardNumber(body.card);
  if (isText(body.card)) {
    if (!number) problems.push({ field: "card", message: "is required (or pay with token_id)" });
    else if (!/^\d{12,19}$/.test(number)) problems.push({ field: "card", message: "must be 12 to 19 digits" });
    else if (!passesLuhn(number)) problems.push({ field: "card", message: "fails the Luhn check" });
  }
  for (const field of ["expiration_month", "expiration_year", "security_code"] as const) {
    if (isText(body[field]) && text(body[field]) === "") problems.push({ field, message: "is required" });
  }
  return problems;
}

const YES = /^(yes|y|1|true)$/i;

/** Stores the card as a token when token_flag asks for one; returns the new token. */
export function issueToken(request: PaymentRequest, card: CardSource, merchantId: string, keeping: CardKeeping, now: Date): CardToken | undefined {
  if (card.token || !YES.test(request.token_flag ?? "")) return undefined;
  return storeCard(request, card, merchantId, keeping, now);
}

/** The card of a payment by card number as a new token (token_flag, or a subscription's card on file): without its number. */
export function storeCard(request: PaymentRequest, card: CardSource, merchantId: string, { store, scenarios }: CardKeeping, now: Date): CardToken {
  const { month, year } = normaliseExpiry(request.expiration_month!, request.expiration_year!);
  return {
    token_id: store.ids.hex("token", 24, "tok_"),
    merchant_id: merchantId,
    ...cardOnFileFields(card.number, scenarios.namesCard(card.number)),
    expiration_month: month,
    expiration_year: year,
    holder_name: [request.first_name, request.last_name].filter(Boolean).join(" "),
    created_at: now.toISOString(),
  };
}
