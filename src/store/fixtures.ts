// Reads fixtures/*.json (read-only initial state) and checks them at boot; errors name file and path.
import { readFileSync, existsSync } from "node:fs";
import { resolve } from "node:path";
import { z } from "zod";
import type { Account, Merchant, Payout, Refund, Subscription, Transaction } from "../domain/types.js";
import { payoutRecord } from "./payout-record.js";
import { deliveryOf } from "../domain/delivery.js";

const str = z.string();
const opt = (fallback = "") => z.string().default(fallback);
const amount = z.string().regex(/^\d+\.\d{2}$/, "a decimal string with two places");
const iso = z.string().refine((s) => !Number.isNaN(Date.parse(s)), "an ISO 8601 date-time");

const account = z.object({
  account_id: str,
  gateway_account: str,
  account_name: str,
  connector: str,
  connector_code: str,
  descriptor: str,
  capture_mode: z.enum(["manual", "auto"]),
  payment_methods: z.array(str),
}) satisfies z.ZodType<Account>;

const merchant = z.object({
  merchant_id: str,
  name: str,
  secret_key: z.string().min(8),
  registered_ips: z.array(str),
  accounts: z.array(account).min(1),
}) satisfies z.ZodType<Merchant>;

/** A fixture token names its card number; the state keeps only what card-on-file.ts says. */
const token = z.object({
  token_id: str,
  merchant_id: str,
  card_number: z.string().regex(/^\d{12,19}$/),
  card_masked: str,
  expiration_month: z.string().regex(/^\d{2}$/),
  expiration_year: z.string().regex(/^\d{4}$/),
  holder_name: str,
  created_at: iso,
});
type FixtureToken = z.infer<typeof token>;

const delivery = z
  .object({
    delivery_address: opt(),
    delivery_city: opt(),
    delivery_country: opt(),
    delivery_firstname: opt(),
    delivery_lastname: opt(),
    delivery_postal_code: opt(),
    delivery_state: opt(),
  })
  .default(() => deliveryOf(undefined));

/** A stored payment (what the fixtures are checked against; the operator API's transaction view too: src/openapi/operator-calls.ts). */
export const transaction = z.object({
  transaction_id: str,
  merchant_id: str,
  account_id: str,
  order_no: str,
  kind: z.enum(["direct", "apm", "checkout", "recurring"]),
  currency: z.string().regex(/^[A-Z]{3}$/),
  amount,
  state: z.enum(["pending", "authorised", "review", "paid", "partially_refunded", "refunded", "cancelled", "declined"]),
  result: str,
  reference_no: str,
  website: opt(),
  card_masked: opt(),
  token_id: opt(),
  payment_method: opt(),
  connector: str,
  note: opt(),
  shopper_email: opt(),
  shopper_phone: opt(),
  delivery,
  is3ds: z.boolean().default(false),
  threeds_result: opt(),
  risk_action: z.enum(["ACCEPT", "REVIEW", "REJECT"]).default("ACCEPT"),
  risk_score: z.number().default(10),
  risk_reasons: z.array(z.object({ name: str, status: z.enum(["ACCEPT", "REJECT", "REVIEW"]) })).default([]),
  antifraud_provider: opt("SandgateRisk"),
  notify_url: opt(),
  return_url: opt(),
  page_id: opt(),
  recurring_id: opt(),
  captured_amount: opt("0.00"),
  refunded_amount: opt("0.00"),
  created_at: iso,
  updated_at: iso,
}) satisfies z.ZodType<Transaction>;

/** A stored subscription. */
export const subscription = z.object({
  recurring_id: str,
  merchant_id: str,
  account_id: str,
  order_no: str,
  transaction_id: str,
  token_id: opt(),
  contract: opt(),
  contract_name: opt(),
  contract_amount: amount,
  currency: str,
  interval: z.enum(["day", "week", "month", "year"]),
  interval_count: z.number().int().positive(),
  billing_cycle: z.number().int().nonnegative(),
  promotion_cycle: z.number().int().nonnegative(),
  contract_start: opt(),
  contract_end: opt(),
  price_id: opt(),
  state: z.enum(["cancelled", "active", "finished", "suspended"]),
  deductions: z.number().int().nonnegative(),
  next_deduction_at: iso,
  created_at: iso,
}) satisfies z.ZodType<Subscription>;

/** A stored refund. */
export const refund = z.object({
  refund_reference_id: str,
  refund_reference: opt(),
  transaction_id: str,
  merchant_id: str,
  account_id: str,
  order_no: str,
  currency: str,
  amount,
  refund_amount: amount,
  refund_reason: opt(),
  state: z.enum(["accepted", "processed", "failed"]),
  refund_date: iso,
  refund_processing_date: z.string().default(""),
  due_at: z.string().default(""),
  fate: z.enum(["processed", "failed"]).default("processed"),
}) satisfies z.ZodType<Refund>;

export interface Fixtures {
  merchants: Merchant[];
  tokens: FixtureToken[];
  transactions: Transaction[];
  subscriptions: Subscription[];
  refunds: Refund[];
  payouts: Payout[];
}

const FILES = {
  merchants: z.array(merchant),
  tokens: z.array(token),
  transactions: z.array(transaction),
  subscriptions: z.array(subscription),
  refunds: z.array(refund),
  payouts: z.array(payoutRecord),
} as const;

class FixtureError extends Error {
  override name = "FixtureError";
}

/** Reads one fixture file and checks it against its schema; a problem names the file and the path. */
export function readFixtureFile<T extends z.ZodType>(file: string, schema: T): z.output<T> {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, "utf8"));
  } catch (err) {
    throw new FixtureError(`${file}: not valid JSON (${(err as Error).message})`);
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new FixtureError(`${file}: at ${issue.path.join(".") || "(root)"}: ${issue.message}`);
  }
  return parsed.data;
}

/** Loads every fixture file of the folder; a missing optional file is an empty list. */
export function loadFixtures(dir: string): Fixtures {
  const out: Record<string, unknown> = {};
  for (const [name, schema] of Object.entries(FILES)) {
    const file = resolve(dir, `${name}.json`);
    if (!existsSync(file)) {
      if (name === "merchants") throw new FixtureError(`${file}: missing (fixtures need at least merchants.json)`);
      out[name] = [];
      continue;
    }
    out[name] = readFixtureFile(file, schema);
  }
  return out as unknown as Fixtures;
}
