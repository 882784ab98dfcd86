// Shared test helpers: a fresh in-memory app per test, signatures, request builders, XML parsing.
import { createHash } from "node:crypto";
import { convert } from "xmlbuilder2";
import { createApp } from "../src/app.js";
import { createDeps, type SandboxOptions } from "../src/sandbox.js";
import { signatureFields, type SignedOperation } from "../src/signature/signature.js";

/** A fresh app over in-memory state built from the bundled fixtures. Logs are silent. */
export async function makeApp(options: SandboxOptions = {}) {
  const deps = await createDeps({ logLevel: "silent", seed: "test-seed", ...options });
  return { app: createApp(deps), deps };
}

/** Any well-formed encryption_data: lenient mode accepts it. */
export const ANY_SIGNATURE = "a".repeat(64);

/** The real scheme: sha256 of the listed fields' values, then the key. */
export function signRequest(op: SignedOperation, body: Record<string, unknown>, key: string): string {
  const values = signatureFields[op].request.map((f) => (body[f] === undefined ? "" : String(body[f]))).join("");
  return createHash("sha256").update(values + key).digest("hex");
}

export function signResponseFields(op: SignedOperation, body: Record<string, unknown>, key: string): string {
  const values = signatureFields[op].response.map((f) => (body[f] === undefined ? "" : String(body[f]))).join("");
  return createHash("sha256").update(values + key).digest("hex");
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
