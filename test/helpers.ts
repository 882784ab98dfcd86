// Shared test helpers: a fresh in-memory app per test, signatures, request builders, XML parsing.
import { createHash } from "node:crypto";
import request from "supertest";
import { convert, create } from "xmlbuilder2";
import type { App } from "../src/server/app.js";
import { createApp } from "../src/server/app.js";
import type { Deps } from "../src/deps/deps.js";
import type { Notification, Transaction } from "../src/domain/types.js";
import { REPLICA_MODE, replicaApp } from "./replica-helpers.js";
import { createDeps, type SandboxOptions } from "../src/server/sandbox.js";
import { signatureFields } from "../src/domain/signature.js";
import type { SignedOperation } from "../src/domain/gateway-operations.js";
import { createClock, type Clock } from "../src/domain/clock.js";

/**
 * A fresh app over in-memory state built from the bundled fixtures. Logs are silent. In the
 * replicas project: two Sandgate processes on a fresh prefix of one Redis, each request sent to
 * the next one in turn; their deps are in those processes (a test that reads them skips there).
 */
export async function makeApp(options: SandboxOptions = {}): Promise<{ app: App; deps: Deps }> {
  if (REPLICA_MODE) {
    const { app } = await replicaApp({ seed: "test-seed", ...options });
    const elsewhere = new Proxy({} as Deps, {
      get: () => {
        throw new Error("deps live in the replica processes: give this test skipIf(REPLICA_MODE)");
      },
    });
    return { app: app as unknown as App, deps: elsewhere };
  }
  const deps = await createDeps({ logLevel: "silent", seed: "test-seed", ...options });
  return { app: createApp(deps), deps };
}

/**
 * A sandbox clock that stands at the moment it is made (advanced only by an operator call): for a
 * test comparing the state around a request, in which nothing may fall due by itself meanwhile (a
 * refund made 5 s earlier would, and the next request applies it first, refused or not).
 */
export function standingClock(): Clock {
  const at = Date.now();
  return createClock(() => at);
}

/** Any well-formed encryption_data: lenient mode accepts it. */
export const ANY_SIGNATURE = "a".repeat(64);

/** The real scheme: sha256 of the listed fields' values, then the key. */
export function signRequest(op: SignedOperation, body: Record<string, unknown>, key: string): string {
  const values = signatureFields[op].request.map((f) => (body[f] === undefined ? "" : String(body[f]))).join("");
  return createHash("sha256")
    .update(values + key)
    .digest("hex");
}

export function signResponseFields(op: SignedOperation, body: Record<string, unknown>, key: string): string {
  const values = signatureFields[op].response.map((f) => (body[f] === undefined ? "" : String(body[f]))).join("");
  return createHash("sha256")
    .update(values + key)
    .digest("hex");
}

/** Fixture merchant M10001 (key acme_test_key_7f3a9c21), manual-capture account A10001. */
export const ACME = { merchant_id: "M10001", account_id: "A10001", key: "acme_test_key_7f3a9c21" } as const;

let orderCounter = 0;
export const nextOrderNo = (prefix = "T") => `${prefix}-${++orderCounter}-${Date.now().toString(36)}`;

/** A valid direct card payment for M10001/A10001; override any field. */
export function directPayment(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    merchant_id: ACME.merchant_id,
    account_id: ACME.account_id,
    order_no: nextOrderNo("ORD"),
    currency: "USD",
    amount: "10.00",
    card: "4242424242424242",
    expiration_month: "12",
    expiration_year: "2030",
    security_code: "123",
    first_name: "Jane",
    last_name: "Doe",
    shopper_email: "jane@example.com",
    encryption_data: ANY_SIGNATURE,
    ...overrides,
  };
}

/** A valid APM payment for M10001/A10002. */
export function apmPayment(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    merchant_id: ACME.merchant_id,
    account_id: "A10002",
    order_no: nextOrderNo("APM"),
    currency: "BRL",
    amount: "25.00",
    payment_method: "pix",
    return_url: "https://shop.example.com/return",
    encryption_data: ANY_SIGNATURE,
    ...overrides,
  };
}

export type XmlObject = { [name: string]: string | XmlObject | (string | XmlObject)[] };

/** Parses `<respon>...</respon>` into a plain object; repeated elements become arrays. */
export function parseXml(xml: string): XmlObject {
  const doc = convert(xml, { format: "object" }) as unknown as XmlObject;
  return doc.respon as XmlObject;
}

/** Names of the direct children of the root element, in document order. */
export function childNames(xml: string): string[] {
  const body = xml.replace(/^<\?xml[^>]*>\s*/, "").replace(/^<respon>|<\/respon>\s*$/g, "");
  const names: string[] = [];
  let depth = 0;
  for (const m of body.matchAll(/<(\/?)([A-Za-z_][\w.-]*)[^>]*?(\/?)>/g)) {
    const [, closing, name, selfClosing] = m;
    if (closing) depth--;
    else {
      if (depth === 0) names.push(name!);
      if (!selfClosing) depth++;
    }
  }
  return names;
}

/** POST /v1/authorise through supertest. */
export const postAuthorise = (app: Parameters<typeof request>[0], body: Record<string, unknown>) => request(app).post("/v1/authorise").send(body);

/**
 * The text of an element of parseXml's result; empty elements parse as {}. xmlbuilder2's object
 * form re-escapes "<", ">" and some "&": for values with markup characters use rootText.
 */
export function textOf(value: XmlObject[string] | undefined): string {
  if (value === undefined) return "";
  if (typeof value === "string") return value;
  if (Array.isArray(value)) throw new Error("element is repeated");
  if (Object.keys(value).length === 0) return "";
  throw new Error(`element has children: ${JSON.stringify(value)}`);
}

/** The <field> of every <errors><error> of a refusal, in document order. */
export function errorFields(xml: string): string[] {
  const errors = parseXml(xml).errors;
  if (errors === undefined || typeof errors === "string" || Array.isArray(errors)) return [];
  const list = errors.error;
  const items = list === undefined ? [] : Array.isArray(list) ? list : [list];
  return items.map((e) => (typeof e === "string" ? "" : textOf(e.field)));
}

/** A deep copy of the whole runtime state, to prove a refused request changed nothing. */
export const snapshotState = (deps: { store: { data: unknown } }) => structuredClone(deps.store.data);

/** The fields the interface document's payment request, direct and APM forms, share; every one filled. */
function seedCommonFields(): Record<string, unknown> {
  return {
    merchant_id: ACME.merchant_id,
    account_id: ACME.account_id,
    order_no: nextOrderNo("FULL"),
    currency: "USD",
    amount: "25.00",
    item_total: "20.00",
    shipping: "5.00",
    handling: "1.00",
    tax_total: "2.00",
    insurance: "0.50",
    shipping_discount: "1.00",
    discount: "2.50",
    "the service": "shop.example.com",
    items: "Tent#,#T-1#,#10.00#,#1#;#Stove#,#S-2#,#5.00#,#2",
    note: "Leave at the door",
    shopper_id: "shopper-42",
    shopper_email: "jane@example.com",
    shopper_ip: "198.51.100.7",
    shopper_phone: "+15550100",
    shopper_level: "1",
    first_name: "Jane",
    last_name: "Doe",
    document: "123.456.789-09",
    birth_date: "01-02-1990",
    billing_country: "US",
    billing_state: "CA",
    billing_city: "San Francisco",
    billing_address: "1 Market St",
    billing_postal_code: "94105",
    os: "Windows",
    browser: "Firefox",
    browser_lang: "en-US",
    time_zone: "-8",
    resolution: "1920x1080",
    color_depth: "24",
    cookie_new: "a=1&b=2",
    cookie_old: "c=3",
    delivery_firstname: "Jane",
    delivery_lastname: "Doe",
    delivery_country: "US",
    delivery_state: "CA",
    delivery_city: "Oakland",
    delivery_address: "2 Broadway",
    delivery_postal_code: "94607",
    notify_url: "https://shop.example.com/notify",
    custom: "cart=77",
    device_fingerprint: "fp-0a1b2c",
    encryption_data: ANY_SIGNATURE,
    platform_source: "shopware",
    device_type: "PC",
  };
}

/** A direct payment carrying every field of the interface document's payment request (plus card expiry and CVV). */
export function fullPaymentRequest(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    ...seedCommonFields(),
    open3d: "do3DS",
    token_flag: "NO",
    token_id: "",
    card: "4242424242424242",
    expiration_month: "12",
    expiration_year: "2030",
    security_code: "123",
    challenge_window_size: "05",
    session_id: "sess-1",
    installments: "1",
    installments_id: "inst-1",
    secure_payment: "1",
    order_type: "WEB",
    checkout_time: 1767225600,
    user_agent: "Mozilla/5.0",
    antifraud_token_cookie: "af-cookie-1",
    cart_items: [
      {
        basic_item_data: {
          name: "Tent",
          quantity: "1",
          type: "physical",
          price: { amount_usd: 10, amount_local_currency: 10, currency: "USD" },
          category: "outdoor",
          productId: "T-1",
        },
      },
    ],
    account_owner: [
      {
        first_name: "Jane",
        last_name: "Doe",
        email: "jane@example.com",
        account_id: "acct-9",
        created: 1700000000,
        past_orders_count: 3,
        past_orders_sum: 120.5,
        lastLogin_ip: "198.51.100.7",
        registration_ip: "198.51.100.8",
      },
    ],
    total_discount: [{ coupon_code_used: "SPRING", discount_type: "percent" }],
    additional_information: [{ mpi_info: { eci: "05", cavv: "AAABBBCCC", xid: "xid-1", dsTransID: "ds-1" } }],
    price_id: "price-1",
    quote_id: "quote-1",
    quote_price: "25.00",
    accept: "1",
    storefront_domains: "shop.example.com",
    subscription: {
      contract: "C-1",
      contract_name: "Monthly box",
      contract_amount: "25.00",
      interval: "month",
      interval_count: "1",
      billing_cycle: 12,
      promotion_cycle: 0,
      contract_start: "2026-01-01",
      contract_end: "2027-01-01",
      price_id: "price-1",
    },
    ...overrides,
  };
}

/** An APM payment carrying every field of the interface document's APM request, the nested person included. */
export function fullApmRequest(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const bankAccount = () => ({
    account_type: "checking",
    account_number: "12345-6",
    branch_number: "0001",
    owner_document_number: "123.456.789-09",
    owner_name: "Jane Doe",
    branch_country: "BR",
    currency: "BRL",
    bank: { code: "341", name: "Banco Exemplo" },
  });
  return {
    ...seedCommonFields(),
    account_id: "A10002",
    currency: "BRL",
    payment_method: "pix",
    delivery_district_name: "Centro",
    delivery_street_name: "Rua Um",
    return_url: "https://shop.example.com/return",
    bank_code: "341",
    person: {
      document_number: "123.456.789-09",
      document_type: "CPF",
      social_name: "Jane Doe",
      email: "jane@example.com",
      phone_country_code: "BR",
      phone_area_code: "11",
      phone_number: "912345678",
      birth_date: "1990-02-01",
      net_monthly_average_income: "5000.00",
      address_street: "Rua Um",
      address_number: "10",
      address_complement: "apto 1",
      address_postal_code: "01000-000",
      address_city: "São Paulo",
      address_state: "SP",
      address_country: "BR",
      fiscal_country: "BR",
      documents: {
        file_type: "pdf",
        file_data: "JVBERi0=",
        file_url: "https://shop.example.com/doc.pdf",
        labels: { person_bank_account_id: "pba-1", bank_account: bankAccount() },
      },
      bank_account: bankAccount(),
    },
    ...overrides,
  };
}

/** The exact text (entities decoded, as an XML client reads it) of the first root child named `name`. */
export function rootText(xml: string, name: string): string | undefined {
  const root = create(xml).root();
  for (const child of root.node.childNodes) {
    if (child.nodeName === name) return child.textContent ?? "";
  }
  return undefined;
}

/** The stored transactions the operator API lists for these filters (merchant_id, order_no): what any replica holds. */
export async function storedTransactions(app: App, query: Record<string, string> = {}): Promise<Transaction[]> {
  const res = await request(app).get("/__sandbox/transactions").query(query);
  return (res.body as { transactions: Transaction[] }).transactions;
}

/** The notification outbox as the operator API lists it (merchant_id, event, state filters). */
export async function storedNotifications(app: App, query: Record<string, string> = {}): Promise<Notification[]> {
  const res = await request(app).get("/__sandbox/notifications").query(query);
  return (res.body as { notifications: Notification[] }).notifications;
}

/** A browser's dashboard session: the form token cookie and the token every dashboard form carries (from the page at `path`). */
export async function formSession(app: App, path = "/__sandbox/"): Promise<{ cookie: string; token: string }> {
  const page = await request(app).get(path);
  const cookie = (page.headers["set-cookie"] as unknown as string[] | undefined)?.find((c) => c.startsWith("sandgate_form="))?.split(";")[0];
  const token = /name="_form" value="([0-9a-f]+)"/.exec(page.text)?.[1];
  if (!cookie || !token) throw new Error(`no form token on ${path}`);
  return { cookie, token };
}
