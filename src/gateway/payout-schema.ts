// The payout request of the interface document, field by field. Every field is type- and format-checked when
// sent; the fields without which no payout can be made are required (README "POST /v1/payout"):
//   request_id (UUID), payment_currency, payment_method, payment_amount or
//   source_amount (both: payment_amount decides), beneficiary with bank_details.account_number or .iban, and the beneficiary's
//   name (company_name for COMPANY, first_name + last_name for PERSONAL, either when not said).
import { z } from "zod";
import type { FieldProblem } from "../domain/codes.js";
import type { FeePaidBy, PayoutPricing } from "../domain/payout-rules.js";
import * as layout from "../domain/payout-fields.js";
import { type PayoutFields } from "../domain/payout-fields.js";
import type { Body } from "../http/body.js";
import {
  CURRENCY,
  country,
  currency,
  email,
  json,
  list,
  obj,
  pattern,
  positiveAmount,
  required,
  requiredCurrency,
  requiredMatching,
  str,
  url,
} from "../http/fields.js";
import { text } from "../domain/field-text.js";

const FEE_PAID_BY = ["PAYER", "BENEFICIARY"] as const satisfies readonly FeePaidBy[];
const ENTITY_TYPES = ["COMPANY", "PERSONAL"] as const;
/** SWIFT charge bearer (MT103 field 71A in words): shared, all by the payer (OURS), all by the beneficiary (BEN). */
const SWIFT_CHARGE_OPTIONS = ["SHARED", "OURS", "BEN"] as const;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Optional text fields, one per name. */
const texts = <K extends string>(names: readonly K[]) => Object.fromEntries(names.map((n) => [n, str()])) as Record<K, ReturnType<typeof str>>;

const oneOf = (values: readonly string[]) => pattern(new RegExp(`^(${values.join("|")})$`), `must be one of ${values.join(", ")}`);

function isCalendarDate(s: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s);
  if (!m) return false;
  const d = new Date(Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!));
  return d.getUTCFullYear() === +m[1]! && d.getUTCMonth() === +m[2]! - 1 && d.getUTCDate() === +m[3]!;
}
/** An optional text field that, when sent, passes one check (one message per field). */
const checked = (check: (s: string) => boolean, message: string) => str().refine((s) => !s || check(s), message);
const date = () => checked(isCalendarDate, "must be a date YYYY-MM-DD");
const amount = positiveAmount;

const beneficiary = obj({
  additional_info: json(obj({ ...texts(layout.BENEFICIARY_ADDITIONAL_INFO), personal_email: email() })),
  address: json(obj({ ...texts(layout.BENEFICIARY_ADDRESS), country_code: country() })),
  person_documents: json(list(obj({ ...texts(layout.PERSON_DOCUMENT), file_url: url(), labels: json(list(str())) }))),
  bank_details: json(
    obj({
      ...texts(layout.BANK_DETAILS),
      account_currency: currency(),
      bank_country_code: country(),
      iban: pattern(/^[A-Za-z]{2}\d{2}[A-Za-z0-9]{11,30}$/, "must be an IBAN: country code, 2 check digits, 11 to 30 letters or digits, no spaces"),
      swift_code: pattern(/^[A-Za-z]{6}[A-Za-z0-9]{2}([A-Za-z0-9]{3})?$/, "must be a SWIFT/BIC code of 8 or 11 characters"),
    }),
  ),
  ...texts(layout.BENEFICIARY_TEXT),
  date_of_birth: date(),
  entity_type: oneOf(ENTITY_TYPES),
});

const payer = obj({
  additional_info: json(obj({ ...texts(layout.PAYER_ADDITIONAL_INFO), personal_email: email() })),
  address: json(obj({ ...texts(layout.PAYER_ADDRESS), country_code: country() })),
  ...texts(layout.PAYER_TEXT),
  date_of_birth: date(),
  entity_type: oneOf(ENTITY_TYPES),
});

export const payoutRequest = obj({
  ...texts(layout.TOP_BEFORE_BENEFICIARY),
  ...texts(layout.TOP_BEFORE_PAYER),
  ...texts(layout.TOP_AFTER_PAYER),
  merchant_id: required(),
  account_id: required(),
  beneficiary: json(beneficiary),
  fee_paid_by: oneOf(FEE_PAID_BY),
  payer: json(payer),
  payment_amount: amount(),
  payment_currency: requiredCurrency(),
  payment_date: date(),
  payment_method: required(),
  request_id: requiredMatching(UUID, "must be a UUID such as 3f1c2a9e-8b7d-4c6e-9a5b-1d2e3f4a5b6c"),
  source_amount: amount(),
  source_currency: currency(),
  swift_charge_option: oneOf(SWIFT_CHARGE_OPTIONS),
  notify_url: url(),
  encryption_data: str(),
});

export type PayoutRequest = z.output<typeof payoutRequest>;

/** A body value as an object, also when a form sent it as a JSON string; undefined otherwise. */
function asObject(value: unknown): Record<string, unknown> | undefined {
  let node = value;
  if (typeof node === "string" && node.trim().startsWith("{")) {
    try {
      node = JSON.parse(node) as unknown;
    } catch {
      return undefined;
    }
  }
  return node !== null && typeof node === "object" && !Array.isArray(node) ? (node as Record<string, unknown>) : undefined;
}

/** The body with objects sent as JSON strings (a form's `beneficiary={...}`) parsed, at any depth. */
export function withNestedObjects(body: Body): Body {
  const walk = (v: unknown): unknown => {
    const o = asObject(v);
    return o ? Object.fromEntries(Object.entries(o).map(([k, c]) => [k, walk(c)])) : v;
  };
  return walk(body) as Body;
}

/**
 * What the schema cannot say field by field: the amount (one of two), the beneficiary's account
 * and name, and the values the fee and FX table knows (payment_method, currencies).
 */
export function payoutProblems(body: Body, pricing: PayoutPricing): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const has = (v: unknown) => text(v).trim() !== "";
  if (!has(body.payment_amount) && !has(body.source_amount)) problems.push({ field: "payment_amount", message: "is required (or source_amount)" });

  const methods = Object.keys(pricing.fees);
  if (has(body.payment_method) && !methods.includes(text(body.payment_method))) {
    problems.push({ field: "payment_method", message: `must be one of ${methods.join(", ")}` });
  }
  const currencies = Object.keys(pricing.fx.rates);
  for (const field of ["payment_currency", "source_currency"] as const) {
    const code = text(body[field]);
    if (CURRENCY.test(code) && !currencies.includes(code.toUpperCase())) {
      problems.push({ field, message: `must be a currency of the FX table: ${currencies.join(", ")}` });
    }
  }

  if (body.beneficiary === undefined || body.beneficiary === null || body.beneficiary === "") {
    problems.push({ field: "beneficiary", message: "is required" });
    return problems;
  }
  const b = asObject(body.beneficiary);
  if (!b) return problems; // the schema says it must be an object
  const bank = asObject(b.bank_details ?? {});
  if (bank && !has(bank.account_number) && !has(bank.iban)) {
    problems.push({ field: "beneficiary.bank_details.account_number", message: "is required (or beneficiary.bank_details.iban)" });
  }
  const entity = text(b.entity_type);
  const named = (f: string) => has(b[f]);
  if (entity === "COMPANY" && !named("company_name")) problems.push({ field: "beneficiary.company_name", message: "is required when entity_type is COMPANY" });
  const person =
    entity === "PERSONAL"
      ? "is required when entity_type is PERSONAL"
      : entity === "COMPANY" || named("company_name")
        ? ""
        : "is required (or beneficiary.company_name)";
  if (person) {
    for (const f of ["first_name", "last_name"]) if (!named(f)) problems.push({ field: `beneficiary.${f}`, message: person });
  }
  return problems;
}

type Loose = Record<string, unknown> | undefined;

function fill<K extends string>(from: Loose, names: readonly K[]): Record<K, string> {
  const out = {} as Record<K, string>;
  for (const n of names) out[n] = text(from?.[n]);
  return out;
}

/** The validated request as Sandgate keeps it: every field of the interface document, as text, unknown fields dropped. */
export function payoutFields(r: PayoutRequest): PayoutFields {
  const b = r.beneficiary;
  const p = r.payer;
  return {
    ...fill(r, layout.TOP_BEFORE_BENEFICIARY),
    beneficiary: {
      additional_info: fill(b?.additional_info, layout.BENEFICIARY_ADDITIONAL_INFO),
      address: fill(b?.address, layout.BENEFICIARY_ADDRESS),
      person_documents: (b?.person_documents ?? []).map((d) => ({ ...fill(d, layout.PERSON_DOCUMENT), labels: (d.labels ?? []).map(text) })),
      bank_details: fill(b?.bank_details, layout.BANK_DETAILS),
      ...fill(b, layout.BENEFICIARY_TEXT),
    },
    ...fill(r, layout.TOP_BEFORE_PAYER),
    payer: {
      additional_info: fill(p?.additional_info, layout.PAYER_ADDITIONAL_INFO),
      address: fill(p?.address, layout.PAYER_ADDRESS),
      ...fill(p, layout.PAYER_TEXT),
    },
    ...fill(r, layout.TOP_AFTER_PAYER),
  };
}
