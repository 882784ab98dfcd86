// POST /v1/paymentMethods/optimise: the account's payment methods ranked for a country, currency
// and amount from fixtures/payment-methods.json, each with a score and a reason.
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { App } from "../src/server/app.js";
import request from "supertest";
import { describe, expect, test } from "vitest";
import { defaultFixturesDir } from "../src/base/paths.js";
import { createDeps } from "../src/server/sandbox.js";
import { ACME, ANY_SIGNATURE, makeApp, signRequest, signResponseFields } from "./helpers.js";

const PATH = "/v1/paymentMethods/optimise";

const optimise = (app: App, fields: Record<string, unknown>) =>
  request(app)
    .post(PATH)
    .send({ merchant_id: ACME.merchant_id, account_id: "A10002", encryption_data: ANY_SIGNATURE, ...fields });

interface Ranked {
  payment_method: string;
  rank: number;
  suitable: boolean;
  score: number;
  reason: string;
}

/** "pix 93.05" for a suitable method, "ideal ✗" for one that is ruled out, in rank order. */
const ranking = (methods: Ranked[]) => methods.map((m) => (m.suitable ? `${m.payment_method} ${m.score.toFixed(2)}` : `${m.payment_method} ✗`));

describe("rankings (account A10002: card, pix, boleto, ideal, sofort, paypal)", () => {
  test.each([
    [
      "BR, BRL 100.00: pix first",
      { billing_country: "BR", currency: "BRL", amount: "100.00" },
      ["pix 93.05", "boleto 63.50", "paypal 62.60", "card 57.00", "ideal ✗", "sofort ✗"],
    ],
    [
      "NL, EUR 50.00: iDEAL first",
      { billing_country: "NL", currency: "EUR", amount: "50.00" },
      ["ideal 92.60", "sofort 79.00", "card 67.50", "paypal 65.10", "pix ✗", "boleto ✗"],
    ],
    [
      "BR, BRL 3.00: boleto below its minimum, fixed fees weigh",
      { billing_country: "BR", currency: "BRL", amount: "3" },
      ["pix 93.00", "card 8.00", "paypal 0.00", "boleto ✗", "ideal ✗", "sofort ✗"],
    ],
    [
      "DE, EUR 20.00: sofort's home",
      { billing_country: "DE", currency: "EUR", amount: "20.00" },
      ["sofort 78.25", "card 61.00", "paypal 60.75", "pix ✗", "boleto ✗", "ideal ✗"],
    ],
    [
      "US, USD 60000.00: above every maximum",
      { billing_country: "US", currency: "USD", amount: "60000.00" },
      ["card ✗", "pix ✗", "boleto ✗", "ideal ✗", "sofort ✗", "paypal ✗"],
    ],
    [
      "lower-case codes are read as upper case",
      { billing_country: "br", currency: "brl", amount: "100.00" },
      ["pix 93.05", "boleto 63.50", "paypal 62.60", "card 57.00", "ideal ✗", "sofort ✗"],
    ],
  ])("%s", async (_name, fields, expected) => {
    const { app } = await makeApp();
    const res = await optimise(app, fields);
    expect(res.status, res.text).toBe(200);
    expect(ranking(res.body.payment_methods)).toEqual(expected);
    expect(res.body.payment_methods.map((m: Ranked) => m.rank)).toEqual([1, 2, 3, 4, 5, 6]);
  });

  test("the response: the account, the payment as read, and every method with its figures and reason", async () => {
    const { app } = await makeApp();
    const res = await optimise(app, { billing_country: "BR", currency: "BRL", amount: "100" });
    expect(Object.keys(res.body)).toEqual([
      "merchant_id",
      "account_id",
      "encryption_data",
      "return_status",
      "return_message",
      "currency",
      "amount",
      "billing_country",
      "payment_methods",
    ]);
    expect(res.body).toMatchObject({
      merchant_id: "M10001",
      account_id: "A10002",
      return_status: "1",
      return_message: "OK",
      currency: "BRL",
      amount: "100.00",
      billing_country: "BR",
    });
    const [pix, boleto] = res.body.payment_methods;
    expect(pix).toEqual({
      payment_method: "pix",
      rank: 1,
      suitable: true,
      score: 93.05,
      reason: "pix: instant, 98% approval (all countries), BRL supported, fee 0.99 BRL (0.99%), settles the same day",
      label: "Pix",
      approval_rate: 98,
      fee_amount: "0.99",
      fee_currency: "BRL",
      settlement_days: 0,
      instant: true,
    });
    expect(boleto.reason).toBe("boleto: 82% approval (all countries), BRL supported, fee 3.50 BRL (3.50%), settles in 2 days");
    const card = res.body.payment_methods.find((m: Ranked) => m.payment_method === "card");
    expect(card.reason).toBe("card: instant, 74% approval in BR, BRL supported, fee 3.20 BRL (3.20%), settles in 2 days");
  });

  test.each([
    [
      "another country and currency",
      { billing_country: "BR", currency: "BRL", amount: "100.00" },
      "ideal",
      "ideal: not available in BR (only NL); BRL not supported (only EUR)",
    ],
    ["below the minimum", { billing_country: "BR", currency: "BRL", amount: "3.00" }, "boleto", "boleto: amount 3.00 is below the minimum 5.00"],
    ["above the maximum", { billing_country: "US", currency: "USD", amount: "60000.00" }, "paypal", "paypal: amount 60000.00 is above the maximum 10000.00"],
  ])("an unsuitable method says why: %s", async (_name, fields, method, reason) => {
    const { app } = await makeApp();
    const res = await optimise(app, fields);
    const found = res.body.payment_methods.find((m: Ranked) => m.payment_method === method);
    expect(found).toMatchObject({ suitable: false, score: 0, reason });
  });

  test("each account ranks its own methods (A10001: card, applepay, googlepay)", async () => {
    const { app } = await makeApp();
    const res = await optimise(app, { account_id: "A10001", billing_country: "GB", currency: "GBP", amount: "20.00" });
    expect(ranking(res.body.payment_methods)).toEqual(["applepay 70.00", "googlepay 66.00", "card 65.00"]);
  });

  test("the same request always gets the same answer", async () => {
    const { app } = await makeApp();
    const fields = { billing_country: "NL", currency: "EUR", amount: "50.00" };
    const first = await optimise(app, fields);
    const second = await optimise(app, fields);
    expect(second.body).toEqual(first.body);
  });
});

describe("the method profiles come from the fixtures folder", () => {
  function fixturesWith(profiles: (text: string) => string): string {
    const dir = mkdtempSync(join(tmpdir(), "sandgate-methods-"));
    cpSync(defaultFixturesDir, dir, { recursive: true });
    const file = join(dir, "payment-methods.json");
    writeFileSync(file, profiles(readFileSync(file, "utf8")));
    return dir;
  }

  test("a method without a profile is listed with the unsuitable ones, saying so", async () => {
    const dir = fixturesWith((text) => JSON.stringify((JSON.parse(text) as { payment_method: string }[]).filter((p) => p.payment_method !== "pix")));
    const { app } = await makeApp({ fixtures: dir });
    const res = await optimise(app, { billing_country: "BR", currency: "BRL", amount: "100.00" });
    expect(ranking(res.body.payment_methods)).toEqual(["boleto 63.50", "paypal 62.60", "card 57.00", "pix ✗", "ideal ✗", "sofort ✗"]);
    expect(res.body.payment_methods[3]).toMatchObject({
      payment_method: "pix",
      suitable: false,
      approval_rate: null,
      reason: "pix: not described in payment-methods.json",
    });
  });

  test.each([
    [
      "an approval rate above 100",
      (t: string) => t.replace('"approval_rate": { "*": 98 }', '"approval_rate": { "*": 198 }'),
      /payment-methods\.json: at 3\.approval_rate\.\*: /,
    ],
    [
      "no default approval rate",
      (t: string) => t.replace('"approval_rate": { "*": 98 }', '"approval_rate": { "BR": 98 }'),
      /payment-methods\.json: at 3\.approval_rate: needs a "\*" entry/,
    ],
    [
      "a method described twice",
      (t: string) => t.replace('"payment_method": "boleto"', '"payment_method": "pix"'),
      /payment-methods\.json: at 4\.payment_method: "pix" is described twice/,
    ],
    ["not JSON", () => "[{", /payment-methods\.json: not valid JSON/],
  ])("a broken file stops the start, naming file and path: %s", async (_name, change, message) => {
    await expect(createDeps({ logLevel: "silent", fixtures: fixturesWith(change) })).rejects.toThrow(message);
  });
});

describe("validation: errors name the field", () => {
  test.each([
    ["currency missing", { currency: undefined }, [{ field: "currency", message: "is required" }], "I0001"],
    ["currency of two letters", { currency: "US" }, [{ field: "currency", message: "must be a three-letter currency code" }], "I0002"],
    ["amount zero", { amount: "0.00" }, [{ field: "amount", message: "must be a positive decimal amount such as 10.00" }], "I0002"],
    ["amount not a number", { amount: "ten" }, [{ field: "amount", message: "must be a positive decimal amount such as 10.00" }], "I0002"],
    ["billing_country of three letters", { billing_country: "BRA" }, [{ field: "billing_country", message: "must be a two-letter country code" }], "I0002"],
    [
      "everything missing",
      { currency: undefined, amount: undefined, billing_country: undefined },
      [
        { field: "currency", message: "is required" },
        { field: "amount", message: "is required" },
        { field: "billing_country", message: "is required" },
      ],
      "I0001",
    ],
  ])("%s", async (_name, overrides, errors, code) => {
    const { app } = await makeApp();
    const res = await optimise(app, { billing_country: "BR", currency: "BRL", amount: "10.00", ...overrides });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ return_status: "0", errors });
    expect(res.body.return_message.startsWith(`${code}:`)).toBe(true);
    expect(res.body.payment_methods).toBeUndefined();
  });

  test("a form body works too", async () => {
    const { app } = await makeApp();
    const res = await request(app)
      .post(PATH)
      .type("form")
      .send({ merchant_id: ACME.merchant_id, account_id: "A10002", encryption_data: ANY_SIGNATURE, billing_country: "BR", currency: "BRL", amount: "100.00" });
    expect(res.status).toBe(200);
    expect(res.body.payment_methods[0].payment_method).toBe("pix");
  });
});

describe("signatures", () => {
  const fields = { merchant_id: ACME.merchant_id, account_id: "A10002", currency: "BRL", amount: "100.00", billing_country: "BR" };

  test.each([
    ["lenient: any well-formed value", "lenient", ANY_SIGNATURE, 200],
    ["strict: the real scheme", "strict", signRequest("paymentMethodsOptimise", fields, ACME.key), 200],
    ["strict: a wrong value", "strict", ANY_SIGNATURE, 400],
    ["lenient: malformed", "lenient", "not-hex", 400],
  ] as const)("%s", async (_name, signatureMode, encryption_data, status) => {
    const { app } = await makeApp({ signatureMode });
    const res = await request(app)
      .post(PATH)
      .send({ ...fields, encryption_data });
    expect(res.status).toBe(status);
    if (status === 200) expect(res.body.encryption_data).toBe(signResponseFields("paymentMethodsOptimise", res.body, ACME.key));
    else expect(res.body.return_message).toMatch(/^I001[34]:/);
  });
});
