// What a caller signs. encryption_data: the canonical signing string per operation
// (data/signature-fields.json), the lenient/strict check of requests, and the signature Sandgate
// puts on its own responses. Whose key checks it: domain/merchants.ts.
import { hash } from "node:crypto";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { GatewayError } from "./codes.js";
import type { BatchSignature, SignatureMode } from "../config/config.js";
import { dataDir } from "../base/paths.js";
import { GATEWAY_OPERATION_NAMES, type SignedOperation } from "./gateway-operations.js";
import { text } from "./field-text.js";

/** Signed things that are not requests: the payer's return to return_url (and notifications, in notify/outbox.ts). */
export type SignedAnswer = SignedOperation | "payer_return";

/** `orders`: a batch operation's fields of each order, signed after the request's list with --batch-signature orders. */
type FieldLists = Record<SignedAnswer, { request: string[]; response: string[]; orders?: string[] }>;

export const signatureFields: FieldLists = JSON.parse(readFileSync(resolve(dataDir, "signature-fields.json"), "utf8")) as FieldLists;

for (const name of GATEWAY_OPERATION_NAMES) {
  if (!signatureFields[name]) throw new Error(`data/signature-fields.json has no entry for the operation ${name}`);
}

const HEX64 = /^[0-9a-fA-F]{64}$/;

/**
 * The fields a request is signed over, in order: the operation's list; with --batch-signature
 * orders, a batch's (`orderList`, e.g. capture_orders) each order's fields after it, order by order
 * (capture_orders.0.transaction_id, capture_orders.0.order_no, …), so a captured signature acts for
 * those orders only.
 */
export function requestFields(
  operation: SignedOperation,
  body: Record<string, unknown>,
  batchSignature: BatchSignature,
  orderList?: string,
): readonly string[] {
  const lists = signatureFields[operation];
  if (batchSignature !== "orders" || !lists.orders || !orderList) return lists.request;
  const orders = body[orderList];
  const fields = [...lists.request];
  if (Array.isArray(orders)) for (let i = 0; i < orders.length; i++) for (const f of lists.orders) fields.push(`${orderList}.${i}.${f}`);
  return fields;
}

/** A field's value as text; a name with a dot reads inside objects (a notification's data.amount). */
function valueOf(body: Record<string, unknown>, field: string): string {
  if (!field.includes(".")) return text(body[field]);
  let value: unknown = body;
  for (const part of field.split(".")) value = value !== null && typeof value === "object" ? (value as Record<string, unknown>)[part] : undefined;
  return text(value);
}

/** The key as a signing string shows it: never any part of it (not its length, not its ends). */
export const KEY_SHOWN = "<secret key>";

export interface Signed {
  /** the operation's list itself (shared, never changed) */
  fields: readonly string[];
  /** the concatenated values followed by the key, with the key masked: safe to log and show */
  signingString: string;
  signature: string;
}

/** Card data never appears in full in a log or an error: the shown signing string masks it. */
const SHOWN: Record<string, (v: string) => string> = {
  card: (v) => (v.length > 10 ? `${v.slice(0, 6)}${"*".repeat(v.length - 10)}${v.slice(-4)}` : "*".repeat(v.length)),
  security_code: (v) => "*".repeat(v.length),
};

/** `shownBody`: the values the signing string shows (card numbers in other fields masked), when not `body`'s. */
export function sign(fields: readonly string[], body: Record<string, unknown>, key: string, shownBody: Record<string, unknown> = body): Signed {
  const values = fields.map((f) => valueOf(body, f));
  const shownValues = shownBody === body ? values : fields.map((f) => valueOf(shownBody, f));
  const shown = shownValues.map((v, i) => SHOWN[fields[i]!]?.(v) ?? v).join("");
  return {
    fields,
    signingString: `${shown}${KEY_SHOWN}`,
    signature: digest(values.join(""), key),
  };
}

const digest = (values: string, key: string) => hash("sha256", values + key, "hex");

/** The signature alone (a response's or a notification's encryption_data): no signing string to show. */
export function signatureOf(fields: readonly string[], body: Record<string, unknown>, key: string): string {
  let values = "";
  for (const f of fields) values += valueOf(body, f);
  return digest(values, key);
}

export interface SignatureCheck extends Signed {
  received: string;
  matched: boolean;
  mode: SignatureMode;
}

/**
 * Refuses a missing or malformed value in any mode; a mismatch is returned (matched: false) for the
 * caller to log before it refuses it in strict mode (refuseMismatch).
 */
export function checkRequestSignature(
  fields: readonly string[],
  body: Record<string, unknown>,
  key: string,
  mode: SignatureMode,
  shownBody: Record<string, unknown> = body,
): SignatureCheck {
  const raw = body.encryption_data;
  if (raw === undefined || raw === null || raw === "") {
    const problem = { field: "encryption_data", message: "is required (64 hexadecimal characters)" };
    throw new GatewayError("invalid_signature", "encryption_data is missing (64 hexadecimal characters expected)", [problem]);
  }
  if (typeof raw !== "string" || !HEX64.test(raw)) {
    const shown =
      typeof raw !== "string"
        ? `a ${Array.isArray(raw) ? "list" : typeof raw}`
        : raw.length === 64
          ? "64 characters, not all hexadecimal"
          : `${raw.length} characters`;
    const problem = { field: "encryption_data", message: `must be 64 hexadecimal characters, got ${shown}` };
    throw new GatewayError("invalid_signature", `encryption_data must be 64 hexadecimal characters, got ${shown}`, [problem]);
  }
  const expected = sign(fields, body, key, shownBody);
  const check: SignatureCheck = {
    fields: expected.fields,
    signingString: expected.signingString,
    signature: expected.signature,
    received: raw,
    matched: raw.toLowerCase() === expected.signature,
    mode,
  };
  return check;
}

/**
 * The strict refusal of a mismatch: which fields were signed, in which order, and where the operator
 * finds the expected value (the request log, behind ADMIN_TOKEN). Never the expected value, nor any
 * part of the key: sent again, a value a refusal gave would be the merchant's signature.
 */
export function refuseMismatch(check: SignatureCheck, requestId: string): never {
  const fields = `${check.fields.join(", ")}, then the secret key`;
  throw new GatewayError(
    "signature_mismatch",
    `signed over ${fields}; the expected value is in Sandgate's request log, request ${requestId} (operators only)`,
    [{ field: "encryption_data", message: `does not match the sha256 of ${fields}` }],
  );
}

export function signResponse(operation: SignedAnswer, body: Record<string, unknown>, key: string): string {
  return signatureOf(signatureFields[operation].response, body, key);
}
