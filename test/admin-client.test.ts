// The typed operator client, used as a merchant's test suite would: sandbox.admin against the
// Sandgate it started, createAdminClient(url, token) against a running one. Every call is real HTTP.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createAdminClient, SandgateAdminError, startSandbox, type Sandbox } from "../src/index.js";
import { ANY_SIGNATURE, directPayment, parseXml, textOf } from "./helpers.js";

describe("the operator client", () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await startSandbox({ port: 0, host: "127.0.0.1", seed: "client", adminToken: "ops-token" });
  });
  afterAll(() => sandbox?.close());

  const pay = async (fields: Record<string, unknown>) => {
    const res = await fetch(`${sandbox.url}/v1/authorise`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(directPayment(fields)),
    });
    return parseXml(await res.text());
  };
  const post = (path: string, body: object) =>
    fetch(`${sandbox.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) }).then(
      (r) => r.json() as Promise<Record<string, unknown>>,
    );
  const M = { merchant_id: "CLIENT-1", account_id: "ACC-1" };

  test("scenarios: global, a merchant's binding, and back", async () => {
    expect(await sandbox.admin.setScenario("declines")).toEqual({ global: "declines" });
    expect(textOf((await pay({ order_no: "C-1" })).order_status)).toBe("0");
    expect(await sandbox.admin.bindScenario(M.merchant_id, "happy-path")).toEqual({ merchant_id: M.merchant_id, scenario: "happy-path" });
    expect(textOf((await pay({ ...M, order_no: "C-2", card: "4000000000000002" })).order_status)).toBe("1");
    expect((await sandbox.admin.scenarios()).bindings).toEqual({ [M.merchant_id]: "happy-path" });
    await sandbox.admin.unbindScenario(M.merchant_id);
    await sandbox.admin.setScenario("default");
    expect((await sandbox.admin.health()).scenario).toBe("default");
  });

  test("a payment's life driven from the test: complete a 3-D Secure challenge, capture, settle a refund, read the log", async () => {
    const challenged = await pay({ ...M, order_no: "C-3DS", card: "4000002760003184" });
    const id = textOf(challenged.transaction_id);
    const done = await sandbox.admin.completePayment(id, "threeds_passed");
    expect(done).toMatchObject({ transaction_id: id, order_status: "1", payment_status: "2000", stage: "" });
    const order = { transaction_id: id, order_no: "C-3DS", currency: "USD", amount: "10.00" };
    await post("/v1/capture", { ...M, encryption_data: ANY_SIGNATURE, capture_orders: [order] });
    await post("/v1/refund", { ...M, encryption_data: ANY_SIGNATURE, refund_orders: [{ ...order, refund_amount: "4.00" }] });
    const [refund] = await sandbox.admin.refunds({ transaction_id: id });
    expect(refund!.state).toBe("accepted");
    expect((await sandbox.admin.settleRefund(refund!.refund_reference_id, "failed")).state).toBe("failed");
    const [tx] = await sandbox.admin.transactions({ merchant_id: M.merchant_id, order_no: "C-3DS" });
    expect(tx!.history!.map((h) => h.event)).toEqual(expect.arrayContaining(["created (direct payment)", "capture"]));
    const log = await sandbox.admin.requests({ merchant_id: M.merchant_id, operation: "refund" });
    expect(log.map((r) => r.operation)).toEqual(["refund"]);
    expect((await sandbox.admin.coverage(M.merchant_id)).operations.find((o) => o.operation === "authorise")!.produced).toMatchObject({ threeds_passed: 1 });
  });

  test("the clock, subscriptions and a reset of one merchant", async () => {
    const before = await sandbox.admin.clock();
    const moved = await sandbox.admin.advanceClock("2h");
    expect(moved.offset_ms - before.offset_ms).toBe(2 * 3600 * 1000);
    expect((await sandbox.admin.advanceClock(60)).offset_ms - moved.offset_ms).toBe(60_000);
    await pay({ ...M, order_no: "C-SUB", subscription: { interval: "month", interval_count: "1" } });
    const [sub] = await sandbox.admin.subscriptions({ merchant_id: M.merchant_id });
    expect((await sandbox.admin.chargeSubscription(sub!.recurring_id)).deductions).toBe(2);
    expect(await sandbox.admin.reset(M.merchant_id)).toEqual({ reset: M.merchant_id });
    expect(await sandbox.admin.transactions({ merchant_id: M.merchant_id })).toEqual([]);
  });

  test("checkReceiver: the report of a receiver that acknowledges everything, its probes in the notifications log; bad input throws", async () => {
    const paths: string[] = [];
    const receiver = createServer((req, res) => {
      paths.push(req.url ?? "");
      req.resume().on("end", () => res.end("ok"));
    });
    await new Promise<void>((done) => receiver.listen(0, "127.0.0.1", done));
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/notify`;
    try {
      const report = await sandbox.admin.checkReceiver({ url, merchant_id: "M10001" });
      expect(report).toMatchObject({ url, merchant_id: "M10001", payment: "created", stopped: "", passed: false });
      expect(report.check).toMatch(/^chk_/);
      expect(report.probes).toHaveLength(16);
      const verdicts = Object.fromEntries(report.probes.map((p) => [p.probe, p.verdict]));
      expect(verdicts).toMatchObject({
        valid: "pass",
        duplicate: "pass",
        wrong_key: "fail",
        tampered_amount: "fail",
        signature_missing: "fail",
        stale: "warning",
        malformed_json: "fail",
      });
      expect(report.summary.pass + report.summary.warning + report.summary.fail).toBe(16);
      expect(new Set(paths)).toEqual(new Set(["/notify"]));
      const logged = await createAdminClient(sandbox.url, "ops-token").notifications({ check: report.check });
      expect(logged.length).toBeGreaterThan(0);
      expect(logged.every((n) => n.check === report.check && n.url === url)).toBe(true);

      const given = await sandbox.admin.checkReceiver({ url, merchant_id: "M10001", transaction_id: report.transaction_id, key: "another_key" });
      expect(given).toMatchObject({ payment: "given", transaction_id: report.transaction_id });
    } finally {
      receiver.closeAllConnections();
      await new Promise<void>((done) => receiver.close(() => done()));
    }
    const unknown = await sandbox.admin.checkReceiver({ url, merchant_id: "NOPE-1" }).catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(SandgateAdminError);
    expect(unknown).toMatchObject({ status: 400, error: "unknown_merchant" });
    expect(await sandbox.admin.checkReceiver({ url: "ftp://shop.example/notify", merchant_id: "M10001" }).catch((e: unknown) => e)).toMatchObject({
      status: 400,
      error: "invalid_url",
    });
  });

  test("an error answer throws SandgateAdminError with the API's status and code; a remote client needs the token", async () => {
    const missing = await sandbox.admin.completePayment("0000000000000000", "paid").catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(SandgateAdminError);
    expect(missing).toMatchObject({ status: 404, error: "transaction_not_found" });
    const remote = createAdminClient(sandbox.url, "ops-token");
    expect((await remote.health()).status).toBe("ok");
    expect((await remote.scenarios()).global).toBe("default");
    const wrong = await createAdminClient(sandbox.url, "nope")
      .scenarios()
      .catch((e: unknown) => e);
    expect(wrong).toMatchObject({ status: 401 });
  });
});
