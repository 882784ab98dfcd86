// The interface document's payout request, field by field, in the interface document's order: the one list of names that the
// request schema, the stored request and the response echo are built from.

export const BENEFICIARY_ADDITIONAL_INFO = [
  "business_area",
  "business_phone_number",
  "business_registration_number",
  "personal_email",
  "personal_id_number",
  "personal_id_type",
  "personal_mobile_number",
  "personal_net_monthly_average_income",
  "personal_phone_country_code",
  "personal_phone_area_code",
  "personal_fiscal_country",
] as const;

export const BENEFICIARY_ADDRESS = ["city", "country_code", "postcode", "state", "street", "number", "street_address", "complement"] as const;

/** person_documents[] text fields; `labels` (a list of strings) comes after them. */
export const PERSON_DOCUMENT = ["file_type", "file_url"] as const;

export const BANK_DETAILS = [
  "account_currency",
  "account_name",
  "owner_document_number",
  "account_number",
  "bank_account_category",
  "bank_branch",
  "bank_country_code",
  "bank_code",
  "bank_name",
  "bank_street_address",
  "binding_mobile_number",
  "iban",
  "swift_code",
  "transaction_reference",
] as const;

/** The interface document: "every request field is echoed except that bank_code is absent from bank_details". */
export const BANK_DETAILS_NOT_ECHOED = "bank_code";

export const BENEFICIARY_TEXT = ["company_name", "date_of_birth", "first_name", "last_name", "entity_type"] as const;

export const PAYER_ADDITIONAL_INFO = [
  "business_registration_number",
  "business_registration_type",
  "external_id",
  "personal_email",
  "personal_id_number",
  "job",
] as const;

export const PAYER_ADDRESS = ["city", "country_code", "postcode", "state", "street_address"] as const;

export const PAYER_TEXT = ["company_name", "date_of_birth", "entity_type", "first_name", "last_name"] as const;

/** Top-level text fields before `payer`, and after it (beneficiary comes between account_id and beneficiary_id). */
export const TOP_BEFORE_BENEFICIARY = ["merchant_id", "account_id"] as const;
export const TOP_BEFORE_PAYER = ["beneficiary_id", "client_data", "fee_paid_by"] as const;
export const TOP_AFTER_PAYER = [
  "payment_amount",
  "payment_currency",
  "payment_date",
  "payment_method",
  "reason",
  "reference",
  "request_id",
  "source_amount",
  "source_currency",
  "swift_charge_option",
  "fund_source",
  "notify_url",
] as const;

type Texts<K extends readonly string[]> = { [P in K[number]]: string };

interface PersonDocument extends Texts<typeof PERSON_DOCUMENT> {
  labels: string[];
}

interface BeneficiaryFields extends Texts<typeof BENEFICIARY_TEXT> {
  additional_info: Texts<typeof BENEFICIARY_ADDITIONAL_INFO>;
  address: Texts<typeof BENEFICIARY_ADDRESS>;
  person_documents: PersonDocument[];
  bank_details: Texts<typeof BANK_DETAILS>;
}

interface PayerFields extends Texts<typeof PAYER_TEXT> {
  additional_info: Texts<typeof PAYER_ADDITIONAL_INFO>;
  address: Texts<typeof PAYER_ADDRESS>;
}

/**
 * A payout request as Sandgate keeps it: every field of the interface document present, values as text ("" when not
 * sent), `encryption_data` left out (it is a signature, not part of the payout).
 */
export interface PayoutFields extends Texts<typeof TOP_BEFORE_BENEFICIARY>, Texts<typeof TOP_BEFORE_PAYER>, Texts<typeof TOP_AFTER_PAYER> {
  beneficiary: BeneficiaryFields;
  payer: PayerFields;
}

/** Dotted paths of every text value (person_documents as `beneficiary.person_documents[0].file_type`). */
export function flattenFields(value: unknown, prefix = ""): Record<string, string> {
  if (Array.isArray(value)) {
    const out: Record<string, string> = {};
    value.forEach((v, i) => Object.assign(out, flattenFields(v, `${prefix}[${i}]`)));
    return out;
  }
  if (value !== null && typeof value === "object") {
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(value)) Object.assign(out, flattenFields(v, prefix ? `${prefix}.${k}` : k));
    return out;
  }
  return { [prefix]: String(value) };
}
