// The traffic of Sandgate's self-check recording: one fixed sequence of gateway requests and payer
// page visits that together call every /v1 operation, visit every payer page (3-D Secure challenge,
// APM page, hosted checkout) and cause every notification a request can cause at once.
// `sandgate record` sends it through the recorder (Sandgate as the upstream) and `sandgate verify`
// replays the HAR against a fresh Sandgate, so:
// - every value is a fixed string (orders SELF-0001…, payout request ids, amounts, cards); only ids
//   Sandgate answers with (transaction ids, page addresses) are read back, and those derive from the seed;
// - every request goes to `base` (page addresses too, their origin replaced), signed with the merchant's key;
// - nothing depends on time passing: what only the clock (or the operator API) causes is LEFT_OUT;
// - an answer the sequence does not expect throws, naming the step: a broken flow is never recorded.
// The merchant (M10001 by default) must have A10001 capturing manually and A10002 capturing at once
// with pix, as fixtures/merchants.json gives M10001.
import { createHash } from "node:crypto";
import { signatureFields } from "../../src/domain/signature.js";
import { GATEWAY_OPERATIONS, type SignedOperation } from "../../src/domain/gateway-operations.js";

export interface TrafficSummary {
  requests: number;
  /** distinct /v1 paths sent */
  operations: string[];
  /** distinct payer page kinds visited: "3ds", "apm", "checkout" */
  pages: string[];
  /** notification events the traffic causes */
  expectedEvents: string[];
}

export interface TrafficOptions {
  notifyUrl: string;
  merchant?: { merchant_id: string; key: string };
}

/** What each request and page of the sequence notifies at once. */
export const EXPECTED_EVENTS: readonly string[] = [
  "payment.pending", // 3-D Secure challenge, APM left for the payer, checkout
  "payment.authorised", // approvals on A10001; the 3-D Secure and checkout pages
  "payment.paid", // approvals on A10002, APM paid (at once and at its page)
  "payment.declined", // declines, the failed APM
  "payment.review", // risk reviews
  "payment.captured",
  "payment.review_approved",
  "payment.review_rejected",
  "payment.cancelled",
  "refund.accepted",
  "payout.completed",
  "payout.failed",
  "payout.pending",
  "subscription.cancelled",
];

/** Events Sandgate emits only when time passes (or through the operator API): not in this traffic. */
export const LEFT_OUT: Readonly<Record<string, string>> = {
  "refund.processed": "a refund settles on the sandbox clock, 5 s after acceptance in the default scenario",
  "refund.failed": "the refund of 5.13 fails on the sandbox clock, 5 s after acceptance",
  "subscription.deducted": "deductions fall due an interval (a day at least) after the first payment",
  "subscription.deduction_failed": "a deduction falls due an interval after the first payment",
  "subscription.suspended": "comes with a failed deduction, or the next deduction of a voided first payment",
  "subscription.finished": "comes with the last deduction; a schedule with none (billing_cycle 1) finishes silently",
};

const MANUAL = "A10001";
const AUTO = "A10002";
export const FIXTURE_MERCHANT = { merchant_id: "M10001", key: "acme_test_key_7f3a9c21" };
const RETURN_URL = "https://shop.example/self-check/return";
export const EXPIRY = { expiration_month: "12", expiration_year: "2030", security_code: "123" };
export const CARDS = {
  approve: "4242424242424242",
  decline: "4000000000000002",
  insufficientFunds: "4000000000009995",
  challenge: "4000002760003184",
  review: "4000000000009235",
};

type Fields = Record<string, unknown>;
type PageKind = "3ds" | "apm" | "checkout";
interface Answer {
  status: number;
  location: string;
  text: string;
}
/** A batch order's expected result: its status and the code of its message ("" for none). */
type OrderResult = [status: string, code: string];

/** Runs one step; a failure names it. */
async function step<T>(name: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    throw new Error(`self-check step "${name}": ${(err as Error).message}`, { cause: err });
  }
}

function check(ok: boolean, message: string): void {
  if (!ok) throw new Error(message);
}

/** The gateway as the sequence uses it: signed requests and payer pages, counted. */
export class Gateway {
  requests = 0;
  readonly operations = new Set<string>();
  readonly pages = new Set<PageKind>();
  private readonly base: string;

  constructor(
    base: string,
    private readonly merchant: { merchant_id: string; key: string },
  ) {
    this.base = base.replace(/\/+$/, "");
  }

  /** The body with its merchant_id and encryption_data: sha256 of the operation's fields, then the key. */
  signed(op: SignedOperation, body: Fields): Fields {
    const full: Fields = { merchant_id: this.merchant.merchant_id, ...body };
    const values = signatureFields[op].request.map((f) => (full[f] === undefined ? "" : String(full[f]))).join("");
    return {
      ...full,
      encryption_data: createHash("sha256")
        .update(values + this.merchant.key)
        .digest("hex"),
    };
  }

  /** POSTs a body as JSON, or form-encoded (flat values only). */
  async post(path: string, body: Fields, form = false): Promise<Answer> {
    if (path.startsWith("/v1/")) this.operations.add(path);
    const type = form ? "application/x-www-form-urlencoded" : "application/json";
    return this.send(path, { method: "POST", headers: { "content-type": type }, body: form ? formBody(body) : JSON.stringify(body) });
  }

  /** A signed gateway request; anything but 200 throws. */
  async call(op: SignedOperation, body: Fields, form = false): Promise<string> {
    const answer = await this.post(GATEWAY_OPERATIONS[op].path, this.signed(op, body), form);
    check(answer.status === 200, `${GATEWAY_OPERATIONS[op].path} answered ${answer.status}: ${answer.text.slice(0, 300)}`);
    return answer.text;
  }

  /** GET of a page address Sandgate gave (its origin replaced by base); 200 expected. */
  async visit(kind: PageKind, address: string): Promise<string> {
    const path = pagePath(kind, address);
    this.pages.add(kind);
    const answer = await this.send(path, { method: "GET" });
    check(answer.status === 200, `GET ${path} answered ${answer.status}`);
    return answer.text;
  }

  /** POSTs a page's form; returns the answer as it is (no redirect followed). */
  async submit(kind: PageKind, address: string, fields: Fields): Promise<Answer> {
    this.pages.add(kind);
    return this.post(pagePath(kind, address), fields, true);
  }

  /** Finishes a page with its own form: 303 to return_url with order_status 1 expected. */
  async finish(kind: PageKind, html: string, fields: Fields): Promise<void> {
    const answer = await this.submit(kind, formAction(html), fields);
    check(
      answer.status === 303 && answer.location.startsWith(`${RETURN_URL}?`),
      `the ${kind} page answered ${answer.status} ${answer.location}, not 303 to return_url`,
    );
    const status = new URL(answer.location).searchParams.get("order_status");
    check(status === "1", `the ${kind} page returned the payer with order_status ${status}`);
  }

  private async send(path: string, init: RequestInit): Promise<Answer> {
    this.requests++;
    const res = await fetch(`${this.base}${path}`, { ...init, redirect: "manual" });
    const text = await res.text();
    // Sandgate in lenient mode says whether the signature was right; a real gateway does not
    check(res.headers.get("x-sandbox-signature") !== "mismatch", `${path}: encryption_data does not match`);
    return { status: res.status, location: res.headers.get("location") ?? "", text };
  }
}

function formBody(body: Fields): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(body)) {
    if (value !== null && typeof value === "object") throw new Error(`form bodies are flat: ${name} is an object`);
    params.append(name, String(value));
  }
  return params.toString();
}

/** The path and query of a page address, checked to be a page of that kind. */
function pagePath(kind: PageKind, address: string): string {
  const url = new URL(address);
  check(url.pathname.startsWith(`/pay/${kind}/`), `${address} is not a ${kind} page`);
  return url.pathname + url.search;
}

const decodeHtml = (s: string) =>
  s
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&");

/** The action of a page's first form (the 3-D Secure code, the APM's buttons, the card form). */
function formAction(html: string): string {
  const action = /<form\b[^>]*\baction="([^"]*)"/i.exec(html)?.[1];
  if (action === undefined) throw new Error("the page has no form");
  return decodeHtml(action);
}

/** The text of an XML answer's element ("" when empty or missing). */
export function xmlText(xml: string, name: string): string {
  return decodeHtml(new RegExp(`<${name}>([^<]*)</${name}>`).exec(xml)?.[1] ?? "");
}

function expectXml(xml: string, orderStatus: string, code: string): void {
  const [status, info] = [xmlText(xml, "order_status"), xmlText(xml, "result_info")];
  check(status === orderStatus && info.startsWith(`${code}:`), `expected order_status ${orderStatus} and ${code}, got ${status} and "${info}"`);
}

/** The answer's transaction_id, which the batches name. */
function transactionId(xml: string): string {
  const id = xmlText(xml, "transaction_id");
  check(id !== "", "no transaction_id in the answer");
  return id;
}

/** A JSON answer as an object. */
function json(text: string): Record<string, unknown> {
  const value: unknown = JSON.parse(text);
  check(value !== null && typeof value === "object" && !Array.isArray(value), "the answer is not a JSON object");
  return value as Record<string, unknown>;
}

/** The objects of a JSON answer's array. */
function list(answer: Record<string, unknown>, field: string): Record<string, string>[] {
  const value = answer[field];
  check(Array.isArray(value), `no ${field} array in the answer`);
  return value as Record<string, string>[];
}

/** return_status 1, and each order's status and message code as expected, in order. */
function expectBatch(text: string, array: string, statusField: string, messageField: string, expected: OrderResult[]): void {
  const answer = json(text);
  check(answer.return_status === "1", `return_status ${String(answer.return_status)}: ${String(answer.return_message)}`);
  const got = list(answer, array).map((o): OrderResult => [o[statusField] ?? "", (o[messageField] ?? "").split(":")[0] ?? ""]);
  check(JSON.stringify(got) === JSON.stringify(expected), `${array}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(got)}`);
}

/** The hosted checkout's address and theForm's hidden inputs, from the /v1/checkout page. */
function theForm(html: string): { action: string; inputs: Fields } {
  const action = /<form\b[^>]*\bname="theForm"[^>]*\baction="([^"]*)"/i.exec(html)?.[1];
  const data = /<script type="application\/json" id="theFormInputs">([^<]*)<\/script>/.exec(html)?.[1];
  if (action === undefined || data === undefined) throw new Error("the checkout page has no theForm with its inputs");
  const pairs = JSON.parse(data) as [string, string][];
  return { action: decodeHtml(action), inputs: Object.fromEntries(pairs) };
}

export async function driveEveryOperation(base: string, options: TrafficOptions): Promise<TrafficSummary> {
  const gw = new Gateway(base, options.merchant ?? FIXTURE_MERCHANT);
  const notify_url = options.notifyUrl;
  /** A direct card payment of SELF-<n> on an account, amount in USD. */
  const card = (n: string, account: string, amount: string, number: string, more: Fields = {}): Fields => ({
    account_id: account,
    order_no: `SELF-${n}`,
    currency: "USD",
    amount,
    card: number,
    ...EXPIRY,
    first_name: "Sam",
    last_name: "Check",
    shopper_email: "sam@shop.example",
    notify_url,
    return_url: RETURN_URL,
    ...more,
  });
  /** An APM (pix) payment of SELF-<n> on the auto-capture account. */
  const apm = (n: string, amount: string, email: string): Fields => ({
    account_id: AUTO,
    order_no: `SELF-${n}`,
    currency: "BRL",
    amount,
    payment_method: "pix",
    shopper_email: email,
    notify_url,
    return_url: RETURN_URL,
  });
  /** A direct payment: its order_status and result code checked, and `filled` (when named) not empty; the answer returned. */
  const pay = (name: string, body: Fields, orderStatus: string, code: string, options: { form?: boolean; filled?: string } = {}) =>
    step(name, async () => {
      const xml = await gw.call("authorise", body, options.form);
      expectXml(xml, orderStatus, code);
      if (options.filled) check(xmlText(xml, options.filled) !== "", `no ${options.filled} in the answer`);
      return xml;
    });
  /** An APM payment; its issuer_url returned. */
  const payByApm = (name: string, body: Fields, form = false) =>
    step(name, async () => {
      const url = xmlText(await gw.call("authorise", body, form), "issuer_url");
      check(url !== "", "no issuer_url in the answer");
      return url;
    });

  // direct payments
  const approvedManual = await pay("approved, manual capture", card("0001", MANUAL, "100.00", CARDS.approve), "1", "0000");
  const partlyCaptured = await pay("approved, to capture in part", card("0002", MANUAL, "80.00", CARDS.approve), "1", "0000");
  const approvedAuto = await pay("approved, auto capture", card("0003", AUTO, "120.00", CARDS.approve), "1", "0000");
  const declined = await pay("declined", card("0004", MANUAL, "20.00", CARDS.decline), "0", "D0005");
  await pay("insufficient funds", card("0005", MANUAL, "20.00", CARDS.insufficientFunds), "0", "D0051");
  const challenged = await pay("3-D Secure challenge", card("0006", MANUAL, "45.00", CARDS.challenge), "-1", "P0001", { filled: "issuer_url" });
  await step("3-D Secure challenge page", async () => {
    const html = await gw.visit("3ds", xmlText(challenged, "issuer_url"));
    await gw.finish("3ds", html, { challenge_code: "1234" });
  });
  await pay("frictionless 3-D Secure", card("0007", MANUAL, "35.00", CARDS.approve, { open3d: "do3DS" }), "1", "0000", { filled: "threeds_result" });
  const toApprove = await pay("risk review, to approve", card("0008", MANUAL, "60.00", CARDS.review), "-2", "R0001");
  const toReject = await pay("risk review, to reject", card("0009", MANUAL, "70.00", CARDS.review), "-2", "R0001");
  const subscription = { contract: "SELF-CONTRACT", contract_name: "Self-check box", interval: "month", interval_count: "1", billing_cycle: 12 };
  await pay("subscription", card("0010", AUTO, "15.00", CARDS.approve, { subscription }), "1", "0000", { filled: "recurring_id" });
  const tokenised = await pay("token_flag, form body", card("0011", MANUAL, "40.00", CARDS.approve, { token_flag: "YES" }), "1", "0000", {
    form: true,
    filled: "token_id",
  });

  // APM payments: paid at once, failed at once, and left for the payer (form body), paid at its page
  await payByApm("APM paid at once", apm("0012", "25.00", "sam@apm-paid.test"));
  await payByApm("APM failed", apm("0013", "26.00", "sam@apm-fail.test"));
  const apmPage = await payByApm("APM left for the payer, form body", apm("0014", "40.00", "sam@shop.example"), true);
  await step("APM page", async () => {
    const html = await gw.visit("apm", apmPage);
    await gw.finish("apm", html, { outcome: "paid" });
  });

  // redirect payment: the loading page, theForm to the hosted checkout, the card form there
  await step("checkout and the hosted checkout", async () => {
    const body = {
      account_id: MANUAL,
      order_no: "SELF-0015",
      currency: "USD",
      amount: "55.00",
      first_name: "Sam",
      last_name: "Check",
      shopper_email: "sam@shop.example",
      items: "Tent#,#T-1#,#55.00#,#1",
      notify_url,
      return_url: RETURN_URL,
    };
    const form = theForm(await gw.call("checkout", body));
    const landing = await gw.submit("checkout", form.action, form.inputs);
    check(landing.status === 200 && landing.text.includes('id="card-form"'), `theForm landed with ${landing.status}, not the hosted checkout`);
    await gw.finish("checkout", landing.text, { card: CARDS.approve, ...EXPIRY, holder_name: "Sam Check" });
  });

  // batches: each names orders by the transaction ids answered above
  const order = (xml: string) => ({
    transaction_id: transactionId(xml),
    order_no: xmlText(xml, "order_no"),
    currency: xmlText(xml, "currency"),
    amount: xmlText(xml, "amount"),
  });
  await step("capture: whole, partial, and a declined payment", async () => {
    const capture_orders = [order(approvedManual), { ...order(partlyCaptured), amount: "50.00" }, order(declined)];
    const text = await gw.call("capture", { account_id: MANUAL, capture_orders });
    expectBatch(text, "capture_orders", "capture_status", "error_message", [
      ["1", ""],
      ["1", ""],
      ["0", "E0011"],
    ]);
  });
  await step("review: approve and reject", async () => {
    const review_orders = [
      { ...order(toApprove), review_flag: "approve" },
      { ...order(toReject), review_flag: "reject" },
    ];
    const text = await gw.call("review", { account_id: MANUAL, review_orders });
    expectBatch(text, "review_orders", "review_status", "error_message", [
      ["1", ""],
      ["1", ""],
    ]);
  });
  await step("cancel", async () => {
    const text = await gw.call("cancel", { account_id: MANUAL, cancel_orders: [order(tokenised)] });
    expectBatch(text, "cancel_orders", "cancel_status", "error_message", [["1", ""]]);
  });
  // SELF-0012 and SELF-0014 answered APM results, which carry no transaction_id: the query finds them
  const apmIds = await step("query, auto-capture account, form body", async () => {
    const states = { "SELF-0003": "3000", "SELF-0010": "3000", "SELF-0012": "3000", "SELF-0013": "6000", "SELF-0014": "3000" };
    return query(gw, AUTO, states);
  });
  await step("refund: partial, over the refundable amount, full, and one that fails later", async () => {
    const apmOrder = (orderNo: string, amount: string) => ({ transaction_id: apmIds[orderNo] ?? "", order_no: orderNo, currency: "BRL", amount });
    const refund_orders = [
      // .17 stays accepted for an hour in the default scenario: the refund search below sees it as it is now
      { ...order(approvedAuto), refund_amount: "30.17", refund_reason: "partial" },
      { ...order(approvedAuto), refund_amount: "100.00", refund_reason: "over the refundable 89.83" },
      { ...apmOrder("SELF-0014", "40.00"), refund_amount: "40.00", refund_reason: "full" },
      // .13 fails 5 s later: nothing after this looks at SELF-0012
      { ...apmOrder("SELF-0012", "25.00"), refund_amount: "5.13", refund_reason: "fails later" },
    ];
    const text = await gw.call("refund", { account_id: AUTO, refund_orders });
    expectBatch(text, "refund_orders", "refund_status", "refund_message", [
      ["1", "0000"],
      ["0", "E0402"],
      ["1", "0000"],
      ["1", "0000"],
    ]);
  });
  await step("refund search, form body", async () => {
    const answer = json(await gw.call("retrievalRefund", { account_id: AUTO, order_no: "SELF-0003" }, true));
    const refunds = list(answer, "refund_orders").map((r) => `${r.refund_amount}:${r.refund_status}`);
    check(answer.return_status === "1" && JSON.stringify(refunds) === '["30.17:1"]', `expected the accepted 30.17, got ${JSON.stringify(refunds)}`);
  });
  await step("query, manual-capture account, form body", async () => {
    const states = {
      "SELF-0001": "3000",
      "SELF-0002": "3000",
      "SELF-0004": "6000",
      "SELF-0005": "6000",
      "SELF-0006": "2000",
      "SELF-0007": "2000",
      "SELF-0008": "2000",
      "SELF-0009": "5000",
      "SELF-0011": "5000",
      "SELF-0015": "2000",
    };
    await query(gw, MANUAL, states);
  });

  // payouts: completed, failed with a failure type, pending (completes an hour later)
  const payout = (n: string, accountNumber: string) => ({
    account_id: MANUAL,
    request_id: `5e1f0c3a-0000-4000-8000-00000000000${n}`,
    payment_currency: "EUR",
    source_currency: "USD",
    payment_amount: "920.00",
    payment_method: "SWIFT",
    fee_paid_by: "PAYER",
    notify_url,
    beneficiary: {
      first_name: "Ann",
      last_name: "Lee",
      entity_type: "PERSONAL",
      bank_details: { account_number: accountNumber, bank_country_code: "DE", swift_code: "DEUTDEFF" },
    },
  });
  const payOut = (name: string, n: string, accountNumber: string, status: string, failureType: string) =>
    step(name, async () => {
      const answer = json(await gw.call("payout", payout(n, accountNumber)));
      check(
        answer.status === status && answer.failure_type === failureType,
        `expected ${status} ${failureType}, got ${String(answer.status)} ${String(answer.failure_type)}`,
      );
    });
  await payOut("payout completed", "1", "12345678", "COMPLETED", "");
  await payOut("payout failed", "2", "12340002", "FAILED", "ACCOUNT_CLOSED");
  await payOut("payout pending", "3", "12340008", "PENDING", "");

  await step("subscription cancel", async () => {
    const answer = json(await gw.call("subscriptionCancel", { account_id: AUTO, order_no: "SELF-0010" }));
    check(answer.return_status === "1" && answer.recurring_status === "0", `expected the subscription cancelled, got ${String(answer.return_message)}`);
  });
  await step("payment methods optimise, form body", async () => {
    const answer = json(await gw.call("paymentMethodsOptimise", { account_id: AUTO, currency: "BRL", amount: "100.00", billing_country: "BR" }, true));
    check(answer.return_status === "1" && list(answer, "payment_methods").length > 0, `expected a ranking, got ${String(answer.return_message)}`);
  });

  return { requests: gw.requests, operations: [...gw.operations], pages: [...gw.pages], expectedEvents: [...EXPECTED_EVENTS] };
}

/** /v1/retrievalTrans of these orders (form body): each found in the payment_status given; their transaction ids. */
async function query(gw: Gateway, account: string, states: Record<string, string>): Promise<Record<string, string>> {
  const answer = json(await gw.call("retrievalTrans", { account_id: account, order_no: Object.keys(states).join(",") }, true));
  check(answer.return_status === "1", `return_status ${String(answer.return_status)}: ${String(answer.return_message)}`);
  const found = Object.fromEntries(list(answer, "orders_list").map((o) => [o.order_no ?? "", o.payment_status ?? ""]));
  check(
    JSON.stringify(found, Object.keys(states)) === JSON.stringify(states),
    `expected payment_status ${JSON.stringify(states)}, got ${JSON.stringify(found)}`,
  );
  return Object.fromEntries(list(answer, "orders_list").map((o) => [o.order_no ?? "", o.transaction_id ?? ""]));
}
