// The gateway examples of docs/operations.md (`curl -s $URL/v1/...`), run as written, top to bottom, against
// one fresh Sandgate: each must do what it shows (no example may depend on one that undid it, such
// as cancelling the payment the capture example just captured).
import { readFileSync } from "node:fs";
import request from "supertest";
import { describe, expect, test } from "vitest";
import { makeApp } from "./helpers.js";
import { readmeExamples as examples } from "./readme-helpers.js";

/** Every status an answer carries (order_status, capture_status, return_status, ...), as text. */
function statuses(value: unknown, out: Record<string, string[]> = {}): Record<string, string[]> {
  if (Array.isArray(value)) value.forEach((v) => statuses(v, out));
  else if (value && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) {
      if (/_status$/.test(k) && typeof v === "string") (out[k] ??= []).push(v);
      else statuses(v, out);
    }
  }
  return out;
}

describe("docs/operations.md examples", () => {
  const list = examples(readFileSync(new URL("../docs/operations.md", import.meta.url), "utf8"));

  test("are found: every operation's example", () => {
    expect(list.map((e) => e.path)).toEqual(
      expect.arrayContaining([
        "/v1/authorise",
        "/v1/checkout",
        "/v1/retrievalTrans",
        "/v1/capture",
        "/v1/review",
        "/v1/cancel",
        "/v1/refund",
        "/v1/retrievalRefund",
        "/v1/payout",
        "/v1/subscription/cancel",
        "/v1/paymentMethods/optimise",
      ]),
    );
  });

  test("run as written, top to bottom, each does what it shows", async () => {
    const { app } = await makeApp();
    for (const e of list) {
      const res = await request(app)
        .post(e.path)
        .set("content-type", e.json ? "application/json" : "application/x-www-form-urlencoded")
        .send(e.body);
      const where = `docs/operations.md line ${e.line}: ${e.path} answered ${res.status} ${res.text.slice(0, 300)}`;
      expect(res.status, where).toBe(200);
      if (res.type === "application/json") {
        const found = statuses(res.body);
        expect(found.return_status ?? ["1"], where).toEqual(["1"]);
        // every order of a batch went through
        const batch = /^\/v1\/(capture|review|cancel|refund)$/.exec(e.path)?.[1];
        if (batch) {
          expect(found[`${batch}_status`], where).toBeDefined();
          for (const s of found[`${batch}_status`]!) expect(s, where).toBe("1");
        }
      } else if (res.type === "application/xml") {
        expect(res.text, where).not.toMatch(/<order_status>0<\/order_status>/);
      }
    }
  });
});
