// The shape of a stored payout, checked when fixtures or a --data file bring payouts in.
import { z } from "zod";
import {
  BANK_DETAILS,
  BENEFICIARY_ADDITIONAL_INFO,
  BENEFICIARY_ADDRESS,
  BENEFICIARY_TEXT,
  PAYER_ADDITIONAL_INFO,
  PAYER_ADDRESS,
  PAYER_TEXT,
  PERSON_DOCUMENT,
  TOP_AFTER_PAYER,
  TOP_BEFORE_BENEFICIARY,
  TOP_BEFORE_PAYER,
} from "../domain/payout-fields.js";
import type { Payout } from "../domain/types.js";

/** Text fields that default to "" when a stored record lacks them. */
const texts = <K extends string>(names: readonly K[]) =>
  Object.fromEntries(names.map((n) => [n, z.string().default("")])) as Record<K, z.ZodDefault<z.ZodString>>;

const beneficiary = z.object({
  ...texts(BENEFICIARY_TEXT),
  additional_info: z.object(texts(BENEFICIARY_ADDITIONAL_INFO)),
  address: z.object(texts(BENEFICIARY_ADDRESS)),
  person_documents: z.array(z.object({ ...texts(PERSON_DOCUMENT), labels: z.array(z.string()).default([]) })).default([]),
  bank_details: z.object(texts(BANK_DETAILS)),
});

const payer = z.object({ ...texts(PAYER_TEXT), additional_info: z.object(texts(PAYER_ADDITIONAL_INFO)), address: z.object(texts(PAYER_ADDRESS)) });

const iso = z.string().refine((s) => !Number.isNaN(Date.parse(s)), "an ISO 8601 date-time");

export const payoutRecord = z.object({
  transaction_id: z.string().min(1),
  merchant_id: z.string().min(1),
  account_id: z.string().min(1),
  request_id: z.string().min(1),
  request: z.object({ ...texts(TOP_BEFORE_BENEFICIARY), ...texts(TOP_BEFORE_PAYER), ...texts(TOP_AFTER_PAYER), beneficiary, payer }),
  amount_beneficiary_receives: z.number(),
  amount_payer_pays: z.number(),
  fee_amount: z.number(),
  fee_currency: z.string(),
  payer_id: z.string(),
  short_reference_id: z.string(),
  local_clearing_system: z.string().default(""),
  status: z.enum(["PENDING", "COMPLETED", "FAILED"]),
  failure_type: z.string().default(""),
  failure_reason: z.string().default(""),
  due_at: z.string().default(""),
  next_status: z.enum(["", "COMPLETED", "FAILED"]).default(""),
  next_failure_type: z.string().default(""),
  next_failure_reason: z.string().default(""),
  rule: z.string().default(""),
  notify: z.object({ delay_seconds: z.number().optional(), duplicate: z.number().optional(), drop: z.boolean().optional() }).optional(),
  created_at: iso,
  last_updated_at: iso,
}) satisfies z.ZodType<Payout>;
