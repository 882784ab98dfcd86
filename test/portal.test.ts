// The merchant portal: capture (whole or part), cancel, refund (whole or part, with a reason) and
// review one payment by hand, from the transaction's page on the dashboard (Chromium), the operator
// API and `sandgate ctl payment …`. Each is the merchant's own gateway request attributed
// "portal": the gateway's transitions and amounts, its notification, its request log entry, and
// its own message when it refuses.
import type { Browser } from "playwright-core";
import { afterAll, describe, expect, test } from "vitest";
import { runSandgate } from "../scripts/sandgate-process.js";
import { CHROMIUM, HAS_CHROMIUM, launch, screenshot, watchedPage } from "./browser-helpers.js";
import { directPayment, nextOrderNo, parseXml, textOf } from "./helpers.js";
import { ENVELOPE } from "./lifecycle-helpers.js";
import { sandboxWithReceiver } from "./receiver.js";

const live = sandboxWithReceiver("portal");
const received = () => live.receiver.received;
const notifyUrl = () => live.receiver.url;

/** A payment of 100.00 on A10001 (manual capture) made by the merchant's server; `card` picks review or approval. */
async function payment(card = "4242424242424242"): Promise<string> {
  const body = directPayment({ order_no: nextOrderNo("PORTAL"), amount: "100.00", card, notify_url: notifyUrl() });
  const res = await fetch(`${live.sandbox.url}/v1/authorise`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  return textOf(parseXml(await res.text()).transaction_id);
}

/** The payment as the operator API lists it. */
async function queried(id: string): Promise<Record<string, string>> {
  const all = await live.sandbox.admin.transactions({});
  return all.find((t) => t.transaction_id === id) as unknown as Record<string, string>;
}

/** payment_status as the merchant's own query (/v1/retrievalTrans) answers it. */
async function paymentStatus(id: string): Promise<string> {
  const body = new URLSearchParams({ ...ENVELOPE, transaction_id: id });
  const res = await fetch(`${live.sandbox.url}/v1/retrievalTrans`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body });
  return ((await res.json()) as { orders_list: { payment_status: string }[] }).orders_list[0]!.payment_status;
}

describe("the portal through the operator API and sandgate ctl", () => {
  test("a partial capture, then partial refunds with a reason: the gateway's rules, a portal history line, the request log, a notification", async () => {
    const id = await payment();
    const captured = await live.sandbox.admin.call("capturePayment", { params: { transaction_id: id }, body: { amount: "60.00" } });
    expect(captured.result).toMatchObject({ capture_status: "1", amount: "60.00" });
    expect(captured.transaction).toMatchObject({ state: "paid", captured_amount: "60.00", refunded_amount: "0.00" });

    const refunded = await live.sandbox.admin.call("refundPayment", { params: { transaction_id: id }, body: { amount: "25.00", reason: "one item returned" } });
    expect(refunded.result).toMatchObject({ refund_status: "1", refund_amount: "25.00", refund_reason: "one item returned" });
    expect(refunded.transaction).toMatchObject({ state: "partially_refunded", refunded_amount: "25.00" });
    // the rest by default: what is left of the 60.00 captured
    const rest = await live.sandbox.admin.call("refundPayment", { params: { transaction_id: id }, body: {} });
    expect(rest.result.refund_amount).toBe("35.00");

    const tx = await queried(id);
    const history = (tx as unknown as { history: { event: string; source: string }[] }).history;
    expect(history.filter((h) => h.source === "portal").map((h) => h.event.split(" ")[0])).toEqual(["capture", "refund", "refund"]);
    // each is in the request log as the merchant's own request, signed with its key
    const logged = (await live.sandbox.admin.requests({ merchant_id: tx.merchant_id })).slice(-3);
    expect(logged.map((r) => [r.operation, r.http_status, r.signature?.matched])).toEqual([
      ["capture", 200, true],
      ["refund", 200, true],
      ["refund", 200, true],
    ]);
    // each answer names its request, as the log and the payment's history do
    expect([captured.request_id, refunded.request_id, rest.request_id]).toEqual(logged.map((r) => r.id));
    expect(history.filter((h) => h.source === "portal").map((h) => (h as unknown as { request_id: string }).request_id)).toEqual(logged.map((r) => r.id));
    await live.sandbox.deps.notifier.drain();
    expect(
      received()
        .filter((n) => (n.data as { transaction_id?: string }).transaction_id === id)
        .map((n) => n.event),
    ).toEqual(expect.arrayContaining(["payment.captured", "refund.accepted"]));
  });

  test("what the state forbids is refused with the gateway's own message, and nothing changes", async () => {
    const id = await payment();
    await live.sandbox.admin.call("capturePayment", { params: { transaction_id: id }, body: {} });
    await expect(live.sandbox.admin.call("capturePayment", { params: { transaction_id: id }, body: {} })).rejects.toMatchObject({
      status: 409,
      error: "refused",
      message: expect.stringMatching(/E0101:Already captured/),
    });
    await expect(live.sandbox.admin.call("refundPayment", { params: { transaction_id: id }, body: { amount: "100.01" } })).rejects.toMatchObject({
      status: 409,
      error: "refused",
      message: expect.stringMatching(/: E0402:/),
    });
    await expect(live.sandbox.admin.call("cancelPayment", { params: { transaction_id: id }, body: {} })).rejects.toMatchObject({ status: 409 });
    // a refusal names the request too: the log has it with the gateway's message
    const refused = await fetch(`${live.sandbox.url}/__sandbox/payments/${id}/capture`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    const said = (await refused.json()) as { error: string; request_id: string };
    expect([refused.status, said.error, said.request_id]).toEqual([409, "refused", expect.stringMatching(/^req-\d+$/)]);
    const [entry] = (await live.sandbox.admin.requests({ merchant_id: "M10001", operation: "capture" })).filter((r) => r.id === said.request_id);
    expect(entry).toMatchObject({ order_no: (await queried(id)).order_no, result: expect.stringMatching(/0 of 1|E0101/) });
    expect(await queried(id)).toMatchObject({ state: "paid", captured_amount: "100.00", refunded_amount: "0.00" });
    await expect(live.sandbox.admin.call("capturePayment", { params: { transaction_id: "9999999999999999" }, body: {} })).rejects.toMatchObject({
      status: 404,
      error: "transaction_not_found",
    });
  });

  test("ctl payment capture, review, cancel, refund; a refusal exits 3 with the gateway's message", async () => {
    const env = { SANDGATE_URL: live.sandbox.url, ADMIN_TOKEN: "" };
    const id = await payment();
    const capture = await runSandgate(["ctl", "payment", "capture", id, "--amount", "40.00"], { env });
    expect([capture.code, capture.stdout]).toEqual([0, `payment ${id}: paid (captured 40.00, refunded 0.00 USD)\n`]);
    const refund = await runSandgate(["ctl", "payment", "refund", id, "--amount", "10.00", "--reason", "late delivery"], { env });
    expect(refund.stdout).toBe(`payment ${id}: partially_refunded (captured 40.00, refunded 10.00 USD)\n`);
    const again = await runSandgate(["ctl", "payment", "cancel", id], { env });
    expect(again.code).toBe(3);
    expect(again.stderr).toMatch(/E\d{4}:/);

    const held = await payment("4000000000009235");
    expect((await runSandgate(["ctl", "payment", "review", held, "approve"], { env })).stdout).toBe(
      `payment ${held}: authorised (captured 0.00, refunded 0.00 USD)\n`,
    );
    const other = await payment("4000000000009235");
    expect((await runSandgate(["ctl", "payment", "review", other, "reject"], { env })).stdout).toBe(
      `payment ${other}: cancelled (captured 0.00, refunded 0.00 USD)\n`,
    );
  }, 30_000);
});

describe.skipIf(!HAS_CHROMIUM)(`the portal on a transaction's page in Chromium (needs ${CHROMIUM})`, () => {
  let browser: Browser | undefined;
  afterAll(() => browser?.close());

  test("a tester captures part, refunds part, cancels, approves a review; a refused action shows the gateway's message", async () => {
    browser = await launch();
    const { page, problems } = await watchedPage(browser);
    const open = async (id: string) => page.goto(`${live.sandbox.url}/__sandbox/ui/transactions/${id}`);
    const flash = async () => (await page.textContent("#flash"))?.trim();

    const id = await payment();
    await open(id);
    expect(await page.inputValue("#capture-amount")).toBe("100.00");
    await page.fill("#capture-amount", "70.00");
    await page.click("[data-action=capture]");
    expect(await flash()).toBe(`Captured: payment ${id} is now paid (captured 70.00, refunded 0.00 USD).`);
    expect(await queried(id)).toMatchObject({ state: "paid", captured_amount: "70.00" });
    expect(await paymentStatus(id)).toBe("3000");

    expect(await page.inputValue("#refund-amount")).toBe("70.00");
    await page.fill("#refund-amount", "20.00");
    await page.fill("#refund-reason", "scratched box");
    await page.click("[data-action=refund]");
    expect(await flash()).toMatch(
      new RegExp(`^Refund \\S+ of 20\\.00 accepted: payment ${id} is now partially_refunded \\(captured 70\\.00, refunded 20\\.00 USD\\)\\.$`),
    );
    expect(await queried(id)).toMatchObject({ state: "partially_refunded", refunded_amount: "20.00" });
    expect(await paymentStatus(id)).toBe("4000");
    expect(await page.textContent("#history")).toContain("portal");
    // the refund's reason is in its row of the Refunds table
    expect(await page.locator("#refunds tbody tr", { hasText: "20.00" }).textContent()).toContain("scratched box");

    // more than is left: the gateway's own refusal, and nothing changes
    await page.fill("#refund-amount", "60.00");
    await page.click("[data-action=refund]");
    expect(await flash()).toMatch(/^E0402:/);
    expect(await queried(id)).toMatchObject({ refunded_amount: "20.00" });
    await screenshot(page, "portal-refund-refused");

    const toCancel = await payment();
    await open(toCancel);
    // what ends the payment stands apart, after Capture, past a line
    expect(await page.locator("#portal-ending [data-action=cancel]").count()).toBe(1);
    expect(await page.locator("#portal-capture [data-action=cancel]").count()).toBe(0);
    const [capture, cancel] = [await page.locator("[data-action=capture]").boundingBox(), await page.locator("[data-action=cancel]").boundingBox()];
    expect(cancel!.y - (capture!.y + capture!.height)).toBeGreaterThan(40);
    await page.click("[data-action=cancel]");
    expect(await flash()).toBe(`Cancelled: payment ${toCancel} is now cancelled (captured 0.00, refunded 0.00 USD).`);
    expect(await page.locator("#portal form").count()).toBe(0);
    expect(await paymentStatus(toCancel)).toBe("5000");

    const held = await payment("4000000000009235");
    await open(held);
    await page.click("[data-action=review-approve]");
    expect(await flash()).toBe(`Review: approved: payment ${held} is now authorised (captured 0.00, refunded 0.00 USD).`);
    expect(await queried(held)).toMatchObject({ state: "authorised" });
    expect(await paymentStatus(held)).toBe("2000");
    expect(problems).toEqual([]);
  }, 60_000);
});
