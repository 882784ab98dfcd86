// Ids never come back (docs/security.md): after a reset of one merchant or of everything, a snapshot
// put back or a state file imported, a new payment, payer page and notification never get an id
// issued before, and an old payer page of a payment the reset took away answers "not found", never
// acting on the new one. A receiver that drops repeated notification ids drops nothing real.
// On one process, one Redis and a Cluster (over HTTP only).
import request from "supertest";
import { describe, expect, test } from "vitest";
import { directPayment, makeApp, parseXml, textOf } from "./helpers.js";

type App = Awaited<ReturnType<typeof makeApp>>["app"];

// 4000002760003184 asks for 3-D Secure: a payment, a payer page and (for its notify_url) notifications
const THREEDS = "4000002760003184";

async function threeDsPayment(app: App) {
  const body = directPayment({ card: THREEDS, notify_url: "http://127.0.0.1:9/notify", return_url: "https://shop.example.com/return" });
  const res = await request(app).post("/v1/authorise").send(body).expect(200);
  const xml = parseXml(res.text);
  expect(textOf(xml.order_status)).toBe("-1");
  const page = new URL(textOf(xml.issuer_url)).pathname;
  return { transaction_id: textOf(xml.transaction_id), page };
}

const notificationIds = async (app: App) =>
  ((await request(app).get("/__sandbox/notifications").query({ merchant_id: "M10001" }).expect(200)).body.notifications as { notification_id: string }[]).map(
    (n) => n.notification_id,
  );

const ways: [string, (app: App) => Promise<unknown>, (app: App) => Promise<unknown>][] = [
  ["a reset of the merchant", async () => undefined, (app) => request(app).post("/__sandbox/reset").send({ merchant_id: "M10001" }).expect(200)],
  ["a reset of everything", async () => undefined, (app) => request(app).post("/__sandbox/reset").send({ all: true }).expect(200)],
  [
    "a snapshot put back",
    (app) =>
      request(app)
        .put("/__sandbox/snapshots/before")
        .send({})
        .expect((r) => expect(r.status).toBeLessThan(300)),
    (app) => request(app).post("/__sandbox/snapshots/before/restore").send({ all: true }).expect(200),
  ],
];

describe("ids never come back", () => {
  test.each(ways)("after %s: new payment, page and notification ids; the old page answers not found", async (_name, before, reset) => {
    const { app } = await makeApp();
    await before(app);
    const seen = { transactions: new Set<string>(), pages: new Set<string>(), notifications: new Set<string>() };
    const old = await threeDsPayment(app);
    // a direct payment too: its notification
    await request(app)
      .post("/v1/authorise")
      .send(directPayment({ notify_url: "http://127.0.0.1:9/notify" }))
      .expect(200);
    seen.transactions.add(old.transaction_id);
    seen.pages.add(old.page);
    for (const id of await notificationIds(app)) seen.notifications.add(id);
    expect(seen.notifications.size).toBeGreaterThan(0);
    await reset(app);
    const fresh = await threeDsPayment(app);
    await request(app)
      .post("/v1/authorise")
      .send(directPayment({ notify_url: "http://127.0.0.1:9/notify" }))
      .expect(200);
    expect(seen.transactions.has(fresh.transaction_id), "transaction_id again").toBe(false);
    expect(seen.pages.has(fresh.page), "payer page again").toBe(false);
    const after = await notificationIds(app);
    expect(after.length).toBeGreaterThan(0);
    expect(
      after.filter((id) => seen.notifications.has(id)),
      "notification ids again",
    ).toEqual([]);
    // the old payment's 3-D Secure page is gone, and finishing it does not finish the new one
    await request(app).get(old.page).expect(404);
    const finish = await request(app).post(old.page).set("accept", "application/json").type("form").send({ outcome: "threeds_passed" });
    expect(finish.status).toBe(404);
    const query = await request(app)
      .post("/v1/retrievalTrans")
      .send({ merchant_id: "M10001", account_id: "A10001", transaction_id: fresh.transaction_id, encryption_data: "a".repeat(64) })
      .expect(200);
    expect(query.body.orders_list[0].payment_status, JSON.stringify(query.body)).toBe("1000");
  });

  test("after a state file of the merchant is imported (one written before its payments)", async () => {
    const { app } = await makeApp();
    const file = (await request(app).get("/__sandbox/state").query({ merchant_id: "M10001" }).expect(200)).text;
    const old = await threeDsPayment(app);
    await request(app).put("/__sandbox/state").set("content-type", "application/x-ndjson").send(file).expect(200);
    const fresh = await threeDsPayment(app);
    expect(fresh.transaction_id).not.toBe(old.transaction_id);
    expect(fresh.page).not.toBe(old.page);
    await request(app).get(old.page).expect(404);
  });
});
