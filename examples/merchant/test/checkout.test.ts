// The shop's payment flows against Sandgate (started once by global-setup.ts, signatures strict):
// the gateway answers as the real one would, with the outcome each test asks for.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createAdminClient } from "sandgate";
import { afterAll, beforeAll, describe, expect, inject, test } from "vitest";
import { createGateway, GatewayError, payerMessage } from "../src/gateway.js";

const url = inject("sandgateUrl");
// a fixture merchant of Sandgate: manual capture on A10001, APMs (auto capture) on A10002
const shop = createGateway(url, { merchantId: "M10001", accountId: "A10001", secretKey: "acme_test_key_7f3a9c21" });
const apmShop = createGateway(url, { merchantId: "M10001", accountId: "A10002", secretKey: "acme_test_key_7f3a9c21" });
const admin = createAdminClient(url);
const card = { card: "4242424242424242", cvc: "123", expiry: ["12", "2030"] as [string, string], email: "jane@example.com" };
const orderNo = (prefix: string) => `${prefix}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;

/** The shop's notify_url: a real HTTP server collecting what the gateway posts. */
let server: Server;
let notifyUrl = "";
const received: Record<string, unknown>[] = [];
beforeAll(async () => {
  server = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString()));
    req.on("end", () => {
      received.push(JSON.parse(body) as Record<string, unknown>);
      res.writeHead(200).end("ok");
    });
  });
  // NOTIFY_HOST: how Sandgate reaches this suite when it runs elsewhere (compose.yaml: the shop service)
  const host = process.env.NOTIFY_HOST;
  await new Promise<void>((resolve) => server.listen(0, host ? "0.0.0.0" : "127.0.0.1", resolve));
  notifyUrl = `http://${host ?? "127.0.0.1"}:${(server.address() as AddressInfo).port}/notify`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

async function waitFor<T>(find: () => T | undefined, ms = 5000): Promise<T> {
  for (const until = Date.now() + ms; Date.now() < until; await new Promise((r) => setTimeout(r, 50))) {
    const found = find();
    if (found !== undefined) return found;
  }
  throw new Error("waited in vain");
}

describe("paying by card", () => {
  test("approved, captured, partly refunded, and the capture notified with our signature", async () => {
    const no = orderNo("CARD");
    const payment = await shop.payByCard({ orderNo: no, amount: "49.90", currency: "USD", notifyUrl, ...card });
    expect(payment).toMatchObject({ approved: true, resultInfo: "0000:Success" });
    const order = { transactionId: payment.transactionId, orderNo: no, currency: "USD", amount: "49.90" };
    expect(await shop.capture(order)).toEqual({ captured: true, message: "" });
    expect(await shop.refund(order, "9.90", "one item returned")).toMatchObject({ accepted: true, reference: `${payment.transactionId}-01` });
    const captured = await waitFor(() => received.find((n) => n.event === "payment.captured" && (n.data as { order_no?: string }).order_no === no));
    expect(shop.readNotification(captured)).toMatchObject({ event: "payment.captured" });
    // a notification someone else signed is refused
    expect(() => shop.readNotification({ ...captured, encryption_data: "0".repeat(64) })).toThrow(GatewayError);
  });

  test("a declined card, and a capture of it refused", async () => {
    const no = orderNo("DECL");
    const payment = await shop.payByCard({ orderNo: no, amount: "20.00", currency: "USD", ...card, card: "4000000000000002" });
    expect(payment).toMatchObject({ approved: false, resultInfo: expect.stringMatching(/^D0005:/) });
    const capture = await shop.capture({ transactionId: payment.transactionId, orderNo: no, currency: "USD", amount: "20.00" });
    expect(capture.captured).toBe(false);
    expect(capture.message).toMatch(/^E\d{4}:/);
  });

  test("every payment declined while this merchant is bound to the declines scenario", async () => {
    const ci = createGateway(url, { merchantId: "SHOP-CI-1", accountId: "WEB", secretKey: "sk_test_SHOP-CI-1" });
    await admin.bindScenario("SHOP-CI-1", "declines");
    try {
      expect((await ci.payByCard({ orderNo: orderNo("BOUND"), amount: "10.00", currency: "EUR", ...card })).approved).toBe(false);
    } finally {
      await admin.unbindScenario("SHOP-CI-1");
    }
    expect((await ci.payByCard({ orderNo: orderNo("UNBOUND"), amount: "10.00", currency: "EUR", ...card })).approved).toBe(true);
  });
});

// The shop's words to its payer, for every answer a card payment can get: Sandgate's magic cards
// and amount endings (docs/scenarios.md) give each one on demand.
const ANSWERS: [what: string, change: { card?: string; amount?: string }, message: string][] = [
  ["an approved Visa", {}, "Thank you: your payment is approved."],
  ["an approved Mastercard", { card: "5555555555554444" }, "Thank you: your payment is approved."],
  ["do not honor", { card: "4000000000000002" }, "Your bank declined the payment: try another card."],
  ["insufficient funds", { card: "4000000000009995" }, "There is not enough money on this card."],
  ["an expired card", { card: "4000000000000069" }, "This card has expired."],
  ["a wrong security code", { card: "4000000000000127" }, "The security code does not match: check the three digits on the back."],
  ["a stolen card, not said so", { card: "4000000000009979" }, "Your bank declined the payment: try another card."],
  ["a lost card, not said so", { card: "4000000000009987" }, "Your bank declined the payment: try another card."],
  ["the issuer timing out", { card: "4000000000000119" }, "Your bank did not answer in time: please try again."],
  ["a 3-D Secure challenge", { card: "4000002760003184" }, "Confirm the payment with your bank."],
  ["3-D Secure failed", { card: "4000008400001629" }, "Your bank could not confirm it is you."],
  ["held for review", { card: "4000000000009235" }, "We are checking your payment and will email you shortly."],
  ["rejected by risk", { card: "4100000000000019" }, "Your bank declined the payment: try another card."],
  ["an amount ending .05", { amount: "10.05" }, "Your bank declined the payment: try another card."],
  ["an amount ending .51", { amount: "10.51" }, "There is not enough money on this card."],
  ["an amount ending .54", { amount: "10.54" }, "This card has expired."],
  ["an amount ending .91", { amount: "10.91" }, "Your bank did not answer in time: please try again."],
  ["an amount ending .77", { amount: "10.77" }, "We are checking your payment and will email you shortly."],
];

describe("what the payer is told", () => {
  test.each(ANSWERS)("%s", async (_what, change, message) => {
    const payment = await shop.payByCard({
      orderNo: orderNo("SAY"),
      amount: change.amount ?? "15.00",
      currency: "USD",
      ...card,
      ...(change.card ? { card: change.card } : {}),
    });
    expect(payerMessage(payment)).toBe(message);
  });

  test("a refund that fails days later is seen as failed, and one that takes an hour settles when its time comes", async () => {
    const no = orderNo("LATE");
    const payment = await shop.payByCard({ orderNo: no, amount: "30.00", currency: "USD", ...card });
    const order = { transactionId: payment.transactionId, orderNo: no, currency: "USD", amount: "30.00" };
    await shop.capture(order);
    // .13 is accepted now and fails later; .17 settles an hour after it is accepted
    const failing = await shop.refund(order, "5.13", "damaged");
    const slow = await shop.refund(order, "5.17", "late delivery");
    expect([failing.accepted, slow.accepted]).toEqual([true, true]);
    await admin.advanceClock("2h", { merchant: "M10001" });
    const states = Object.fromEntries((await admin.refunds({ transaction_id: payment.transactionId })).map((r) => [r.refund_reference_id, r.state]));
    expect([states[failing.reference], states[slow.reference]]).toEqual(["failed", "processed"]);
  });
});

describe("paying by redirect (Pix)", () => {
  test("the payer pays at the page, comes back signed; a tampered return is refused", async () => {
    const no = orderNo("PIX");
    const { redirectTo } = await apmShop.payByRedirect({
      orderNo: no,
      amount: "25.00",
      currency: "BRL",
      method: "pix",
      returnUrl: "https://shop.example/return",
    });
    expect(redirectTo.startsWith(`${url}/pay/apm/`), redirectTo).toBe(true);
    // the payer, at the gateway's page, chooses to pay (as the page's form would post it)
    const page = await fetch(redirectTo, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json" },
      body: "outcome=paid",
    });
    const { return_url } = (await page.json()) as { return_url: string };
    expect(apmShop.readReturn(return_url)).toMatchObject({ paid: true, orderNo: no });
    const tampered = return_url.replace("amount=25.00", "amount=0.01");
    expect(() => apmShop.readReturn(tampered)).toThrow(GatewayError);
  });
});
