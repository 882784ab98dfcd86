// The scenario engine: selection precedence, nth-call sequences, conditions, faults, reload,
// broken files, extends, the published JSON Schema.
import { mkdtempSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import request from "supertest";
import { afterEach, describe, expect, test } from "vitest";
import { createDeps, startSandbox, type Sandbox } from "../src/server/sandbox.js";
import { scenarioSchemaJson } from "../src/scenarios/json-schema.js";
import { ACME, directPayment, makeApp, parseXml, storedTransactions } from "./helpers.js";
import { until } from "./waiting.js";
import { ENVELOPE, pay } from "./lifecycle-helpers.js";
import { SHIPPED, scenarioDir } from "./scenario-helpers.js";

const statusOf = (text: string) => String(parseXml(text).order_status);

describe("which scenario applies", () => {
  test("header beats merchant binding beats global; unbinding falls back", async () => {
    const { app } = await makeApp();
    const decline = "4242424242424242"; // approved by default, declined by `declines`, held by `risk-review`
    const payAs = (headers: Record<string, string> = {}) =>
      request(app)
        .post("/v1/authorise")
        .set(headers)
        .send(directPayment({ card: decline }));

    expect(statusOf((await payAs()).text)).toBe("1");
    expect((await request(app).put("/__sandbox/scenarios/global").send({ name: "declines" })).status).toBe(200);
    expect(statusOf((await payAs()).text)).toBe("0");
    expect((await request(app).put(`/__sandbox/scenarios/bindings/${ACME.merchant_id}`).send({ name: "risk-review" })).status).toBe(200);
    expect(statusOf((await payAs()).text)).toBe("-2");
    const viaHeader = await payAs({ "X-Sandbox-Scenario": "happy-path" });
    expect(statusOf(viaHeader.text)).toBe("1");
    expect(viaHeader.headers["x-sandbox-rule"]).toBe("happy-path/approve-every-payment");
    expect((await request(app).delete(`/__sandbox/scenarios/bindings/${ACME.merchant_id}`)).status).toBe(200);
    expect(statusOf((await payAs()).text)).toBe("0");

    const list = await request(app).get("/__sandbox/scenarios");
    expect(list.body.global).toBe("declines");
    expect(list.body.bindings).toEqual({});
  });

  test("operator calls refuse unknown scenarios and malformed bodies", async () => {
    const { app } = await makeApp();
    expect((await request(app).put("/__sandbox/scenarios/global").send({ name: "nope" })).status).toBe(404);
    expect((await request(app).put("/__sandbox/scenarios/global").send({ scenario: "default" })).status).toBe(400);
    expect((await request(app).put("/__sandbox/scenarios/bindings/M1").send({ name: "nope" })).status).toBe(404);
    expect((await request(app).delete("/__sandbox/scenarios/bindings/never-bound")).status).toBe(404);
    expect((await request(app).get("/__sandbox/scenarios/declines")).body.rules[0]).toMatchObject({ from: "declines" });
    expect((await request(app).get("/__sandbox/scenarios/nope")).status).toBe(404);
  });

  test("two merchants bound to different scenarios are served at the same time", async () => {
    const sandbox = await startSandbox({ port: 0, host: "127.0.0.1", logLevel: "silent", seed: "two" });
    try {
      const put = (merchant: string, name: string) =>
        fetch(`${sandbox.url}/__sandbox/scenarios/bindings/${merchant}`, {
          method: "PUT",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ name }),
        });
      await put("CI-JOB-A", "declines");
      await put("CI-JOB-B", "3ds");
      const payFor = async (merchant: string) => {
        const res = await fetch(`${sandbox.url}/v1/authorise`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(directPayment({ merchant_id: merchant, account_id: "ACC" })),
        });
        return statusOf(await res.text());
      };
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => payFor(i % 2 ? "CI-JOB-B" : "CI-JOB-A")));
      expect(results.filter((_, i) => i % 2 === 0)).toEqual(Array(10).fill("0"));
      expect(results.filter((_, i) => i % 2 === 1)).toEqual(Array(10).fill("-1"));
    } finally {
      await sandbox.close();
    }
  });
});

describe("rules", () => {
  const custom = {
    name: "custom",
    description: "test rules",
    rules: [
      { id: "tagged", when: { operation: "authorise", note: "tag" }, then: { continue: true, fields: { connector: "Tagged Connector" } } },
      { id: "first-500", when: { operation: "authorise", order_no: { prefix: "SEQ-" }, nth: 1 }, then: { status: 500 } },
      { id: "second-503", when: { operation: "authorise", order_no: { prefix: "SEQ-" }, nth: 2 }, then: { status: 503, process: true } },
      { id: "big", when: { operation: "authorise", amount: { gt: 100, lte: 200 } }, then: { outcome: "insufficient_funds" } },
      { id: "regex", when: { operation: "authorise", shopper_email: { regex: "^fraud\\+" } }, then: { outcome: "risk_reject" } },
      { id: "one-of", when: { operation: "authorise", currency: ["JPY", "KRW"] }, then: { outcome: "do_not_honor" } },
      { id: "not", when: { operation: "authorise", billing_country: { not: ["US", "GB", ""] } }, then: { outcome: "risk_review" } },
      { id: "nested", when: { operation: "authorise", "subscription.interval": "year" }, then: { outcome: "expired_card" } },
      { id: "fields", when: { operation: "authorise", note: { suffix: "override" } }, then: { fields: { risk_score: 99 } } },
      { id: "else", when: { operation: "authorise" }, then: { outcome: "approved" } },
    ],
  };

  async function appWithCustom() {
    return makeApp({ scenarios: scenarioDir({ "custom.json": custom }), scenario: "custom" });
  }

  test("nth call for the same order_no: 500, then 503 that still takes effect, then success", async () => {
    const { app } = await appWithCustom();
    const body = directPayment({ order_no: `SEQ-${Date.now()}` });
    const count = async () => (await storedTransactions(app, { order_no: String(body.order_no) })).length;
    const first = await request(app).post("/v1/authorise").send(body);
    expect(first.status).toBe(500);
    expect(parseXml(first.text).result_info).toMatch(/^I0503:/);
    expect(first.headers["x-sandbox-rule"]).toBe("custom/first-500");
    expect(await count()).toBe(0); // a failed attempt has no effect
    const second = await request(app).post("/v1/authorise").send(body);
    expect(second.status).toBe(503);
    expect(await count()).toBe(1); // process: true — the payment went through, the answer says otherwise
    const third = await request(app).post("/v1/authorise").send(body);
    expect(third.status).toBe(200);
    expect(third.headers["x-sandbox-rule"]).toBe("custom/else");
    // another order starts its own count
    expect(
      (
        await request(app)
          .post("/v1/authorise")
          .send(directPayment({ order_no: `SEQ-other-${Date.now()}` }))
      ).status,
    ).toBe(500);
  });

  test.each([
    ["a numeric range", { amount: "150.00" }, "D0051", "custom/big"],
    ["just outside the range", { amount: "200.01" }, "0000", "custom/else"],
    ["a regex", { shopper_email: "fraud+1@example.com" }, "R0002", "custom/regex"],
    ["one of a list", { currency: "JPY" }, "D0005", "custom/one-of"],
    ["not in a list", { billing_country: "BR" }, "R0001", "custom/not"],
    ["a nested path", { subscription: { interval: "year", interval_count: "1" } }, "D0054", "custom/nested"],
  ])("%s", async (_name, change, code, rule) => {
    const { app } = await appWithCustom();
    const res = await request(app).post("/v1/authorise").send(directPayment(change));
    expect(String(parseXml(res.text).result_info).split(":")[0]).toBe(code);
    expect(res.headers["x-sandbox-rule"]).toBe(rule);
  });

  test("then.fields set response children; continue adds effects and lets the next rule decide", async () => {
    const { app } = await appWithCustom();
    const res = await request(app)
      .post("/v1/authorise")
      .send(directPayment({ note: "override" }));
    expect(parseXml(res.text).risk_score).toBe("99");
    const tagged = await request(app)
      .post("/v1/authorise")
      .send(directPayment({ note: "tag", amount: "150.00" }));
    expect(parseXml(tagged.text).connector).toBe("Tagged Connector");
    expect(String(parseXml(tagged.text).result_info)).toMatch(/^D0051:/);
    expect(tagged.headers["x-sandbox-rule"]).toBe("custom/tagged + custom/big");
  });

  test("the request log records the rule", async () => {
    const { app } = await appWithCustom();
    const body = directPayment({ currency: "KRW" });
    await request(app).post("/v1/authorise").send(body);
    const log = await request(app).get(`/__sandbox/requests?order_no=${body.order_no}`);
    expect(log.body.requests[0].rule).toBe("custom/one-of");
  });
});

describe("faults over a real connection", () => {
  let sandbox: Sandbox | undefined;
  afterEach(async () => {
    await sandbox?.close();
    sandbox = undefined;
  });

  const faults = {
    name: "faults",
    description: "one fault per order_no prefix",
    rules: [
      { id: "reset", when: { order_no: { prefix: "RESET" } }, then: { fault: "reset" } },
      { id: "empty", when: { order_no: { prefix: "EMPTY" } }, then: { fault: "empty", process: true } },
      { id: "malformed", when: { order_no: { prefix: "MALFORMED" } }, then: { fault: "malformed" } },
      { id: "hang", when: { order_no: { prefix: "HANG" } }, then: { fault: "hang" } },
      { id: "slow", when: { order_no: { prefix: "SLOW" } }, then: { latency: 400 } },
      { id: "else", when: {}, then: { outcome: "approved" } },
    ],
  };

  async function post(order_no: string, signal?: AbortSignal) {
    return fetch(`${sandbox!.url}/v1/authorise`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-sandbox-scenario": "faults" },
      body: JSON.stringify(directPayment({ order_no })),
      ...(signal ? { signal } : {}),
    });
  }

  test("reset, empty, malformed, hang and latency each do what they say", async () => {
    sandbox = await startSandbox({ port: 0, host: "127.0.0.1", logLevel: "silent", scenarios: scenarioDir({ "faults.json": faults }) });
    const count = (prefix: string) => sandbox!.deps.store.data.transactions.filter((t) => t.order_no.startsWith(prefix)).length;

    await expect(post("RESET-1")).rejects.toThrow();
    expect(count("RESET")).toBe(0);

    const empty = await post("EMPTY-1");
    expect(empty.status).toBe(200);
    expect(await empty.text()).toBe("");
    expect(count("EMPTY")).toBe(1);

    const malformed = await post("MALFORMED-1");
    const text = await malformed.text();
    expect(text.startsWith("<?xml")).toBe(true);
    expect(text).not.toContain("</respon>");

    await expect(post("HANG-1", AbortSignal.timeout(500))).rejects.toThrow(/abort|timeout/i);
    // the server is still fine
    expect((await post("OK-1")).status).toBe(200);

    const started = performance.now();
    expect((await post("SLOW-1")).status).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(380);
  });
});

describe("scenario files", () => {
  test("YAML and JSON both load; extends replaces a parent's rule in place", async () => {
    const dir = scenarioDir({
      "child.yaml":
        "name: child\ndescription: overrides the default catch-all\nextends: default\nrules:\n  - id: approve-everything-else\n    when: { operation: authorise }\n    then: { outcome: do_not_honor }\n",
    });
    const deps = await createDeps({ logLevel: "silent", scenarios: dir, scenario: "child" });
    const ids = deps.scenarios.get("child")!.rules.map((r) => `${r.from}/${r.id}`);
    expect(ids.indexOf("child/approve-everything-else")).toBeGreaterThan(ids.indexOf("default/decline-generic"));
    expect(ids).not.toContain("default/approve-everything-else");
  });

  test("a rule that `replaces` a parent's rule takes its place under its own id, and answers with it", async () => {
    const dir = scenarioDir({
      "child.yaml":
        "name: child\ndescription: declines the catch-all\nextends: default\nrules:\n  - id: decline-everything-else\n    replaces: approve-everything-else\n    when: { operation: authorise }\n    then: { outcome: do_not_honor }\n",
    });
    const { app } = await makeApp({ scenarios: dir, scenario: "child" });
    const child = (await request(app).get("/__sandbox/scenarios/child")).body as { rules: { from: string; id: string }[] };
    const ids = child.rules.map((r) => `${r.from}/${r.id}`);
    expect(ids.indexOf("child/decline-everything-else")).toBeGreaterThan(ids.indexOf("default/visa-approve"));
    expect(ids).not.toContain("default/approve-everything-else");
    const res = await request(app)
      .post("/v1/authorise")
      .send(directPayment({ card: "5555555555554444" }));
    expect(statusOf(res.text)).toBe("0");
    expect(res.headers["x-sandbox-rule"]).toBe("child/decline-everything-else");
  });

  test.each([
    ["a rule without then", { name: "bad", description: "x", rules: [{ id: "r", when: {} }] }, /bad\.json: at rules\.0\.then: /],
    [
      "an unknown outcome",
      { name: "bad", description: "x", rules: [{ id: "r", when: { operation: "capture" }, then: { outcome: "approved" } }] },
      /bad\.json: at rules\.0\.then\.outcome: "approved" is not an outcome of capture/,
    ],
    [
      "a misspelt operation",
      { name: "bad", description: "x", rules: [{ id: "r", when: { operation: ["capture", "captur"] }, then: {} }] },
      /bad\.json: at rules\.0\.when\.operation: "captur" is not an operation/,
    ],
    [
      "a bad regex",
      { name: "bad", description: "x", rules: [{ id: "r", when: { note: { regex: "(" } }, then: {} }] },
      /bad\.json: at rules\.0\.when\.note.*regular expression/,
    ],
    [
      "an unknown key",
      { name: "bad", description: "x", rules: [{ id: "r", when: {}, then: { outcomes: "approved" } }] },
      /bad\.json: at rules\.0\.then: .*outcomes/,
    ],
    [
      "a rule replacing what no parent has",
      { name: "bad", description: "x", extends: "default", rules: [{ id: "r", replaces: "ghost", when: {}, then: {} }] },
      /bad\.json: at rules: "r" replaces "ghost", which no parent scenario has/,
    ],
    [
      "a response field that cannot be an XML element",
      { name: "bad", description: "x", rules: [{ id: "r", when: {}, then: { fields: { "a<b": "x" } } }] },
      /bad\.json: at rules\.0\.then\.fields\.a<b: a field name is letters/,
    ],
    ["a name unlike the file", { name: "other", description: "x", rules: [] }, /bad\.json: at name: "other" must equal the file name "bad"/],
    ["an extends cycle", { name: "bad", description: "x", extends: "bad", rules: [] }, /bad\.json: at extends: cycle/],
    ["a missing parent", { name: "bad", description: "x", extends: "ghost", rules: [] }, /bad\.json: at extends: no valid scenario "ghost"/],
  ])("%s stops the start with file, path and reason", async (_name, content, message) => {
    await expect(createDeps({ logLevel: "silent", scenarios: scenarioDir({ "bad.json": content }) })).rejects.toThrow(message);
  });

  test("broken YAML is reported with its file", async () => {
    await expect(createDeps({ logLevel: "silent", scenarios: scenarioDir({ "bad.yaml": "name: [unclosed" }) })).rejects.toThrow(/bad\.yaml: cannot parse/);
  });

  test("an edited file reloads without restart; a broken edit keeps the previous version and is reported", async () => {
    const dir = scenarioDir({
      "live.json": { name: "live", description: "edited by the test", rules: [{ id: "v1", when: {}, then: { outcome: "approved" } }] },
    });
    const sandbox = await startSandbox({ port: 0, host: "127.0.0.1", logLevel: "silent", scenarios: dir, scenario: "live" });
    try {
      const ruleNow = async () =>
        (
          await fetch(`${sandbox.url}/v1/authorise`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(directPayment()) })
        ).headers.get("x-sandbox-rule");
      const waitFor = (expected: string) => until(async () => (await ruleNow()) === expected);
      expect(await ruleNow()).toBe("live/v1");
      writeFileSync(
        join(dir, "live.json"),
        JSON.stringify({ name: "live", description: "edited", rules: [{ id: "v2", when: {}, then: { outcome: "do_not_honor" } }] }),
      );
      await waitFor("live/v2");

      writeFileSync(join(dir, "live.json"), "{ not json");
      // once the edit was read (and refused), the scenario in force is still the last good one
      const errors = async () => ((await (await fetch(`${sandbox.url}/__sandbox/scenarios`)).json()) as { errors: string[] }).errors.join("\n");
      await until(async () => /live\.json: cannot parse/.test(await errors()));
      expect(await ruleNow()).toBe("live/v2");
      const reload = await fetch(`${sandbox.url}/__sandbox/scenarios/reload`, { method: "POST" });
      expect(reload.status).toBe(422);
    } finally {
      await sandbox.close();
    }
  });

  test("a merchant's own folder adds to the shipped scenarios: extends default works, theirs win on a name, and an edit made by replacing the file (sed -i) reloads", async () => {
    // only the merchant's files: no copy of the shipped ones
    const dir = mkdtempSync(join(tmpdir(), "merchant-scenarios-"));
    const mine = (description: string) =>
      `name: my-shop\ndescription: ${description}\nextends: default\nrules:\n  - id: big-declined\n    when: { operation: authorise, amount: { gte: 500 } }\n    then: { outcome: do_not_honor }\n`;
    writeFileSync(join(dir, "my-shop.yaml"), mine("first"));
    writeFileSync(
      join(dir, "declines.yaml"),
      "name: declines\ndescription: the merchant's own declines\nrules:\n  - id: all\n    when: {}\n    then: { outcome: expired_card }\n",
    );
    const sandbox = await startSandbox({ port: 0, host: "127.0.0.1", scenarios: dir, scenario: "my-shop" });
    try {
      const pay = async (overrides: Record<string, unknown>, headers: Record<string, string> = {}) =>
        (
          await fetch(`${sandbox.url}/v1/authorise`, {
            method: "POST",
            headers: { "content-type": "application/json", ...headers },
            body: JSON.stringify(directPayment(overrides)),
          })
        ).headers.get("x-sandbox-rule");
      expect(await pay({ amount: "600.00" })).toBe("my-shop/big-declined");
      expect(await pay({ amount: "10.00" })).toBe("default/visa-approve");
      expect(await pay({}, { "X-Sandbox-Scenario": "declines" })).toBe("declines/all");
      expect(await pay({}, { "X-Sandbox-Scenario": "3ds" })).toBe("3ds/visa-challenged");

      // sed -i writes a new file and renames it over the old one: a new inode
      writeFileSync(join(dir, ".my-shop.tmp"), mine("second").replace("gte: 500", "gte: 5"));
      renameSync(join(dir, ".my-shop.tmp"), join(dir, "my-shop.yaml"));
      await until(async () => (await pay({ amount: "10.00" })) === "my-shop/big-declined");
      expect(await pay({ amount: "10.00" })).toBe("my-shop/big-declined");
    } finally {
      await sandbox.close();
    }
  });

  test("the published JSON Schema matches the code, and every shipped file points at it", () => {
    expect(readFileSync(join(SHIPPED, "scenario.schema.json"), "utf8")).toBe(scenarioSchemaJson());
    expect(readFileSync(join(SHIPPED, "default.json"), "utf8")).toContain('"$schema": "./scenario.schema.json"');
    for (const name of [
      "happy-path",
      "declines",
      "3ds",
      "risk-review",
      "partial-batch-failures",
      "refunds-fail-later",
      "payout-failures",
      "slow-and-flaky",
      "notifications-chaos",
    ]) {
      expect(readFileSync(join(SHIPPED, `${name}.yaml`), "utf8")).toMatch(/^# yaml-language-server: \$schema=\.\/scenario\.schema\.json/);
    }
  });
});

describe("faults leave no trace unless asked", () => {
  test("a 5xx rule without process leaves the batch unapplied", async () => {
    const { app } = await makeApp({
      scenarios: scenarioDir({
        "down.json": {
          name: "down",
          description: "captures fail",
          rules: [{ id: "down", when: { operation: "capture", order_no: { present: false } }, then: { status: 502 } }],
        },
      }),
    });
    const p = await pay(app);
    const res = await request(app)
      .post("/v1/capture")
      .set("X-Sandbox-Scenario", "down")
      .send({ ...ENVELOPE, capture_orders: [p] });
    expect(res.status).toBe(502);
    expect(res.body.return_status).toBe("0");
    expect((await storedTransactions(app, { order_no: p.order_no }))[0]!.state).toBe("authorised");
  });
});

describe("named payout outcomes", () => {
  test("a rule can name a payout outcome from the catalogue, and refine it", async () => {
    const dir = scenarioDir({
      "payouts.yaml":
        "name: payouts\ndescription: named payout outcomes\nrules:\n" +
        "  - id: closed\n    when: { operation: payout, reference: closed }\n    then: { outcome: account_closed }\n" +
        "  - id: slow-bounce\n    when: { operation: payout, reference: slow }\n    then: { outcome: pending_then_failed, payout: { after_seconds: 5 } }\n",
    });
    const { app } = await makeApp({ scenarios: dir, scenario: "payouts" });
    const payout = (reference: string) => ({
      merchant_id: "M10001",
      account_id: "A10001",
      encryption_data: "a".repeat(64),
      request_id: crypto.randomUUID(),
      reference,
      payment_currency: "USD",
      payment_amount: "50.00",
      payment_method: "LOCAL",
      beneficiary: { first_name: "Ann", last_name: "Lee", bank_details: { account_number: "987654321", bank_country_code: "US" } },
    });
    const closed = await request(app).post("/v1/payout").send(payout("closed"));
    expect(closed.body).toMatchObject({ status: "FAILED", failure_type: "ACCOUNT_CLOSED" });
    const slow = await request(app).post("/v1/payout").send(payout("slow"));
    expect(slow.body.status).toBe("PENDING");
    await request(app).post("/__sandbox/clock").send({ advance: "6s" });
    const listed = await request(app).get("/__sandbox/payouts?merchant_id=M10001");
    expect(listed.body.payouts.find((p: { transaction_id: string }) => p.transaction_id === slow.body.transaction_id)).toMatchObject({
      status: "FAILED",
      failure_type: "ACCOUNT_CLOSED",
    });
  });

  test("an unknown payout outcome stops the start", async () => {
    const dir = scenarioDir({
      "bad.json": { name: "bad", description: "x", rules: [{ id: "r", when: { operation: "payout" }, then: { outcome: "bounced" } }] },
    });
    await expect(createDeps({ logLevel: "silent", scenarios: dir })).rejects.toThrow(/"bounced" is not an outcome of payout/);
  });
});
