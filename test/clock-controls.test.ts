// Clock controls like a test clock: freeze (time stands still for that clock until unfrozen; what
// falls due waits, and an advance still moves it and applies it), set to a later moment, unfreeze;
// a move back is refused and changes nothing. Through the operator API (the typed client), ctl,
// and the state file; and one clock per merchant in the request log.
import { describe, expect, test } from "vitest";
import { runSandgate } from "../scripts/sandgate-process.js";
import { ANY_SIGNATURE, directPayment, nextOrderNo, parseXml, textOf } from "./helpers.js";
import { sandboxWithReceiver } from "./receiver.js";
import { createClock } from "../src/domain/clock.js";

const HOUR = 3_600_000;
/** the world's time as this sandbox reads it: it starts at the real time and moves only when `realTimePasses` moves it */
let realNow = Date.now();
const realTimePasses = (ms: number) => void (realNow += ms);
const live = sandboxWithReceiver("clock-controls", { clock: createClock(() => realNow) });
const admin = () => live.sandbox.admin;

const post = async (path: string, body: Record<string, unknown>) =>
  (await fetch(`${live.sandbox.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) })).text();

/** a captured payment of `merchant` and a refund of it that settles an hour after it is accepted (.17) */
async function slowRefund(merchant: string) {
  const paid = parseXml(
    await post("/v1/authorise", directPayment({ merchant_id: merchant, account_id: "A1", order_no: nextOrderNo(merchant), amount: "30.00" })),
  );
  const order = { transaction_id: textOf(paid.transaction_id), order_no: textOf(paid.order_no), currency: "USD", amount: "30.00" };
  const envelope = { merchant_id: merchant, account_id: "A1", encryption_data: ANY_SIGNATURE };
  await post("/v1/capture", { ...envelope, capture_orders: [order] });
  const refunded = JSON.parse(await post("/v1/refund", { ...envelope, refund_orders: [{ ...order, refund_amount: "3.17" }] })) as {
    refund_orders: { refund_reference_id: string }[];
  };
  return { transactionId: order.transaction_id, refund: refunded.refund_orders[0]!.refund_reference_id };
}
const refundState = async (ref: string) => (await admin().refunds({})).find((r) => r.refund_reference_id === ref)!.state;
const createdAt = async (transactionId: string) => (await admin().transactions({})).find((t) => t.transaction_id === transactionId)!.created_at;

const ctl = (...args: string[]) => runSandgate(["ctl", ...args], { env: { SANDGATE_URL: live.sandbox.url, ADMIN_TOKEN: "" } });

describe("clock controls", () => {
  test("a merchant's clock frozen: its payments are dated at the one moment and its refund waits; an advance settles it; set goes forward only; unfreeze runs on", async () => {
    const frozen = await admin()
      .freezeClock({ merchant: "FROZEN-M" })
      .catch(() => undefined);
    expect(frozen, "an unknown merchant has no clock to freeze").toBeUndefined();
    const first = await slowRefund("FROZEN-M");
    const at = await admin().freezeClock({ merchant: "FROZEN-M" });
    expect(at).toMatchObject({ merchant_id: "FROZEN-M", frozen: true, applied: 0 });
    expect(await admin().clock()).toMatchObject({ frozen: false });

    realTimePasses(1_100);
    const second = await slowRefund("FROZEN-M");
    expect(await createdAt(second.transactionId)).toBe(at.now);
    expect((await admin().clock({ merchant: "FROZEN-M" })).now).toBe(at.now);

    // the sandbox's clock moving does not move a frozen merchant's: its refunds wait
    await admin().advanceClock("2h");
    expect(await refundState(first.refund)).toBe("accepted");
    expect((await admin().clock({ merchant: "FROZEN-M" })).now).toBe(at.now);

    // an advance of its own still moves it, and what fell due on the way is applied
    const moved = await admin().advanceClock("2h", { merchant: "FROZEN-M" });
    expect(moved).toMatchObject({ frozen: true, now: new Date(Date.parse(at.now) + 2 * HOUR).toISOString() });
    expect(moved.applied).toBeGreaterThanOrEqual(2);
    expect([await refundState(first.refund), await refundState(second.refund)]).toEqual(["processed", "processed"]);

    // set: a later moment only; an earlier one is refused and nothing changes
    const before = await admin().clock({ merchant: "FROZEN-M" });
    await expect(admin().setClock("2020-01-01T00:00:00Z", { merchant: "FROZEN-M" })).rejects.toMatchObject({
      status: 400,
      error: "clock_backwards",
      message: expect.stringContaining("nothing changed"),
    });
    await expect(admin().setClock("next tuesday", { merchant: "FROZEN-M" })).rejects.toMatchObject({ status: 400 });
    expect(await admin().clock({ merchant: "FROZEN-M" })).toMatchObject({ now: before.now, frozen: true });
    const set = await admin().setClock("2031-06-01T12:00:00Z", { merchant: "FROZEN-M" });
    expect(set).toMatchObject({ now: "2031-06-01T12:00:00.000Z", frozen: true });

    // unfrozen, it runs on from where it stood
    const running = await admin().unfreezeClock({ merchant: "FROZEN-M" });
    expect(running.frozen).toBe(false);
    realTimePasses(1_100);
    expect((await admin().clock({ merchant: "FROZEN-M" })).now).toBe("2031-06-01T12:00:01.100Z");
    // another merchant's time never moved with it
    expect((await admin().clock({ merchant: "M10001" })).now).toBe((await admin().clock()).now);
  });

  test("ctl clock freeze, show, set and unfreeze on the sandbox's clock; a move back exits non-zero and changes nothing", async () => {
    const frozen = await ctl("clock", "freeze");
    expect([frozen.code, frozen.stdout]).toEqual([0, expect.stringMatching(/^clock: frozen at \S+ \(-?\d+s ahead of real time\); 0 due changes applied\n$/)]);
    const standing = (await admin().clock()).now;
    realTimePasses(1_100);
    expect((await admin().health()).time).toBe(standing);
    const shown = await ctl("clock", "show");
    expect(shown.stdout).toBe(
      `clock: frozen at ${standing} (${Math.round((Date.parse(standing) - realNow) / 1000)}s ahead of real time)\n`.replace(/\(-0s/, "(0s"),
    );

    const back = await ctl("clock", "set", "2024-01-01T00:00:00Z");
    expect(back.code).not.toBe(0);
    expect(back.stderr).toMatch(/clock_backwards: a clock only moves forward: that moment is .+ before its time \(.+\); nothing changed/);
    expect((await admin().clock()).now).toBe(standing);

    const target = new Date(Date.parse(standing) + 24 * HOUR).toISOString();
    const set = await ctl("clock", "set", target, "--json");
    expect(set.code).toBe(0);
    expect(JSON.parse(set.stdout)).toMatchObject({ now: target, frozen: true });

    // the state file keeps a frozen clock, and putting it back puts the clock back
    const file = await admin().exportState();
    expect(JSON.parse(file.slice(0, file.indexOf("\n")))).toMatchObject({ clock_frozen_at_ms: Date.parse(target) });

    const unfrozen = await ctl("clock", "unfreeze");
    expect(unfrozen.stdout).toMatch(/^clock: now /);
    realTimePasses(1_100);
    expect(Date.parse((await admin().clock()).now) - Date.parse(target)).toBe(1_100);
    await admin().importState(file, { all: true });
    expect(await admin().clock()).toMatchObject({ now: target, frozen: true });
    await ctl("clock", "unfreeze");
  });

  test("one clock per merchant in the request log: a merchant 2 h on has its requests dated 2 h on, another merchant's at the sandbox's time", async () => {
    await admin()
      .advanceClock("2h", { merchant: "LOGGED-A" })
      .catch(() => undefined); // provisioned by its first request below
    for (const merchant of ["LOGGED-A", "LOGGED-B"])
      await post("/v1/authorise", directPayment({ merchant_id: merchant, account_id: "A1", order_no: nextOrderNo(merchant) }));
    await admin().advanceClock("2h", { merchant: "LOGGED-A" });
    const ahead = async (merchant: string) => {
      await post("/v1/authorise", directPayment({ merchant_id: merchant, account_id: "A1", order_no: nextOrderNo(merchant) }));
      const [entry] = (await admin().requests({ merchant_id: merchant })).slice(-1);
      return Date.parse(entry!.at) - Date.parse((await admin().clock()).now);
    };
    expect(await ahead("LOGGED-A")).toBeGreaterThan(2 * HOUR - 60_000);
    expect(Math.abs(await ahead("LOGGED-B"))).toBeLessThan(60_000);
    // and the HAR of them says the same times
    const har = (await admin().requestsHar({ merchant_id: "LOGGED-A" })) as { log: { entries: { startedDateTime: string }[] } };
    const last = har.log.entries.at(-1)!;
    expect(Date.parse(last.startedDateTime) - Date.parse((await admin().clock()).now)).toBeGreaterThan(2 * HOUR - 60_000);
  });
});
