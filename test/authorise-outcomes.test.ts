// The default scenario's magic values give their outcomes; 3-D Secure, tokens and merchants.
import { createClock } from "../src/domain/clock.js";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import request from "supertest";
import { describe, expect, test } from "vitest";
import { defaultScenariosDir } from "../src/base/paths.js";
import { ACME, directPayment, makeApp, parseXml, postAuthorise, textOf } from "./helpers.js";

/** A card no rule of the default scenario names: the amount or open3d decides. */
const PLAIN_CARD = "5555555555554444";

interface Expected {
  order_status: string;
  result: string;
  risk_action: string;
  threeds_result: string;
  rule: string;
}

const approved = (rule: string): Expected => ({ order_status: "1", result: "0000", risk_action: "ACCEPT", threeds_result: "", rule });
const declined = (result: string, rule: string, risk_action = "ACCEPT"): Expected => ({ order_status: "0", result, risk_action, threeds_result: "", rule });

const MAGIC_CARDS: [card: string, expected: Expected][] = [
  ["4242424242424242", approved("default/visa-approve")],
  ["4000000000000002", declined("D0005", "default/decline-generic")],
  ["4000000000009995", declined("D0051", "default/decline-insufficient-funds")],
  ["4000000000000069", declined("D0054", "default/decline-expired-card")],
  ["4000000000000127", declined("D0082", "default/decline-invalid-cvc")],
  ["4000000000009979", declined("D0043", "default/decline-stolen-card", "REJECT")],
  ["4000000000009987", declined("D0041", "default/decline-lost-card", "REJECT")],
  ["4000000000000119", declined("D0091", "default/decline-issuer-timeout")],
  [
    "4000002760003184",
    { order_status: "-1", result: "P0001", risk_action: "ACCEPT", threeds_result: "C:Challenge required", rule: "default/threeds-challenge" },
  ],
  [
    "4000000000003220",
    { order_status: "-1", result: "P0001", risk_action: "ACCEPT", threeds_result: "C:Challenge required", rule: "default/threeds-challenge" },
  ],
  [
    "4000002500003155",
    { order_status: "-1", result: "P0001", risk_action: "ACCEPT", threeds_result: "C:Challenge required", rule: "default/threeds-challenge" },
  ],
  ["4000008400001629", { order_status: "0", result: "D0301", risk_action: "ACCEPT", threeds_result: "N:Not authenticated", rule: "default/threeds-failed" }],
  ["4000000000009235", { order_status: "-2", result: "R0001", risk_action: "REVIEW", threeds_result: "", rule: "default/risk-review" }],
  ["4100000000000019", declined("R0002", "default/risk-reject", "REJECT")],
  ["4000000000004954", declined("R0002", "default/risk-reject", "REJECT")],
  [PLAIN_CARD, approved("default/approve-everything-else")],
];

const AMOUNT_ENDINGS: [amount: string, expected: Expected][] = [
  ["10.05", declined("D0005", "default/amount-ending-05")],
  ["10.51", declined("D0051", "default/amount-ending-51")],
  ["10.54", declined("D0054", "default/amount-ending-54")],
  ["10.91", declined("D0091", "default/amount-ending-91")],
  ["10.77", { order_status: "-2", result: "R0001", risk_action: "REVIEW", threeds_result: "", rule: "default/amount-ending-77-review" }],
  ["10.00", approved("default/approve-everything-else")],
];

const RISK_SCORES: Record<string, [number, number]> = { ACCEPT: [0, 49], REVIEW: [50, 84], REJECT: [85, 100] };

async function expectOutcome(body: Record<string, unknown>, expected: Expected) {
  const { app } = await makeApp();
  const res = await postAuthorise(app, body);
  expect(res.status, res.text).toBe(200);
  const xml = parseXml(res.text);
  expect(textOf(xml.order_status)).toBe(expected.order_status);
  expect(textOf(xml.result_info)).toMatch(new RegExp(`^${expected.result}:\\S`));
  expect(textOf(xml.risk_action)).toBe(expected.risk_action);
  expect(textOf(xml.threeds_result)).toBe(expected.threeds_result);
  const [low, high] = RISK_SCORES[expected.risk_action]!;
  expect(Number(textOf(xml.risk_score))).toBeGreaterThanOrEqual(low);
  expect(Number(textOf(xml.risk_score))).toBeLessThanOrEqual(high);
  expect(res.get("X-Sandbox-Rule")).toBe(expected.rule);
  return { res, xml };
}

describe("default scenario: magic card numbers", () => {
  test.each(MAGIC_CARDS)("card %s", async (card, expected) => {
    await expectOutcome(directPayment({ card }), expected);
  });

  test("the table above covers every card the default scenario names", () => {
    const scenario = JSON.parse(readFileSync(resolve(defaultScenariosDir, "default.json"), "utf8")) as {
      rules: { when: Record<string, string | string[]> }[];
    };
    const named = scenario.rules.flatMap((r) => (r.when.card === undefined ? [] : [r.when.card].flat()));
    expect(named.length).toBeGreaterThan(10);
    expect(MAGIC_CARDS.map(([card]) => card)).toEqual(expect.arrayContaining(named));
  });
});

describe("default scenario: amount endings", () => {
  test.each(AMOUNT_ENDINGS)("amount %s", async (amount, expected) => {
    await expectOutcome(directPayment({ card: PLAIN_CARD, amount }), expected);
  });
});

describe("3-D Secure", () => {
  test("a challenge card answers -1 with the challenge page in issuer_url, which opens", async () => {
    const { app, deps } = await makeApp();
    const sent = directPayment({ card: "4000002760003184" });
    const res = await postAuthorise(app, sent);
    const xml = parseXml(res.text);
    expect(textOf(xml.order_status)).toBe("-1");
    const url = new URL(textOf(xml.issuer_url));
    expect(url.pathname).toMatch(/^\/pay\/3ds\/[0-9a-f]+$/);
    expect((await request(app).get(url.pathname)).status).toBe(200);
    expect(deps.store.data.transactions.find((t) => t.order_no === sent.order_no)?.state).toBe("pending");
  });

  test("issuer_url is absent when no challenge is due", async () => {
    const { app } = await makeApp();
    const res = await postAuthorise(app, directPayment());
    expect(parseXml(res.text).issuer_url).toBeUndefined();
  });

  test("open3d=do3DS on a card without a challenge is approved frictionless with the 3-D Secure result filled in", async () => {
    await expectOutcome(directPayment({ card: PLAIN_CARD, open3d: "do3DS" }), {
      ...approved("default/open3d-frictionless"),
      threeds_result: "Y:Authenticated (frictionless)",
    });
  });

  test("3-D Secure done elsewhere (additional_information mpi_info) is reported as an external result", async () => {
    const additional_information = [{ mpi_info: { eci: "05", cavv: "AAABBEg0VhI0VniQEjRWAAAAAAA=", xid: "x-1", dsTransID: "ds-1" } }];
    await expectOutcome(directPayment({ additional_information }), {
      ...approved("default/visa-approve"),
      threeds_result: "Y:Authenticated by external MPI",
    });
  });
});

describe("card expiry", () => {
  test.each([
    ["2020", "01"],
    ["20", "1"],
  ])("a card that expired (year %s, month %s) is declined with D0054", async (expiration_year, expiration_month) => {
    await expectOutcome(directPayment({ expiration_year, expiration_month }), declined("D0054", "builtin/card-expired"));
  });

  test("a card is valid through the last day of its expiry month", async () => {
    const now = new Date("2030-12-31T23:59:59.000Z");
    const { app } = await makeApp({ clock: createClock(() => now.getTime()) });
    const ok = await postAuthorise(app, directPayment({ expiration_year: "2030", expiration_month: "12" }));
    expect(textOf(parseXml(ok.text).order_status)).toBe("1");
    const expired = await postAuthorise(app, directPayment({ expiration_year: "2030", expiration_month: "11" }));
    expect(textOf(parseXml(expired.text).result_info)).toMatch(/^D0054:/);
  });
});

describe("tokens", () => {
  test('token_flag "YES" issues a token that pays again without card data and is answered back', async () => {
    const { app, deps } = await makeApp();
    const first = parseXml((await postAuthorise(app, directPayment({ token_flag: "YES", card: PLAIN_CARD }))).text);
    const tokenId = textOf(first.token_id);
    expect(tokenId).toMatch(/^tok_\w+$/);
    expect(deps.store.data.tokens.find((t) => t.token_id === tokenId)?.merchant_id).toBe(ACME.merchant_id);

    const again = directPayment({ token_id: tokenId, amount: "7.50" });
    for (const field of ["card", "expiration_month", "expiration_year", "security_code"]) delete again[field];
    const res = await postAuthorise(app, again);
    expect(res.status, res.text).toBe(200);
    const xml = parseXml(res.text);
    expect(textOf(xml.order_status)).toBe("1");
    expect(textOf(xml.token_id)).toBe(tokenId);
    expect(textOf(xml.card)).toBe("555555******4444");
    expect(textOf(xml.amount)).toBe("7.50");
  });

  test("the fixture token tok_acme_visa_4242 pays for M10001", async () => {
    const { app } = await makeApp();
    const res = await postAuthorise(app, directPayment({ card: undefined, token_id: "tok_acme_visa_4242" }));
    const xml = parseXml(res.text);
    expect(textOf(xml.order_status)).toBe("1");
    expect(textOf(xml.card)).toBe("424242******4242");
    expect(textOf(xml.token_id)).toBe("tok_acme_visa_4242");
  });

  test("the token's card number picks the outcome, as a card would", async () => {
    const { app } = await makeApp();
    const res = await postAuthorise(app, directPayment({ card: undefined, token_id: "tok_acme_decline_0002" }));
    expect(textOf(parseXml(res.text).result_info)).toMatch(/^D0005:/);
  });

  test.each([
    ["another merchant's token", "tok_harbor_visa_1111"],
    ["an unknown token", "tok_does_not_exist"],
  ])("%s is 404 I0020", async (_name, token_id) => {
    const { app, deps } = await makeApp();
    const before = deps.store.data.transactions.length;
    const res = await postAuthorise(app, directPayment({ card: undefined, token_id }));
    expect(res.status).toBe(404);
    const xml = parseXml(res.text);
    expect(textOf(xml.order_status)).toBe("0");
    expect(textOf(xml.result_info)).toMatch(/^I0020:/);
    expect(textOf(xml.result_info)).toContain(token_id);
    expect(deps.store.data.transactions.length).toBe(before);
  });

  test("a token issued to a provisioned merchant cannot be used by another one", async () => {
    const { app } = await makeApp();
    const first = await postAuthorise(app, directPayment({ merchant_id: "CI-JOB-1", token_flag: "YES" }));
    const tokenId = textOf(parseXml(first.text).token_id);
    expect(tokenId).not.toBe("");
    const res = await postAuthorise(app, directPayment({ merchant_id: "CI-JOB-2", card: undefined, token_id: tokenId }));
    expect(res.status).toBe(404);
  });

  test("a declined payment issues no token", async () => {
    const { app, deps } = await makeApp();
    const before = deps.store.data.tokens.length;
    const res = await postAuthorise(app, directPayment({ token_flag: "YES", card: "4000000000000002" }));
    expect(textOf(parseXml(res.text).order_status)).toBe("0");
    expect(textOf(parseXml(res.text).token_id)).toBe("");
    expect(deps.store.data.tokens.length).toBe(before);
  });

  test('token_flag "NO" issues no token', async () => {
    const { app, deps } = await makeApp();
    const before = deps.store.data.tokens.length;
    const res = await postAuthorise(app, directPayment({ token_flag: "NO" }));
    expect(textOf(parseXml(res.text).token_id)).toBe("");
    expect(deps.store.data.tokens.length).toBe(before);
  });
});

describe("merchants", () => {
  test("by default an unknown merchant is provisioned on first use and approved", async () => {
    const { app, deps } = await makeApp();
    const res = await postAuthorise(app, directPayment({ merchant_id: "CI-RUN-77", account_id: "ACC-1" }));
    expect(res.status).toBe(200);
    expect(textOf(parseXml(res.text).order_status)).toBe("1");
    const merchant = deps.store.data.merchants.find((m) => m.merchant_id === "CI-RUN-77");
    expect(merchant).toMatchObject({ secret_key: "sk_test_CI-RUN-77", provisioned: true });
    expect(merchant?.name).toMatch(/^[A-Z]\w/); // a plausible company name (faker, loaded on first use)
    expect(merchant?.accounts.map((a) => a.account_id)).toEqual(["ACC-1"]);
  });

  test("a refused request provisions nothing: neither the merchant nor the account it names", async () => {
    const { app, deps } = await makeApp();
    const merchants = structuredClone(deps.store.data.merchants);
    // well-formed, and refused by what it asks (404 subscription not found), as a malformed one is (400)
    const cancel = await request(app)
      .post("/v1/subscription/cancel")
      .send({ merchant_id: "CI-RUN-78", account_id: "ACC-1", recurring_id: "R1", encryption_data: "a".repeat(64) });
    expect([cancel.status, cancel.body.return_message]).toEqual([404, expect.stringMatching(/^E0501:/)]);
    const onFixture = await request(app)
      .post("/v1/subscription/cancel")
      .send({ merchant_id: "M10001", account_id: "NEW-ACC", recurring_id: "R1", encryption_data: "a".repeat(64) });
    expect(onFixture.status).toBe(404);
    expect((await postAuthorise(app, directPayment({ merchant_id: "CI-RUN-78", amount: "ten" }))).status).toBe(400);
    expect(deps.store.data.merchants).toEqual(merchants);
  });

  test.each([
    ["an unknown merchant", { merchant_id: "M99999" }, "I0010"],
    ["an unknown account of a known merchant", { account_id: "A99999" }, "I0011"],
  ])("--strict-merchants: %s is 404 %s", async (_name, overrides, code) => {
    const { app, deps } = await makeApp({ strictMerchants: true });
    const merchants = structuredClone(deps.store.data.merchants);
    const res = await postAuthorise(app, directPayment(overrides));
    expect(res.status).toBe(404);
    expect(res.type).toBe("application/xml");
    expect(textOf(parseXml(res.text).result_info)).toMatch(new RegExp(`^${code}:`));
    expect(deps.store.data.merchants).toEqual(merchants);
  });

  test("--strict-merchants still serves fixture merchants", async () => {
    const { app } = await makeApp({ strictMerchants: true });
    const res = await postAuthorise(app, directPayment());
    expect(res.status).toBe(200);
  });
});
