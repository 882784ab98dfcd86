// The shop's integration of the payment gateway: it signs every request, pays by card and by
// redirect (APM), captures and refunds, and checks the gateway's signatures on answers, on the
// payer's return and on notifications. Nothing here knows about Sandgate: point GATEWAY_URL at
// the real gateway and it works the same.
import { createHash, timingSafeEqual } from "node:crypto";
import { signedWith } from "./receiver.js";

export interface Merchant {
  merchantId: string;
  accountId: string;
  secretKey: string;
}

/** The fields each signature covers, in order, from the gateway's documentation. */
const SIGNED = {
  authoriseRequest: [
    "merchant_id",
    "account_id",
    "order_no",
    "currency",
    "amount",
    "first_name",
    "last_name",
    "card",
    "expiration_year",
    "expiration_month",
    "security_code",
    "shopper_email",
  ],
  authoriseResponse: ["merchant_id", "account_id", "order_no", "currency", "amount", "transaction_id", "order_status", "result_info"],
  batchRequest: ["merchant_id", "account_id"],
  batchResponse: ["merchant_id", "account_id", "return_status"],
} as const;

/** SHA-256 (lowercase hex) of the listed fields' values concatenated, then the secret key. */
export function sign(fields: readonly string[], values: Record<string, unknown>, secretKey: string): string {
  const text = fields.map((f) => (values[f] === undefined || values[f] === null ? "" : String(values[f]))).join("");
  return createHash("sha256")
    .update(text + secretKey)
    .digest("hex");
}

function verify(fields: readonly string[], values: Record<string, unknown>, secretKey: string): boolean {
  const got = String(values.encryption_data ?? "");
  const expected = sign(fields, values, secretKey);
  return got.length === expected.length && timingSafeEqual(Buffer.from(got), Buffer.from(expected));
}

/** The children of the gateway's <respon> answer (text elements only), as the shop reads them. */
export function readXml(xml: string): Record<string, string> {
  const out: Record<string, string> = {};
  const unescape = (t: string) => t.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");
  for (const m of xml.matchAll(/<([a-z_]+)>([^<]*)<\/\1>|<([a-z_]+)\/>/g)) {
    if (m[3]) out[m[3]] ??= "";
    else out[m[1]!] ??= unescape(m[2]!);
  }
  return out;
}

export class GatewayError extends Error {}

/** What the shop tells its payer for a declined card, by the gateway's result code (result_info "D0051:..."); never why a card was flagged. */
const DECLINED: Record<string, string> = {
  D0051: "There is not enough money on this card.",
  D0054: "This card has expired.",
  D0082: "The security code does not match: check the three digits on the back.",
  D0091: "Your bank did not answer in time: please try again.",
  D0301: "Your bank could not confirm it is you.",
};

/** The sentence the shop shows its payer after a card payment. */
export function payerMessage(payment: { status: string; resultInfo: string }): string {
  if (payment.status === "1") return "Thank you: your payment is approved.";
  if (payment.status === "-1") return "Confirm the payment with your bank.";
  if (payment.status === "-2") return "We are checking your payment and will email you shortly.";
  return DECLINED[payment.resultInfo.slice(0, 5)] ?? "Your bank declined the payment: try another card.";
}

export interface Order {
  transactionId: string;
  orderNo: string;
  currency: string;
  amount: string;
}

export function createGateway(baseUrl: string, merchant: Merchant) {
  const identity = { merchant_id: merchant.merchantId, account_id: merchant.accountId };

  async function authorise(fields: Record<string, string>): Promise<Record<string, string>> {
    const body = { ...identity, ...fields };
    const signed = { ...body, encryption_data: sign(SIGNED.authoriseRequest, body, merchant.secretKey) };
    const res = await fetch(`${baseUrl}/v1/authorise`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/xml" },
      body: new URLSearchParams(signed),
    });
    const answer = readXml(await res.text());
    if (!verify(SIGNED.authoriseResponse, answer, merchant.secretKey))
      throw new GatewayError(`the gateway's answer is not signed with our key (HTTP ${res.status})`);
    return answer;
  }

  async function batch(operation: "capture" | "refund", arrayField: string, orders: Record<string, string>[]) {
    const body = { ...identity, [arrayField]: orders };
    const res = await fetch(`${baseUrl}/v1/${operation}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ ...body, encryption_data: sign(SIGNED.batchRequest, body, merchant.secretKey) }),
    });
    const answer = (await res.json()) as Record<string, unknown>;
    if (!verify(SIGNED.batchResponse, answer, merchant.secretKey)) throw new GatewayError(`the gateway's ${operation} answer is not signed with our key`);
    return answer[arrayField] as Record<string, string>[];
  }

  const orderFields = (o: Order) => ({ transaction_id: o.transactionId, order_no: o.orderNo, currency: o.currency, amount: o.amount });

  return {
    /** A card payment; approved payments on a manual-capture account wait for capture(). */
    async payByCard(p: {
      orderNo: string;
      amount: string;
      currency: string;
      card: string;
      cvc: string;
      expiry: [string, string];
      email: string;
      notifyUrl?: string;
    }) {
      const answer = await authorise({
        order_no: p.orderNo,
        currency: p.currency,
        amount: p.amount,
        card: p.card,
        security_code: p.cvc,
        expiration_month: p.expiry[0],
        expiration_year: p.expiry[1],
        first_name: "Jane",
        last_name: "Doe",
        shopper_email: p.email,
        ...(p.notifyUrl ? { notify_url: p.notifyUrl } : {}),
      });
      return {
        status: answer.order_status!,
        approved: answer.order_status === "1",
        needsChallenge: answer.order_status === "-1",
        challengeUrl: answer.issuer_url ?? "",
        transactionId: answer.transaction_id!,
        resultInfo: answer.result_info!,
      };
    },

    /** An APM (redirect) payment: where to send the payer, and later their signed return. */
    async payByRedirect(p: { orderNo: string; amount: string; currency: string; method: string; returnUrl: string }) {
      const answer = await authorise({ order_no: p.orderNo, currency: p.currency, amount: p.amount, payment_method: p.method, return_url: p.returnUrl });
      return { redirectTo: answer.issuer_url!, transactionId: answer.transaction_id ?? "" };
    },

    /** The payer's return to return_url: trusted only when its signature is ours. */
    readReturn(returnUrl: string) {
      const params = Object.fromEntries(new URL(returnUrl).searchParams);
      if (!verify(SIGNED.authoriseResponse, params, merchant.secretKey)) throw new GatewayError("the payer's return is not signed with our key: ignore it");
      return { paid: params.order_status === "1", transactionId: params.transaction_id!, orderNo: params.order_no! };
    },

    async capture(order: Order) {
      const [result] = await batch("capture", "capture_orders", [orderFields(order)]);
      return { captured: result!.capture_status === "1", message: result!.error_message ?? "" };
    },

    async refund(order: Order, amount: string, reason: string) {
      const [result] = await batch("refund", "refund_orders", [{ ...orderFields(order), refund_amount: amount, refund_reason: reason }]);
      return { accepted: result!.refund_status === "1", reference: result!.refund_reference_id ?? "", message: result!.refund_message ?? "" };
    },

    /** A notification POSTed to our notify_url: its body, if its signature is ours. */
    readNotification(body: Record<string, unknown>) {
      // the whole documented field list, data.amount and data.payment_status included (receiver.ts)
      if (!signedWith(body, merchant.secretKey)) throw new GatewayError("notification not signed with our key: ignore it");
      return body as { notification_id: string; event: string; data: Record<string, unknown> };
    },
  };
}
