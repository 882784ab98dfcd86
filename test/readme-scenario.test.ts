// The "write your own scenario" example of docs/scenarios.md is a working scenario.
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import request from "supertest";
import { expect, test } from "vitest";
import { directPayment, makeApp, parseXml } from "./helpers.js";
import { scenarioDir } from "./scenario-helpers.js";

test("the docs/scenarios.md example loads and does what its comments say", async () => {
  const readme = readFileSync(resolve(import.meta.dirname, "..", "docs", "scenarios.md"), "utf8");
  const example = /## Write your own scenario[\s\S]*?```yaml\n([\s\S]*?)```/.exec(readme)?.[1];
  expect(example).toBeDefined();
  const { app } = await makeApp({ scenarios: scenarioDir({ "my-shop.yaml": example! }), scenario: "my-shop" });

  const bigEur = await request(app)
    .post("/v1/authorise")
    .send(directPayment({ currency: "EUR", amount: "600.00", card: "5555555555554444" }));
  expect(parseXml(bigEur.text).order_status).toBe("-1");
  expect(bigEur.headers["x-sandbox-rule"]).toBe("my-shop/slow-everything + my-shop/big-eur-3ds");

  const retry = directPayment({ order_no: `RETRY-${Date.now()}` });
  const first = request(app).post("/v1/authorise").send(retry);
  const raced = await Promise.race([first.then(() => "answered"), new Promise((r) => setTimeout(() => r("hung"), 1200))]);
  expect(raced).toBe("hung");
  expect((await request(app).post("/v1/authorise").send(retry)).status).toBe(500);
  const third = await request(app).post("/v1/authorise").send(retry);
  expect(parseXml(third.text).order_status).toBe("1");
});
