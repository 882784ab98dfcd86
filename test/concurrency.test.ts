// Many clients at once against a real listening server: no double capture, no capture of a
// cancelled payment, no refund beyond the capture; with --data, nothing acknowledged is lost.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { startSandbox, type Sandbox } from "../src/server/sandbox.js";
import { ACME, ANY_SIGNATURE, directPayment, parseXml } from "./helpers.js";
import { REPLICA_MODE, replicaSandbox } from "./replica-helpers.js";

const dir = mkdtempSync(join(tmpdir(), "sandgate-concurrency-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ENVELOPE = { merchant_id: ACME.merchant_id, account_id: ACME.account_id, encryption_data: ANY_SIGNATURE };

/** In the replicas project: two Sandgate processes on one Redis behind one address, each request to the next. */
type Running = Pick<Sandbox, "url" | "close">;

async function post(sandbox: Running, path: string, body: Record<string, unknown>) {
  const res = await fetch(`${sandbox.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  return { status: res.status, text: await res.text() };
}

async function paidPayment(sandbox: Running, amount: string) {
  const body = directPayment({ amount });
  const tx = String(parseXml((await post(sandbox, "/v1/authorise", body)).text).transaction_id);
  const ref = { transaction_id: tx, order_no: String(body.order_no), currency: "USD", amount };
  return ref;
}

// with replicas, the --data file names a Redis prefix instead: starting again on it is a restart on the same state
const start = (data?: string): Promise<Running> =>
  REPLICA_MODE
    ? replicaSandbox(data ?? crypto.randomUUID())
    : startSandbox({ port: 0, host: "127.0.0.1", logLevel: "silent", seed: "concurrency", ...(data ? { data } : {}) });

describe("concurrent clients", () => {
  test("60 overlapping refunds of 5.00 on 100.00 captured: exactly 20 accepted, totals exact, all kept after restart", async () => {
    const file = join(dir, "refunds.json");
    const sandbox = await start(file);
    const p = await paidPayment(sandbox, "100.00");
    expect(JSON.parse((await post(sandbox, "/v1/capture", { ...ENVELOPE, capture_orders: [p] })).text).capture_orders[0].capture_status).toBe("1");

    // 30 requests of 2 orders each, all in flight at once
    const responses = await Promise.all(
      Array.from({ length: 30 }, () =>
        post(sandbox, "/v1/refund", {
          ...ENVELOPE,
          refund_orders: [
            { ...p, refund_amount: "5.00" },
            { ...p, refund_amount: "5.00" },
          ],
        }),
      ),
    );
    const results = responses.flatMap((r) => JSON.parse(r.text).refund_orders as Record<string, string>[]);
    const accepted = results.filter((r) => r.refund_status === "1");
    expect(accepted).toHaveLength(20);
    expect(new Set(accepted.map((r) => r.refund_reference_id)).size).toBe(20);
    for (const r of results.filter((x) => x.refund_status === "0")) expect(r.refund_message).toMatch(/^E0403:Payment is already fully refunded/);
    await sandbox.close();

    const again = await start(file);
    const search = JSON.parse((await post(again, "/v1/retrievalRefund", { ...ENVELOPE, transaction_id: p.transaction_id })).text);
    expect(search.refund_orders).toHaveLength(20);
    const total = search.refund_orders.reduce((sum: number, r: Record<string, string>) => sum + Math.round(Number(r.refund_amount) * 100), 0);
    expect(total).toBe(10_000);
    expect(search.refund_orders[0].payment_status).toBe("4100");
    await again.close();
  });

  test("captures and cancels racing on one payment: exactly one wins", async () => {
    const sandbox = await start();
    const body = directPayment({ amount: "50.00" });
    const tx = String(parseXml((await post(sandbox, "/v1/authorise", body)).text).transaction_id);
    const ref = { transaction_id: tx, order_no: String(body.order_no), currency: "USD", amount: "50.00" };
    const calls = Array.from({ length: 40 }, (_, i) =>
      i % 2 === 0 ? post(sandbox, "/v1/capture", { ...ENVELOPE, capture_orders: [ref] }) : post(sandbox, "/v1/cancel", { ...ENVELOPE, cancel_orders: [ref] }),
    );
    const results = (await Promise.all(calls)).map((r) => {
      const json = JSON.parse(r.text);
      const order = (json.capture_orders ?? json.cancel_orders)[0];
      return order.capture_status ?? order.cancel_status;
    });
    expect(results.filter((s) => s === "1")).toHaveLength(1);
    await sandbox.close();
  });
});
