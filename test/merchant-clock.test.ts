// A clock per merchant: a CI job moves its own merchant's time (`ctl clock advance 3d --merchant
// X`, the operator API, the dashboard) and no one else's. Its refunds settle, its subscriptions
// charge, its new payments and notifications are dated ahead; another merchant's stay as they were.
import { describe, expect, test } from "vitest";
import { runSandgate } from "../scripts/sandgate-process.js";
import { ANY_SIGNATURE, directPayment, nextOrderNo, parseXml, textOf } from "./helpers.js";
import { sandboxWithReceiver } from "./receiver.js";

const DAY = 86_400_000;
const live = sandboxWithReceiver("merchant-clock");
const received = () => live.receiver.received as { merchant_id: string; event: string; created_at: string; sent_at: string }[];

const post = async (path: string, body: Record<string, unknown>) => {
  const res = await fetch(`${live.sandbox.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  return res.text();
};

/** A merchant's job: a payment captured, a refund that settles an hour later (.17), a daily subscription. */
async function job(merchant: string) {
  const notify_url = live.receiver.url;
  const paid = parseXml(
    await post("/v1/authorise", directPayment({ merchant_id: merchant, account_id: "A1", order_no: nextOrderNo(merchant), amount: "50.00", notify_url })),
  );
  const order = { transaction_id: textOf(paid.transaction_id), order_no: textOf(paid.order_no), currency: "USD", amount: "50.00" };
  await post("/v1/capture", { merchant_id: merchant, account_id: "A1", encryption_data: ANY_SIGNATURE, capture_orders: [order] });
  const refunded = JSON.parse(
    await post("/v1/refund", {
      merchant_id: merchant,
      account_id: "A1",
      encryption_data: ANY_SIGNATURE,
      refund_orders: [{ ...order, refund_amount: "10.17", refund_reason: "slow" }],
    }),
  ) as { refund_orders: { refund_reference_id: string }[] };
  const subscription = { contract: `${merchant}-C`, contract_name: "Daily box", interval: "day", interval_count: "1", billing_cycle: 10 };
  const subscribed = parseXml(
    await post(
      "/v1/authorise",
      directPayment({ merchant_id: merchant, account_id: "A1", order_no: nextOrderNo(merchant), amount: "5.00", notify_url, subscription }),
    ),
  );
  return { refund: refunded.refund_orders[0]!.refund_reference_id, recurring: textOf(subscribed.recurring_id), notify_url };
}

const refundState = async (ref: string) => (await live.sandbox.admin.refunds({})).find((r) => r.refund_reference_id === ref)!.state;
const deductions = async (id: string) => (await live.sandbox.admin.subscriptions({})).find((s) => s.recurring_id === id)!.deductions;
const ahead = (iso: string) => Date.parse(iso) - Date.now();

describe("a clock per merchant", () => {
  test("merchant A's clock 3 days on: A's refund settles and its subscription charges, its new records are dated ahead; B's payments and notification times do not move", async () => {
    const [a, b] = [await job("CLOCK-A"), await job("CLOCK-B")];
    expect([await refundState(a.refund), await refundState(b.refund)]).toEqual(["accepted", "accepted"]);
    // the first payment counts as the first deduction
    const before = await deductions(b.recurring);
    expect(await deductions(a.recurring)).toBe(before);

    const moved = await runSandgate(["ctl", "clock", "advance", "3d", "--merchant", "CLOCK-A"], { env: { SANDGATE_URL: live.sandbox.url, ADMIN_TOKEN: "" } });
    expect([moved.code, moved.stdout]).toEqual([
      0,
      expect.stringMatching(/^merchant CLOCK-A's clock: now \S+ \(259200(\.\d+)?s ahead of real time\); \d+ due changes? applied\n$/),
    ]);

    expect(await refundState(a.refund)).toBe("processed");
    expect(await deductions(a.recurring)).toBe(before + 3);
    expect(await refundState(b.refund)).toBe("accepted");
    expect(await deductions(b.recurring)).toBe(before);

    // each merchant's clock, and the sandbox's, as the operator API tells them
    const clockOf = (merchant_id?: string) => live.sandbox.admin.call("getClock", { query: merchant_id ? { merchant_id } : {} });
    expect((await clockOf("CLOCK-A")).offset_ms).toBe(3 * DAY);
    expect((await clockOf("CLOCK-B")).offset_ms).toBe(0);
    expect((await clockOf()).offset_ms).toBe(0);

    // new payments: A's dated three days ahead, B's now
    const later = async (merchant: string) => {
      const xml = parseXml(
        await post("/v1/authorise", directPayment({ merchant_id: merchant, account_id: "A1", order_no: nextOrderNo(merchant), amount: "7.00" })),
      );
      return (await live.sandbox.admin.transactions({})).find((t) => t.transaction_id === textOf(xml.transaction_id))!.created_at;
    };
    expect(ahead(await later("CLOCK-A"))).toBeGreaterThan(3 * DAY - 60_000);
    expect(Math.abs(ahead(await later("CLOCK-B")))).toBeLessThan(60_000);

    // notifications: every one of B's dated now; A's deductions dated in A's time
    await live.sandbox.deps.notifier.drain();
    const ofB = received().filter((n) => n.merchant_id === "CLOCK-B");
    expect(ofB.length).toBeGreaterThan(0);
    for (const n of ofB) expect(Math.abs(ahead(n.created_at)), `${n.event} of CLOCK-B`).toBeLessThan(60_000);
    const deducted = received().filter((n) => n.merchant_id === "CLOCK-A" && n.event === "subscription.deducted");
    expect(deducted).toHaveLength(3);
    expect(Math.max(...deducted.map((n) => ahead(n.created_at)))).toBeGreaterThan(3 * DAY - 60_000);
    // each sent at the real time, and signed so: a receiver's freshness window (300 s on sent_at)
    // takes A's notifications as it takes B's, however far A's clock was moved
    for (const n of received()) expect(Math.abs(ahead(n.sent_at)), `${n.event} of ${n.merchant_id} sent_at`).toBeLessThan(60_000);
  });

  test("an unknown merchant's clock is refused and nothing moves", async () => {
    await expect(live.sandbox.admin.advanceClock("1d", { merchant: "NOBODY-HERE" })).rejects.toMatchObject({ status: 404, error: "merchant_not_found" });
    expect((await live.sandbox.admin.clock()).offset_ms).toBe(0);
  });
});
