// The hidden inputs of the interface document's redirect (iFrame) page (the interface document's operation 3, note 3): the fixed
// inputs of the payment channel, every request field under its own name, the alias names the
// hosted checkout reads, and `allParams`, one query string of all of them.
import { type Body } from "../http/body.js";
import { text } from "../domain/field-text.js";
import type { Account } from "../domain/types.js";

/** A hidden input: name and value, in page order. */
export type HiddenInput = [name: string, value: string];

/** The request as sent, field by field; objects and arrays as JSON strings. */
export function requestFields(body: Body): Map<string, string> {
  return new Map(Object.entries(body).map(([name, value]) => [name, text(value)]));
}

/** The method the checkout opens with: the request's payment_method, else card. */
const method = (request: Map<string, string>) => request.get("payment_method") || "card";

/**
 * The interface document's fixed inputs: the gateway's settings of the account's payment channel.
 * Values come from the account (fixtures/merchants.json) or are the defaults documented here.
 */
const FIXED: Record<string, (account: Account, request: Map<string, string>) => string> = {
  gbc_id: (a) => a.gateway_account,
  connector_code: (a) => a.connector_code,
  account_name: (a) => a.account_name,
  /** the interface document's "the service": the merchant site, under either name */
  website: (_a, r) => r.get("website") || r.get("the service") || "",
  pm_id: (_a, r) => method(r),
  /** empty for cards; the alternative method otherwise */
  apm_type: (_a, r) => (method(r) === "card" ? "" : method(r)),
  descriptor: (a) => a.descriptor,
  /** no prefix is added to the merchant's order_no */
  orderprefix: () => "",
  /** Sandgate's clock is UTC */
  rrtimezone: () => "0",
  /** the longest order_no accepted (payment-schema.ts) */
  ordernumlength: () => "64",
  /** items are sent on to the bank (goodsInfo) */
  sendbgoods: () => "1",
  replacename: () => "0",
  send_bank_website: () => "1",
  replace_up_id: () => "0",
  replace_match_address: () => "0",
  /** "0": the payer sees the hosted checkout page instead of being passed through it */
  to_pass_page: () => "0",
};

/**
 * The interface document's alias names and the field each mirrors (looked up among the fixed inputs and the
 * request fields). null: nothing in the request carries it before the payer pays; sent empty.
 */
const ALIASES: Record<string, string | null> = {
  signInfo: "encryption_data",
  APMType: "apm_type",
  taxTotal: "tax_total",
  merNo: "merchant_id",
  source_request_ip: "shopper_ip",
  default_lang: "browser_lang",
  defaultLang: "browser_lang",
  orderNo: "order_no",
  orderCurrency: "currency",
  orderAmount: "amount",
  itemTotal: "item_total",
  shipFee: "shipping",
  shippingDiscount: "shipping_discount",
  goodsInfo: "items",
  remark: "note",
  firstName: "first_name",
  lastName: "last_name",
  email: "shopper_email",
  phone: "shopper_phone",
  country: "billing_country",
  state: "billing_state",
  city: "billing_city",
  zip: "billing_postal_code",
  address: "billing_address",
  shipFirstName: "delivery_firstname",
  shipLastName: "delivery_lastname",
  shipCountry: "delivery_country",
  shipState: "delivery_state",
  shipCity: "delivery_city",
  shipZip: "delivery_postal_code",
  shipAddress: "delivery_address",
  shopperId: "shopper_id",
  shopperLevel: "shopper_level",
  token: "token_id",
  /** the card type is known once the payer enters a card at the hosted checkout */
  cardType: null,
  card_type: null,
  paymentToken: "token_id",
  notifyUrl: "notify_url",
  source_notify_url: "notify_url",
  return_url: "return_url",
  returnUrl: "return_url",
  /** the request has no cancel address: a payer who cancels goes back to return_url */
  cancel_url: "return_url",
  cancelUrl: "return_url",
  verifyBillingAddress: null,
  verify_billing_address: null,
  merSendLogoNo: null,
  logo_name: "account_name",
  /** the gateway account of the payment channel (account_id in the page) */
  gatewayNo: "account_id",
  isOpen3D: "open3d",
  payment_method: "pm_id",
};

/** color_depth in the page is always a number of bits: the request's, else 24. */
const colorDepth = (value: string | undefined) => (value && /^\d+$/.test(value) ? String(Number(value)) : "24");

/**
 * Every hidden input of the page, one per name. Precedence: the gateway's values (fixed inputs,
 * account_id, color_depth) over the request's, and a field the merchant sent under an alias name
 * over the alias.
 */
export function checkoutInputs(request: Map<string, string>, account: Account): HiddenInput[] {
  const inputs = new Map<string, string>();
  for (const [name, value] of Object.entries(FIXED)) inputs.set(name, value(account, request));
  for (const [name, value] of request) if (!inputs.has(name)) inputs.set(name, value);
  inputs.set("account_id", account.gateway_account);
  inputs.set("color_depth", colorDepth(request.get("color_depth")));
  for (const [alias, source] of Object.entries(ALIASES)) {
    if (!inputs.has(alias)) inputs.set(alias, source === null ? "" : (inputs.get(source) ?? ""));
  }
  inputs.delete("allParams");
  inputs.set("allParams", new URLSearchParams([...inputs]).toString());
  return [...inputs];
}
