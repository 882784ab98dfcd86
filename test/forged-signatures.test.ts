// A refusal never helps a forger (docs/security.md). On a shared sandbox in strict mode with random
// keys, an attacker who does not know TEAM-B's key sends TEAM-B's operations with a wrong signature,
// then sends again every 64-hex value the refusal carried (its text, its errors, its headers, its own
// encryption_data): every operation refuses each one, and nothing of TEAM-B's changes. The operator
// finds the expected value in the request log.
import request from "supertest";
import { describe, expect, test } from "vitest";
import { GATEWAY_HANDLERS } from "../src/server/app.js";
import { KEY_SHOWN } from "../src/domain/signature.js";
import { VALID } from "./gateway-bodies.js";
import { createHash } from "node:crypto";
import { directPayment, errorFields, makeApp, parseXml, signRequest, textOf } from "./helpers.js";

type App = Awaited<ReturnType<typeof makeApp>>["app"];

/** What a team has, as the operator API shows it (on one process and on replicas alike). */
async function holdings(app: App, merchant: string) {
  const get = async (path: string) => (await request(app).get(path).query({ merchant_id: merchant }).expect(200)).body;
  const { secret_key: _key, ...shown } = (await request(app).get(`/__sandbox/merchants/${merchant}`).expect(200)).body.merchant;
  return {
    merchant: shown,
    transactions: (await get("/__sandbox/transactions")).transactions,
    refunds: (await get("/__sandbox/refunds")).refunds,
    payouts: (await get("/__sandbox/payouts")).payouts,
  };
}

/** A batch request's signature over its orders too (--batch-signature orders): docs/signatures.md's scheme. */
function signOverOrders(body: Record<string, unknown>, list: string, fields: string[], key: string): string {
  const orders = body[list] as Record<string, unknown>[];
  const values = [body.merchant_id, body.account_id, ...orders.flatMap((o) => fields.map((f) => o[f] ?? ""))].join("");
  return createHash("sha256")
    .update(values + key)
    .digest("hex");
}

const TEAM = "TEAM-B";
// accounts whose ids end in what a refusal signs after them ("0": the JSON refusal's return_status)
const ACCOUNTS = ["A1", "ACC-10"];

/** Every run of 64 hexadecimal characters in the answer, headers included. */
function hexRuns(res: request.Response): string[] {
  const all = `${JSON.stringify(res.headers)}\n${res.text}`;
  return [...new Set(all.match(/[0-9a-fA-F]{64}/g) ?? [])].map((v) => v.toLowerCase());
}

describe("a strict refusal never hands out a signature", () => {
  test("each operation refuses every value a refusal carried, sent again as the signature; TEAM-B's records do not change", async () => {
    const { app } = await makeApp({ signatureMode: "strict", merchantKeys: "random" });
    const key = (await request(app).put(`/__sandbox/merchants/${TEAM}`).expect(200)).body.merchant.secret_key as string;
    // TEAM-B pays 100.00 on each of its accounts with its own key
    const paid: Record<string, string> = {};
    for (const account of ACCOUNTS) {
      const body = directPayment({ merchant_id: TEAM, account_id: account, amount: "100.00" });
      const res = await request(app)
        .post("/v1/authorise")
        .send({ ...body, encryption_data: signRequest("authorise", body, key) })
        .expect(200);
      paid[account] = /<transaction_id>(\d+)</.exec(res.text)![1]!;
    }
    const before = await holdings(app, TEAM);
    const bodyOf = (op: (typeof GATEWAY_HANDLERS)[number], account: string, encryption_data: string) => {
      const body: Record<string, unknown> = { ...VALID[op.name]![0]!, merchant_id: TEAM, account_id: account, encryption_data };
      // aim the batch operations at TEAM-B's payment on that account
      for (const list of ["capture_orders", "refund_orders", "cancel_orders"]) {
        if (Array.isArray(body[list]))
          body[list] = [{ ...(body[list] as object[])[0], transaction_id: paid[account] ?? "1", amount: "100.00", refund_amount: "100.00" }];
      }
      return body;
    };
    // the attacker probes every operation on TEAM-B's accounts and on "ACC-1" (whose JSON refusal,
    // signed, would be the signature of "ACC-10": "TEAM-B" + "ACC-1" + return_status "0")
    const carried = new Set<string>();
    for (const op of GATEWAY_HANDLERS) {
      for (const account of [...ACCOUNTS, "ACC-1"]) {
        const body = bodyOf(op, account, "0".repeat(64));
        const refused = await request(app).post(op.path).send(body);
        expect(refused.status, `${op.name}: ${refused.text}`).toBe(400);
        expect(refused.text).toMatch(/I0014/);
        expect(refused.text).not.toContain(key);
        expect(refused.text).not.toContain(`*${key.slice(-2)}`); // no masked key that shows its ends
        // the refusal names what was signed, in order, with the key masked whole
        expect(refused.text).toContain(op.name === "authorise" || op.name === "checkout" ? "merchant_id, account_id, order_no" : "merchant_id, account_id");
        expect(refused.text).toContain("then the secret key");
        for (const value of hexRuns(refused)) carried.add(value);
      }
    }
    // then sends every value any refusal carried as the signature of every operation on each account
    for (const op of GATEWAY_HANDLERS) {
      for (const account of ACCOUNTS) {
        expect(carried, `${op.name} on ${account}: a refusal carried its signature`).not.toContain(signRequest(op.name, bodyOf(op, account, ""), key));
        for (const value of carried) {
          const again = await request(app)
            .post(op.path)
            .send(bodyOf(op, account, value));
          expect(again.status, `${op.name} on ${account} signed with ${value}: ${again.text}`).toBe(400);
        }
      }
    }
    expect(await holdings(app, TEAM)).toEqual(before);
    expect(before.merchant.accounts.map((a: { account_id: string }) => a.account_id).sort()).toEqual([...ACCOUNTS].sort());
  });

  test("a refusal before the signature check (an unregistered address, a missing field) is not signed either", async () => {
    const { app } = await makeApp({ signatureMode: "strict" });
    // M10002's queries answer only its registered addresses: refused before the signature is looked at
    const query = { merchant_id: "M10002", account_id: "A20001", order_no: "X", encryption_data: "0".repeat(64) };
    const res = await request(app).post("/v1/retrievalTrans").send(query).expect(403);
    expect(res.body.encryption_data).toBe("");
    const missing = await request(app).post("/v1/capture").send({ merchant_id: "M10001", account_id: "A10001", capture_orders: [] });
    expect(missing.status).toBe(400);
    expect(missing.body.encryption_data).toBe("");
  });

  test("the operator finds the expected value and the signing string in the request log; the refusal says so", async () => {
    const { app } = await makeApp({ signatureMode: "strict" });
    const body = directPayment({ order_no: "FORGE-LOG-1", encryption_data: "0".repeat(64) });
    const refused = await request(app).post("/v1/authorise").send(body).expect(400);
    const requestId = refused.get("X-Request-Id")!;
    expect(refused.text).toContain(`request ${requestId}`);
    expect(errorFields(refused.text)).toEqual(["encryption_data"]);
    expect(textOf(parseXml(refused.text).encryption_data)).toBe("");
    const log = (await request(app).get("/__sandbox/requests").query({ order_no: "FORGE-LOG-1" }).expect(200)).body.requests;
    expect(log).toHaveLength(1);
    expect(log[0]).toMatchObject({
      id: requestId,
      http_status: 400,
      signature: { mode: "strict", matched: false, expected: signRequest("authorise", body, "acme_test_key_7f3a9c21") },
    });
    expect(log[0].signature.signingString.endsWith(KEY_SHOWN)).toBe(true);
    expect(log[0].signature.signingString).not.toContain("acme");
  });
});

describe("what a captured signature is worth, and how to end it", () => {
  test("a rotated key: the old one is refused from the next request on (on any replica), the new one signs", async () => {
    const { app } = await makeApp({ signatureMode: "strict", merchantKeys: "random" });
    const old = (await request(app).put("/__sandbox/merchants/TEAM-R").expect(200)).body.merchant.secret_key as string;
    const query = { merchant_id: "TEAM-R", account_id: "A1" };
    await request(app)
      .post("/v1/retrievalTrans")
      .send({ ...query, encryption_data: signRequest("retrievalTrans", query, old) })
      .expect(200);
    const rotated = (await request(app).post("/__sandbox/merchants/TEAM-R/rotate-key").send({}).expect(200)).body.merchant;
    expect(rotated.secret_key).toMatch(/^sk_test_[0-9a-f]{32}$/);
    expect(rotated.secret_key).not.toBe(old);
    // the next requests go to the other replica, then back
    for (let i = 0; i < 2; i++) {
      const refused = await request(app)
        .post("/v1/retrievalTrans")
        .send({ ...query, encryption_data: signRequest("retrievalTrans", query, old) });
      expect(refused.status, refused.text).toBe(400);
      expect(refused.body.return_message).toMatch(/^I0014:/);
      await request(app)
        .post("/v1/retrievalTrans")
        .send({ ...query, encryption_data: signRequest("retrievalTrans", query, rotated.secret_key) })
        .expect(200);
    }
    expect((await request(app).get("/__sandbox/merchants/TEAM-R").expect(200)).body.merchant.secret_key).toBe(rotated.secret_key);
    await request(app).post("/__sandbox/merchants/NOBODY/rotate-key").send({}).expect(404);
  });

  test("with --merchant-keys id a key is sk_test_<id>: rotating is refused and changes nothing", async () => {
    const { app } = await makeApp({ signatureMode: "strict" });
    await request(app).put("/__sandbox/merchants/TEAM-I").expect(200);
    const res = await request(app).post("/__sandbox/merchants/TEAM-I/rotate-key").send({}).expect(409);
    expect(res.body.error).toBe("keys_not_random");
    expect((await request(app).get("/__sandbox/merchants/TEAM-I").expect(200)).body.merchant.secret_key).toBe("sk_test_TEAM-I");
  });

  test("--batch-signature orders: a capture signed over its orders acts for those orders only; by default one value acts for the account", async () => {
    for (const batchSignature of ["envelope", "orders"] as const) {
      const { app } = await makeApp({ signatureMode: "strict", merchantKeys: "random", batchSignature });
      const key = (await request(app).put("/__sandbox/merchants/TEAM-O").expect(200)).body.merchant.secret_key as string;
      const orders = [];
      for (let i = 0; i < 2; i++) {
        const body = directPayment({ merchant_id: "TEAM-O", account_id: "A1", amount: "40.00" });
        const paid = await request(app)
          .post("/v1/authorise")
          .send({ ...body, encryption_data: signRequest("authorise", body, key) })
          .expect(200);
        orders.push({ transaction_id: textOf(parseXml(paid.text).transaction_id), order_no: body.order_no, currency: "USD", amount: "40.00" });
      }
      const first = { merchant_id: "TEAM-O", account_id: "A1", capture_orders: [orders[0]] };
      const fields = ["transaction_id", "order_no", "currency", "amount"];
      const signature = batchSignature === "orders" ? signOverOrders(first, "capture_orders", fields, key) : signRequest("capture", first, key);
      const captured = await request(app)
        .post("/v1/capture")
        .send({ ...first, encryption_data: signature })
        .expect(200);
      expect(captured.body.capture_orders[0].capture_status, captured.text).toBe("1");
      // the same value, captured off the wire, sent with the other order
      const replay = await request(app)
        .post("/v1/capture")
        .send({ ...first, capture_orders: [orders[1]], encryption_data: signature });
      if (batchSignature === "envelope") {
        expect(replay.status, replay.text).toBe(200);
        expect(replay.body.capture_orders[0].capture_status).toBe("1");
      } else {
        expect(replay.status, replay.text).toBe(400);
        expect(replay.body.return_message).toContain(
          "capture_orders.0.transaction_id, capture_orders.0.order_no, capture_orders.0.currency, capture_orders.0.amount, then the secret key",
        );
        // the envelope-only signature is refused too
        const envelopeOnly = { ...first, capture_orders: [orders[1]] };
        await request(app)
          .post("/v1/capture")
          .send({ ...envelopeOnly, encryption_data: signRequest("capture", envelopeOnly, key) })
          .expect(400);
      }
    }
  });
});
