// The coverage report: per merchant, which rules of the scenarios in use decided answers (and how
// often), and which outcomes of the catalogue each operation never produced — over HTTP (JSON and
// Markdown), on the dashboard, and written at shutdown with --coverage-report.
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import request from "supertest";
import { describe, expect, test } from "vitest";
import { startSandbox } from "../src/server/sandbox.js";
import type { CoverageReport } from "../src/scenarios/coverage.js";
import { ANY_SIGNATURE, directPayment, makeApp, parseXml, textOf } from "./helpers.js";

const MERCHANT = { merchant_id: "CI-COV-1", account_id: "ACC-1" };

/** A CI suite's traffic as merchant CI-COV-1: an approval, a decline, a 3-D Secure challenge passed, a capture and a refund that fails later. */
async function suite(app: Parameters<typeof request>[0]) {
  const pay = async (fields: Record<string, unknown>) =>
    parseXml(
      (
        await request(app)
          .post("/v1/authorise")
          .send(directPayment({ ...MERCHANT, ...fields }))
      ).text,
    );
  const approved = await pay({ card: "4242424242424242" });
  await pay({ card: "4000000000000002" });
  const challenged = await pay({ card: "4000002760003184" });
  expect(
    (
      await request(app)
        .post(`/__sandbox/payments/${textOf(challenged.transaction_id)}/complete`)
        .send({ outcome: "threeds_passed" })
    ).status,
  ).toBe(200);
  const order = { transaction_id: textOf(approved.transaction_id), order_no: textOf(approved.order_no), currency: "USD", amount: "10.00" };
  await request(app)
    .post("/v1/capture")
    .send({ ...MERCHANT, encryption_data: ANY_SIGNATURE, capture_orders: [order] });
  await request(app)
    .post("/v1/refund")
    .send({ ...MERCHANT, encryption_data: ANY_SIGNATURE, refund_orders: [{ ...order, refund_amount: "1.13" }] });
}

const answersOf = (r: CoverageReport, scenario: string) =>
  Object.fromEntries(r.scenarios.find((s) => s.name === scenario)!.rules.map((x) => [x.rule, x.answers]));
const operation = (r: CoverageReport, name: string) => r.operations.find((o) => o.operation === name)!;

describe("GET /__sandbox/coverage", () => {
  test("per merchant: the rules that answered and how often, the outcomes produced and those never produced", async () => {
    const { app } = await makeApp();
    await suite(app);
    const report = (await request(app).get("/__sandbox/coverage").query({ merchant_id: MERCHANT.merchant_id })).body as CoverageReport;
    expect(report.merchant_id).toBe(MERCHANT.merchant_id);
    expect(report.scenarios.map((s) => s.name)).toEqual(["default"]);
    const answers = answersOf(report, "default");
    expect(answers).toMatchObject({
      "default/visa-approve": 1,
      "default/decline-generic": 1,
      "default/threeds-challenge": 1,
      "default/refund-fails-later": 1,
      "default/decline-expired-card": 0,
      "default/payout-completes": 0,
    });
    expect(operation(report, "authorise").produced).toEqual({ approved: 1, do_not_honor: 1, threeds_required: 1, threeds_passed: 1 });
    expect(operation(report, "authorise").never).toEqual(expect.arrayContaining(["expired_card", "stolen_card", "risk_review", "apm_expired"]));
    expect(operation(report, "authorise").never).not.toContain("approved");
    expect(operation(report, "capture")).toEqual({ operation: "capture", produced: { captured: 1 }, never: ["capture_declined"] });
    expect(operation(report, "refund").produced).toEqual({ refund_fails_later: 1 });
    expect(operation(report, "refund").never).toEqual(["accepted", "refund_declined", "refund_processed_later"]);
    expect(operation(report, "payout").produced).toEqual({});

    // another merchant's suite is its own
    const other = (await request(app).get("/__sandbox/coverage").query({ merchant_id: "CI-COV-2" })).body as CoverageReport;
    expect(other.scenarios).toEqual([]);
    expect(operation(other, "authorise").produced).toEqual({});
  });

  test("as Markdown for a CI summary; cleared on request, not by a state reset", async () => {
    const { app } = await makeApp();
    await suite(app);
    await request(app).post("/__sandbox/reset").send({ all: true });
    const md = await request(app).get("/__sandbox/coverage").query({ merchant_id: MERCHANT.merchant_id, format: "markdown" });
    expect(md.type).toBe("text/markdown");
    expect(md.text).toContain("# Sandgate coverage of merchant CI-COV-1");
    expect(md.text).toContain("| `default/refund-fails-later` | 1 |");
    expect(md.text).toContain("| `default/decline-expired-card` | never |");
    expect(md.text).toMatch(/\| refund \| refund_fails_later ×1 \| accepted, refund_declined, refund_processed_later \|/);
    expect((await request(app).delete("/__sandbox/coverage").query({ merchant_id: MERCHANT.merchant_id })).status).toBe(200);
    expect(((await request(app).get("/__sandbox/coverage").query({ merchant_id: MERCHANT.merchant_id })).body as CoverageReport).scenarios).toEqual([]);
  });

  test("the dashboard shows it, never-answering rules and never-produced outcomes marked", async () => {
    const { app } = await makeApp();
    await suite(app);
    const page = await request(app).get("/__sandbox/ui/coverage").query({ merchant_id: MERCHANT.merchant_id });
    expect(page.status).toBe(200);
    expect(page.type).toBe("text/html");
    // the rules that never answered, folded under the ones that did
    expect(page.text).toMatch(
      /<details class="never"><summary>\d+ rules never answered<\/summary><p>[^<]*(<code>[^<]+<\/code> )*<code>default\/decline-expired-card<\/code>/,
    );
    expect(page.text).toContain("refund_fails_later ×1");
  });
});

describe("--coverage-report", () => {
  test("writes the report, JSON and Markdown, when Sandgate stops", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "sandgate-coverage-")), "reports", "sandgate");
    const sandbox = await startSandbox({ port: 0, host: "127.0.0.1", coverageReport: path });
    const res = await fetch(`${sandbox.url}/v1/authorise`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(directPayment({ ...MERCHANT })),
    });
    expect(res.status).toBe(200);
    expect(existsSync(`${path}.json`)).toBe(false);
    await sandbox.close();
    const report = JSON.parse(readFileSync(`${path}.json`, "utf8")) as CoverageReport;
    expect(report.merchant_id).toBeNull();
    expect(answersOf(report, "default")["default/visa-approve"]).toBe(1);
    expect(readFileSync(`${path}.md`, "utf8")).toContain("| `default/refund-fails-later` | never |");
  });
});
