// The payment request of the interface document (direct, redirect and APM forms), field by field.
// Required fields are the ones without which no gateway could act; everything else is optional
// but, when present, must have the interface document's type and format.
import { z } from "zod";
import {
  country,
  currency,
  decimal,
  email,
  int,
  json,
  list,
  num,
  obj,
  optionalId,
  pattern,
  required,
  requiredCurrency,
  requiredId,
  requiredPositiveAmount,
  str,
  url,
} from "../http/fields.js";

const ITEM_SEPARATOR = "#;#";
const VALUE_SEPARATOR = "#,#";

/** `items`: name#,#code#,#unit price#,#quantity, items joined by #;# */
const items = () =>
  str().refine(
    (s) =>
      !s ||
      s.split(ITEM_SEPARATOR).every((item) => {
        const parts = item.split(VALUE_SEPARATOR);
        return parts.length === 4 && /^\d+(\.\d{1,2})?$/.test(parts[2]!) && /^\d+$/.test(parts[3]!);
      }),
    `must be items separated by ${ITEM_SEPARATOR}, each "name${VALUE_SEPARATOR}code${VALUE_SEPARATOR}unit price${VALUE_SEPARATOR}quantity"`,
  );

const cartItem = obj({
  basic_item_data: obj({
    name: str(),
    quantity: str(),
    type: str(),
    price: obj({ amount_usd: num(), amount_local_currency: num(), currency: currency() }).optional(),
    category: str(),
    productId: str(),
  }).optional(),
});

const accountOwner = obj({
  first_name: str(),
  last_name: str(),
  email: str(),
  account_id: str(),
  created: num(),
  past_orders_count: num(),
  past_orders_sum: num(),
  lastLogin_ip: str(),
  registration_ip: str(),
});

const subscription = obj({
  contract: str(),
  contract_name: str(),
  contract_amount: decimal(),
  interval: pattern(/^(day|week|month|year)$/, "must be day, week, month or year"),
  interval_count: pattern(/^[1-9]\d{0,3}$/, "must be a positive whole number"),
  billing_cycle: int().refine((n) => n === undefined || n >= 0, "must be 0 (no limit) or more"),
  promotion_cycle: int().refine((n) => n === undefined || n >= 0, "must be 0 or more"),
  contract_start: pattern(/^\d{4}-\d{2}-\d{2}/, "must be a date YYYY-MM-DD"),
  contract_end: pattern(/^\d{4}-\d{2}-\d{2}/, "must be a date YYYY-MM-DD"),
  price_id: str(),
});

/** Fields the direct, redirect and APM forms share. */
const common = {
  merchant_id: requiredId(),
  account_id: requiredId(),
  order_no: requiredId(),
  currency: requiredCurrency(),
  amount: requiredPositiveAmount(),
  item_total: decimal(),
  shipping: decimal(),
  handling: decimal(),
  tax_total: decimal(),
  insurance: decimal(),
  shipping_discount: decimal(),
  discount: decimal(),
  website: str(),
  "the service": str(),
  items: items(),
  note: str(),
  shopper_id: str(),
  shopper_email: email(),
  shopper_ip: str(),
  shopper_phone: str(),
  shopper_level: str(),
  first_name: str(),
  last_name: str(),
  document: str(),
  birth_date: pattern(/^\d{2}-\d{2}-\d{4}$/, "must be DD-MM-YYYY"),
  billing_country: country(),
  billing_state: str(),
  billing_city: str(),
  billing_address: str(),
  billing_postal_code: str(),
  os: str(),
  browser: str(),
  browser_lang: str(),
  time_zone: pattern(/^[+-]?\d{1,2}(\.\d{1,2})?$/, "must be a numeric offset such as -3 or +5.5"),
  resolution: str(),
  color_depth: pattern(/^\d{1,3}$/, "must be a number of bits such as 24"),
  cookie_new: str(),
  cookie_old: str(),
  delivery_firstname: str(),
  delivery_lastname: str(),
  delivery_country: country(),
  delivery_state: str(),
  delivery_city: str(),
  delivery_address: str(),
  delivery_postal_code: str(),
  notify_url: url(),
  return_url: url(),
  custom: str(),
  device_fingerprint: str(),
  encryption_data: str(),
  platform_source: str(),
  device_type: str(),
};

/** Direct payment (card or token) and redirect payment. */
export const paymentRequest = obj({
  ...common,
  open3d: str(),
  token_flag: str(),
  token_id: optionalId(),
  card: str(),
  expiration_month: pattern(/^(0?[1-9]|1[0-2])$/, "must be a month 01-12"),
  expiration_year: pattern(/^(\d{2}|\d{4})$/, "must be a year such as 2030"),
  security_code: pattern(/^\d{3,4}$/, "must be 3 or 4 digits"),
  challenge_window_size: pattern(/^\d{2}$/, "must be a two-digit window code such as 05"),
  session_id: str(),
  installments: str(),
  installments_id: str(),
  secure_payment: str(),
  order_type: str(),
  checkout_time: int(),
  user_agent: str(),
  antifraud_token_cookie: str(),
  cart_items: json(list(cartItem)),
  account_owner: json(list(accountOwner)),
  total_discount: json(list(obj({ coupon_code_used: str(), discount_type: str() }))),
  additional_information: json(list(obj({ mpi_info: obj({ eci: str(), cavv: str(), xid: str(), dsTransID: str() }).optional() }))),
  price_id: str(),
  quote_id: str(),
  quote_price: str(),
  accept: str(),
  storefront_domains: str(),
  subscription: json(subscription),
});

export type PaymentRequest = z.output<typeof paymentRequest>;

const bankAccount = obj({
  account_type: str(),
  account_number: str(),
  branch_number: str(),
  owner_document_number: str(),
  owner_name: str(),
  branch_country: country(),
  currency: currency(),
  bank: obj({ code: str(), name: str() }).optional(),
});

const person = obj({
  document_number: str(),
  document_type: str(),
  social_name: str(),
  email: email(),
  phone_country_code: country(),
  phone_area_code: str(),
  phone_number: str(),
  birth_date: str(),
  net_monthly_average_income: str(),
  address_street: str(),
  address_number: str(),
  address_complement: str(),
  address_postal_code: str(),
  address_city: str(),
  address_state: str(),
  address_country: country(),
  fiscal_country: country(),
  documents: obj({
    file_type: str(),
    file_data: str(),
    file_url: str(),
    // the interface document nests bank_account under documents.labels; it is accepted there and on person
    labels: obj({ person_bank_account_id: str(), bank_account: bankAccount.optional() }).optional(),
  }).optional(),
  bank_account: bankAccount.optional(),
});

/** APM payment: same path as the direct payment, told apart by payment_method without card/token. */
export const apmRequest = obj({
  ...common,
  payment_method: required(),
  delivery_district_name: str(),
  delivery_street_name: str(),
  bank_code: str(),
  person: json(person),
});
