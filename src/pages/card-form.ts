// The hosted checkout's card form: number, expiry, CVC and holder, checked as /v1/authorise checks
// a card (same field names, same messages).
import { GatewayError, type FieldProblem } from "../domain/codes.js";
import { isExpired, normaliseExpiry } from "../domain/card-expiry.js";
import { maskCard } from "../domain/card-numbers.js";
import { cardProblems } from "../gateway/card-source.js";
import { paymentRequest } from "../gateway/payment-schema.js";
import { obj, str, validate } from "../http/fields.js";
import { text } from "../domain/field-text.js";
import type { PaidCard } from "./finish.js";

const cardForm = obj({
  expiration_month: paymentRequest.shape.expiration_month,
  expiration_year: paymentRequest.shape.expiration_year,
  security_code: paymentRequest.shape.security_code,
  holder_name: str(),
});

export type CardFormResult = { card: PaidCard; expired: boolean } | { problems: FieldProblem[] };

export function readCardForm(body: Record<string, unknown>, now: Date): CardFormResult {
  // a stored token is not something a payer can type: only the card fields count
  const fields = { ...body, token_id: undefined };
  try {
    validate(cardForm, fields, cardProblems(fields));
  } catch (err) {
    if (err instanceof GatewayError) return { problems: err.problems };
    throw err;
  }
  const number = text(body.card).replace(/[\s-]/g, "");
  const { month, year } = normaliseExpiry(text(body.expiration_month), text(body.expiration_year));
  return {
    card: { number, masked: maskCard(number), expiration_month: month, expiration_year: year, holder: text(body.holder_name).trim() },
    expired: isExpired(month, year, now),
  };
}
