// Card data never leaves Sandgate in full: in a notification's data, values under card-number keys
// are masked (first six, last four) and security codes are starred, however deep they sit.
import { maskCard } from "../domain/card.js";

const CARD_KEYS = /^(card|card_?no|card_?number|pan)$/i;
const SECRET_KEYS = /^(security_code|cvv2?|cvc)$/i;

function redactValue(key: string, value: unknown): unknown {
  if (typeof value === "string" || typeof value === "number") {
    const text = String(value);
    if (SECRET_KEYS.test(key)) return "*".repeat(text.length);
    if (CARD_KEYS.test(key)) return maskCard(text.replace(/[\s-]/g, ""));
    return value;
  }
  return redactCards(value);
}

export function redactCards<T>(value: T): T {
  if (Array.isArray(value)) return value.map((v) => redactCards(v)) as T;
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redactValue(k, v)])) as T;
}
