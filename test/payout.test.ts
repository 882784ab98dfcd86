// POST /v1/payout: every seed field echoed (bank_code excepted) with the interface document's types, the fee
// and FX arithmetic, request_id idempotency, validation naming each field path, failures by
// account suffix, PENDING payouts settled by the clock or the operator, bodies and signatures.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import qs from "qs";
import request from "supertest";
import { afterEach, describe, expect, test, vi } from "vitest";
import type { App } from "../src/server/app.js";
import type { NotificationEvent } from "../src/notify/notifier.js";
import { loadPayoutPricing } from "../src/store/fixtures/payout-pricing.js";
import { openStore } from "../src/store/memory-store.js";
import { defaultFixturesDir } from "../src/base/paths.js";
import { ACME, ANY_SIGNATURE, makeApp, signRequest, signResponseFields, snapshotState } from "./helpers.js";

const FORM = "application/x-www-form-urlencoded";
const ISO_WITH_OFFSET = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?[+-]\d{2}:\d{2}$/;
const FAILURE_REASONS = (
  JSON.parse(readFileSync(new URL("../data/outcomes.json", import.meta.url), "utf8")) as { payout: { failure_reasons: Record<string, string> } }
).payout.failure_reasons;

let uuidCounter = 0;
/** A fresh request_id per call (a UUID). */
const uuid = () => `3f1c2a9e-8b7d-4c6e-9a5b-${String(++uuidCounter).padStart(12, "0")}`;

/** A valid minimal payout: 100.00 USD → USD over SWIFT to a US account. */
function payoutBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    merchant_id: ACME.merchant_id,
    account_id: ACME.account_id,
    request_id: uuid(),
    payment_currency: "USD",
    payment_amount: "100.00",
    payment_method: "SWIFT",
    beneficiary: { first_name: "Ann", last_name: "Lee", bank_details: { account_number: "123456789", bank_country_code: "US" } },
    encryption_data: ANY_SIGNATURE,
    ...overrides,
  };
}

/** The beneficiary of payoutBody with some bank_details or name fields changed. */
const beneficiaryWith = (bank: Record<string, unknown> = {}, names: Record<string, unknown> = {}) => ({
  first_name: "Ann",
  last_name: "Lee",
  ...names,
  bank_details: { account_number: "123456789", bank_country_code: "US", ...bank },
});

/** Every field of the interface document's payout request tables, each with its own recognisable value. */
function fullPayout(): Record<string, unknown> {
  return {
    merchant_id: ACME.merchant_id,
    account_id: ACME.account_id,
    beneficiary: {
      additional_info: {
        business_area: "Retail",
        business_phone_number: "+1 555 0100",
        business_registration_number: "BRN-77",
        personal_email: "ann@example.com",
        personal_id_number: "ID-123",
        personal_id_type: "PASSPORT",
        personal_mobile_number: "+1 555 0101",
        personal_net_monthly_average_income: "4200.00",
        personal_phone_country_code: "1",
        personal_phone_area_code: "555",
        personal_fiscal_country: "US",
      },
      address: {
        city: "Austin",
        country_code: "US",
        postcode: "73301",
        state: "TX",
        street: "Congress Ave",
        number: "100",
        street_address: "100 Congress Ave",
        complement: "Suite 5",
      },
      person_documents: [
        { file_type: "passport", file_url: "https://docs.example.com/p.pdf", labels: ["front", "back"] },
        { file_type: "utility_bill", file_url: "https://docs.example.com/u.pdf", labels: [] },
      ],
      bank_details: {
        account_currency: "USD",
        account_name: "Ann Lee",
        owner_document_number: "OWN-9",
        account_number: "987654321",
        bank_account_category: "Checking",
        bank_branch: "Downtown",
        bank_country_code: "US",
        bank_code: "026009593",
        bank_name: "Example Bank",
        bank_street_address: "1 Bank Plaza",
        binding_mobile_number: "+1 555 0102",
        iban: "GB82WEST12345698765432",
        swift_code: "EXAMUS33XXX",
        transaction_reference: "TR-1",
      },
      company_name: "Lee Trading",
      date_of_birth: "1990-02-01",
      first_name: "Ann",
      last_name: "Lee",
      entity_type: "COMPANY",
    },
    beneficiary_id: "ben-42",
    client_data: "client-data-1",
    fee_paid_by: "PAYER",
    payer: {
      additional_info: {
        business_registration_number: "PBRN-1",
        business_registration_type: "LLC",
        external_id: "ext-7",
        personal_email: "payer@example.com",
        personal_id_number: "PID-5",
        job: "Director",
      },
      address: { city: "Seattle", country_code: "US", postcode: "98101", state: "WA", street_address: "5 Pine St" },
      company_name: "Acme Outdoor",
      date_of_birth: "1980-05-06",
      entity_type: "COMPANY",
      first_name: "Pat",
      last_name: "Payer",
    },
    payment_amount: "1000.00",
    payment_currency: "USD",
    payment_date: "2026-12-01",
    payment_method: "SWIFT",
    reason: "Invoice payment",
    reference: "INV-2026-001",
    request_id: uuid(),
    source_currency: "USD",
    swift_charge_option: "SHARED",
    fund_source: "DepositAccount",
    notify_url: "https://merchant.example.com/payouts",
    encryption_data: ANY_SIGNATURE,
  };
}

/** The payout notifications emitted so far (the clock also runs the fixtures' subscriptions). */
const payoutEvents = (emit: { mock: { calls: [NotificationEvent, ...unknown[]][] } }) =>
  emit.mock.calls.map(([e]) => e).filter((e) => e.event.startsWith("payout."));

const post = (app: App, body: Record<string, unknown>) => request(app).post("/v1/payout").send(body);
const advance = (app: App, by: string) => request(app).post("/__sandbox/clock").send({ advance: by });

/** The value at a dotted path with [i] indexes. */
function at(value: unknown, path: string): unknown {
  let node = value;
  for (const part of path.replace(/\[(\d+)\]/g, ".$1").split(".")) {
    if (node === null || typeof node !== "object") return undefined;
    node = (node as Record<string, unknown>)[part];
  }
  return node;
}

describe("the response echoes every request field of the seed, except bank_details.bank_code", () => {
  // The interface document's request tables, path by path (source_amount is the alternative to payment_amount).
  const ECHO: [string, unknown][] = [
    ["merchant_id", "M10001"],
    ["account_id", "A10001"],
    ["beneficiary.additional_info.business_area", "Retail"],
    ["beneficiary.additional_info.business_phone_number", "+1 555 0100"],
    ["beneficiary.additional_info.business_registration_number", "BRN-77"],
    ["beneficiary.additional_info.personal_email", "ann@example.com"],
    ["beneficiary.additional_info.personal_id_number", "ID-123"],
    ["beneficiary.additional_info.personal_id_type", "PASSPORT"],
    ["beneficiary.additional_info.personal_mobile_number", "+1 555 0101"],
    ["beneficiary.additional_info.personal_net_monthly_average_income", "4200.00"],
    ["beneficiary.additional_info.personal_phone_country_code", "1"],
    ["beneficiary.additional_info.personal_phone_area_code", "555"],
    ["beneficiary.additional_info.personal_fiscal_country", "US"],
    ["beneficiary.address.city", "Austin"],
    ["beneficiary.address.country_code", "US"],
    ["beneficiary.address.postcode", "73301"],
    ["beneficiary.address.state", "TX"],
    ["beneficiary.address.street", "Congress Ave"],
    ["beneficiary.address.number", "100"],
    ["beneficiary.address.street_address", "100 Congress Ave"],
    ["beneficiary.address.complement", "Suite 5"],
    ["beneficiary.person_documents[0].file_type", "passport"],
    ["beneficiary.person_documents[0].file_url", "https://docs.example.com/p.pdf"],
    ["beneficiary.person_documents[0].labels", ["front", "back"]],
    ["beneficiary.person_documents[1].file_type", "utility_bill"],
    ["beneficiary.person_documents[1].file_url", "https://docs.example.com/u.pdf"],
    ["beneficiary.person_documents[1].labels", []],
    ["beneficiary.bank_details.account_currency", "USD"],
    ["beneficiary.bank_details.account_name", "Ann Lee"],
    ["beneficiary.bank_details.owner_document_number", "OWN-9"],
    ["beneficiary.bank_details.account_number", "987654321"],
    ["beneficiary.bank_details.bank_account_category", "Checking"],
    ["beneficiary.bank_details.bank_branch", "Downtown"],
    ["beneficiary.bank_details.bank_country_code", "US"],
    ["beneficiary.bank_details.bank_name", "Example Bank"],
    ["beneficiary.bank_details.bank_street_address", "1 Bank Plaza"],
    ["beneficiary.bank_details.binding_mobile_number", "+1 555 0102"],
    ["beneficiary.bank_details.iban", "GB82WEST12345698765432"],
    ["beneficiary.bank_details.swift_code", "EXAMUS33XXX"],
    ["beneficiary.bank_details.transaction_reference", "TR-1"],
    ["beneficiary.company_name", "Lee Trading"],
    ["beneficiary.date_of_birth", "1990-02-01"],
    ["beneficiary.first_name", "Ann"],
    ["beneficiary.last_name", "Lee"],
    ["beneficiary.entity_type", "COMPANY"],
    ["beneficiary_id", "ben-42"],
    ["client_data", "client-data-1"],
    ["fee_paid_by", "PAYER"],
    ["payer.additional_info.business_registration_number", "PBRN-1"],
    ["payer.additional_info.business_registration_type", "LLC"],
    ["payer.additional_info.external_id", "ext-7"],
    ["payer.additional_info.personal_email", "payer@example.com"],
    ["payer.additional_info.personal_id_number", "PID-5"],
    ["payer.additional_info.job", "Director"],
    ["payer.address.city", "Seattle"],
    ["payer.address.country_code", "US"],
    ["payer.address.postcode", "98101"],
    ["payer.address.state", "WA"],
    ["payer.address.street_address", "5 Pine St"],
    ["payer.company_name", "Acme Outdoor"],
    ["payer.date_of_birth", "1980-05-06"],
    ["payer.entity_type", "COMPANY"],
    ["payer.first_name", "Pat"],
    ["payer.last_name", "Payer"],
    ["payment_amount", "1000.00"],
    ["payment_currency", "USD"],
    ["payment_date", "2026-12-01"],
    ["payment_method", "SWIFT"],
    ["reason", "Invoice payment"],
    ["reference", "INV-2026-001"],
    ["source_amount", ""],
    ["source_currency", "USD"],
    ["swift_charge_option", "SHARED"],
    ["fund_source", "DepositAccount"],
    ["notify_url", "https://merchant.example.com/payouts"],
  ];

  test.each(ECHO)("%s is echoed as sent", async (path, expected) => {
    const { app } = await makeApp();
    const res = await post(app, fullPayout());
    expect(res.status).toBe(200);
    expect(at(res.body, path)).toEqual(expected);
  });

  test("request_id is echoed; bank_code is absent from bank_details, which adds local_clearing_system", async () => {
    const { app } = await makeApp();
    const body = fullPayout();
    const res = await post(app, body);
    expect(res.body.request_id).toBe(body.request_id);
    expect(Object.keys(res.body.beneficiary.bank_details)).not.toContain("bank_code");
    expect(res.body.beneficiary.bank_details.local_clearing_system).toBe("ACH");
  });

  test("the response holds exactly the interface document's fields: the request's and the added ones", async () => {
    const { app } = await makeApp();
    const res = await post(app, fullPayout());
    const requestFields = [
      "merchant_id",
      "account_id",
      "beneficiary",
      "beneficiary_id",
      "client_data",
      "fee_paid_by",
      "payer",
      "payment_amount",
      "payment_currency",
      "payment_date",
      "payment_method",
      "reason",
      "reference",
      "request_id",
      "source_amount",
      "source_currency",
      "swift_charge_option",
      "fund_source",
      "notify_url",
      "encryption_data",
    ];
    const added = [
      "amount_beneficiary_receives",
      "amount_payer_pays",
      "created_at",
      "last_updated_at",
      "failure_reason",
      "failure_type",
      "fee_amount",
      "fee_currency",
      "payer_id",
      "transaction_id",
      "short_reference_id",
      "status",
    ];
    expect(Object.keys(res.body).sort()).toEqual([...requestFields, ...added].sort());
    const echoedPaths = ECHO.map(([p]) => p)
      .filter((p) => p.startsWith("beneficiary.bank_details."))
      .map((p) => p.split(".")[2]);
    expect(Object.keys(res.body.beneficiary.bank_details).sort()).toEqual([...echoedPaths, "local_clearing_system"].sort());
  });

  test("a field the merchant leaves out is echoed as an empty string (objects and lists keep their shape)", async () => {
    const { app } = await makeApp();
    const res = await post(app, payoutBody());
    expect(res.body.client_data).toBe("");
    expect(res.body.payer.address.city).toBe("");
    expect(res.body.beneficiary.person_documents).toEqual([]);
    expect(res.body.beneficiary.additional_info.business_area).toBe("");
  });
});

describe("the added fields have the interface document's types", () => {
  test("numbers are JSON numbers; everything else is a string; dates carry a numeric offset", async () => {
    const { app } = await makeApp();
    const res = await post(app, fullPayout());
    const numbers = ["amount_beneficiary_receives", "amount_payer_pays", "fee_amount"];
    for (const f of numbers) expect(typeof res.body[f], f).toBe("number");
    for (const f of [
      "created_at",
      "last_updated_at",
      "failure_reason",
      "failure_type",
      "fee_currency",
      "payer_id",
      "transaction_id",
      "short_reference_id",
      "status",
    ]) {
      expect(typeof res.body[f], f).toBe("string");
    }
    expect(res.text).toContain('"amount_payer_pays":1020,');
    expect(res.body.created_at).toMatch(ISO_WITH_OFFSET);
    expect(res.body.created_at).not.toMatch(/Z$/);
    expect(res.body.last_updated_at).toBe(res.body.created_at);
    const day = res.body.created_at.slice(2, 10).replaceAll("-", "");
    expect(res.body.short_reference_id).toMatch(new RegExp(`^${day}-[A-Z0-9]{6}$`));
    expect(res.body).toMatchObject({ status: "COMPLETED", failure_type: "", failure_reason: "", fee_currency: "USD" });
    expect(res.body.transaction_id).not.toBe("");
    expect(res.body.payer_id).not.toBe("");

    // every other leaf of the answer is a string
    const leaves = (v: unknown, path: string): [string, unknown][] =>
      v !== null && typeof v === "object" ? Object.entries(v).flatMap(([k, c]) => leaves(c, path ? `${path}.${k}` : k)) : [[path, v]];
    for (const [path, value] of leaves(res.body, "")) if (!numbers.includes(path)) expect(typeof value, path).toBe("string");
  });

  test("ids are deterministic for a seed: the same requests give the same transaction_id, short reference and payer_id", async () => {
    const body = fullPayout();
    const first = await post((await makeApp()).app, body);
    const second = await post((await makeApp()).app, body);
    for (const f of ["transaction_id", "short_reference_id", "payer_id"]) expect(second.body[f], f).toBe(first.body[f]);
  });

  test("the same payer gets the same payer_id; another payer another", async () => {
    const { app } = await makeApp();
    const payer = { first_name: "Pat", last_name: "Payer" };
    const a = await post(app, payoutBody({ payer }));
    const b = await post(app, payoutBody({ payer }));
    const c = await post(app, payoutBody({ payer: { first_name: "Kim", last_name: "Other" } }));
    expect(b.body.payer_id).toBe(a.body.payer_id);
    expect(c.body.payer_id).not.toBe(a.body.payer_id);
    expect(b.body.transaction_id).not.toBe(a.body.transaction_id);
  });

  test.each([
    ["US", "", "USD", "ACH"],
    ["GB", "", "GBP", "FPS"],
    ["DE", "", "EUR", "SEPA"],
    ["BR", "", "BRL", "PIX"],
    ["MX", "", "MXN", "SPEI"],
    ["", "", "EUR", "SEPA"],
    ["", "GBP", "USD", "FPS"],
    ["ZZ", "", "JPY", "ZENGIN"],
  ])("bank_country_code %j, account_currency %j, payment_currency %s → local_clearing_system %s", async (country, accountCurrency, paymentCurrency, system) => {
    const { app } = await makeApp();
    const res = await post(
      app,
      payoutBody({ payment_currency: paymentCurrency, beneficiary: beneficiaryWith({ bank_country_code: country, account_currency: accountCurrency }) }),
    );
    expect(res.status).toBe(200);
    expect(res.body.beneficiary.bank_details.local_clearing_system).toBe(system);
  });
});

describe("fees and FX (fixtures/payout-pricing.json: SWIFT 15.00 USD + 0.5 %, LOCAL 1.00 USD; 1 USD = 0.92 EUR = 0.80 GBP = 150 JPY)", () => {
  type Case = {
    name: string;
    send: Record<string, string>;
    receives: number;
    pays: number;
    fee: number;
    feeCurrency: string;
  };
  const cases: Case[] = [
    {
      name: "same currency, SWIFT, payer pays the fee",
      send: { payment_currency: "USD", payment_amount: "1000.00", fee_paid_by: "PAYER" },
      receives: 1000,
      pays: 1020,
      fee: 20,
      feeCurrency: "USD",
    },
    {
      name: "same currency, SWIFT, beneficiary pays the fee",
      send: { payment_currency: "USD", payment_amount: "1000.00", fee_paid_by: "BENEFICIARY" },
      receives: 980,
      pays: 1000,
      fee: 20,
      feeCurrency: "USD",
    },
    {
      name: "fee_paid_by left out means PAYER",
      send: { payment_currency: "USD", payment_amount: "1000.00" },
      receives: 1000,
      pays: 1020,
      fee: 20,
      feeCurrency: "USD",
    },
    {
      name: "same currency, LOCAL",
      send: { payment_currency: "USD", payment_amount: "250.00", payment_method: "LOCAL" },
      receives: 250,
      pays: 251,
      fee: 1,
      feeCurrency: "USD",
    },
    {
      name: "cents without float noise",
      send: { payment_currency: "USD", payment_amount: "0.20", payment_method: "LOCAL" },
      receives: 0.2,
      pays: 1.2,
      fee: 1,
      feeCurrency: "USD",
    },
    {
      name: "USD → EUR by payment_amount, payer pays",
      send: { source_currency: "USD", payment_currency: "EUR", payment_amount: "920.00" },
      receives: 920,
      pays: 1020,
      fee: 20,
      feeCurrency: "USD",
    },
    {
      name: "USD → EUR by payment_amount, beneficiary pays (fee in EUR: 13.80 + 4.60)",
      send: { source_currency: "USD", payment_currency: "EUR", payment_amount: "920.00", fee_paid_by: "BENEFICIARY" },
      receives: 901.6,
      pays: 1000,
      fee: 18.4,
      feeCurrency: "EUR",
    },
    {
      name: "USD → GBP by source_amount, payer pays",
      send: { source_currency: "USD", payment_currency: "GBP", source_amount: "1000.00", payment_amount: "" },
      receives: 800,
      pays: 1020,
      fee: 20,
      feeCurrency: "USD",
    },
    {
      name: "USD → GBP by source_amount, beneficiary pays (fee in GBP: 12.00 + 4.00)",
      send: { source_currency: "USD", payment_currency: "GBP", source_amount: "1000.00", payment_amount: "", fee_paid_by: "BENEFICIARY" },
      receives: 784,
      pays: 1000,
      fee: 16,
      feeCurrency: "GBP",
    },
    {
      name: "EUR → JPY by source_amount, rounded half up to cents",
      send: { source_currency: "EUR", payment_currency: "JPY", source_amount: "100.00", payment_amount: "", payment_method: "LOCAL" },
      receives: 16304.35,
      pays: 100.92,
      fee: 0.92,
      feeCurrency: "EUR",
    },
    {
      name: "GBP → EUR cross rate by payment_amount (289.85 GBP + 13.45 fee)",
      send: { source_currency: "GBP", payment_currency: "EUR", payment_amount: "333.33" },
      receives: 333.33,
      pays: 303.3,
      fee: 13.45,
      feeCurrency: "GBP",
    },
    {
      name: "lowercase currency codes",
      send: { source_currency: "usd", payment_currency: "eur", payment_amount: "920.00" },
      receives: 920,
      pays: 1020,
      fee: 20,
      feeCurrency: "USD",
    },
  ];

  test.each(cases)("$name", async ({ send, receives, pays, fee, feeCurrency }) => {
    const { app } = await makeApp();
    const res = await post(app, payoutBody(send));
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ amount_beneficiary_receives: receives, amount_payer_pays: pays, fee_amount: fee, fee_currency: feeCurrency });
    for (const f of ["amount_beneficiary_receives", "amount_payer_pays", "fee_amount"]) expect(JSON.stringify(res.body[f])).toMatch(/^\d+(\.\d{1,2})?$/);
  });

  test("both amounts sent (the interface document's table lists both): payment_amount decides, both echoed as sent, a disagreement noted in the request log", async () => {
    const { app } = await makeApp();
    const agreeing = await post(app, payoutBody({ source_currency: "USD", payment_currency: "EUR", payment_amount: "920.00", source_amount: "1000.00" }));
    expect(agreeing.status, agreeing.text).toBe(200);
    expect(agreeing.body).toMatchObject({ payment_amount: "920.00", source_amount: "1000.00", amount_beneficiary_receives: 920, amount_payer_pays: 1020 });

    const disagreeing = await post(app, payoutBody({ source_currency: "USD", payment_currency: "EUR", payment_amount: "920.00", source_amount: "700" }));
    expect(disagreeing.status, disagreeing.text).toBe(200);
    // the beneficiary gets payment_amount; the payer pays its conversion (1000.00) plus the fee, not 700
    expect(disagreeing.body).toMatchObject({ payment_amount: "920.00", source_amount: "700", amount_beneficiary_receives: 920, amount_payer_pays: 1020 });

    const log = (await request(app).get("/__sandbox/requests").query({ merchant_id: ACME.merchant_id })).body as {
      requests: { note?: string; result: string }[];
    };
    const notes = log.requests.map((r) => r.note);
    expect(notes.at(-2)).toBeUndefined();
    expect(notes.at(-1)).toBe("source_amount 700.00 USD disagrees with the FX table: payment_amount 920.00 EUR is 1000.00 USD; payment_amount decides");
  });

  test("a fee the beneficiary cannot cover is refused, naming the amount field", async () => {
    const { app, deps } = await makeApp();
    const res = await post(app, payoutBody({ payment_amount: "10.00", fee_paid_by: "BENEFICIARY" }));
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ field: "payment_amount", message: "10.00 USD does not cover the SWIFT fee of 15.05 USD that the beneficiary pays" }]);
    expect(deps.store.data.payouts).toEqual([]);
  });
});

describe("request_id is idempotent per merchant", () => {
  test("the same request twice gives the same payout and stores one record", async () => {
    const { app, deps } = await makeApp();
    const body = fullPayout();
    const first = await post(app, body);
    const again = await post(app, body);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect(again.headers["x-sandbox-rule"]).toBe("builtin/idempotent-replay");
    expect(deps.store.data.payouts).toHaveLength(1);
  });

  test("the same values sent as a form count as the same request", async () => {
    const { app, deps } = await makeApp();
    const body = fullPayout();
    const first = await post(app, body);
    const asForm = await request(app).post("/v1/payout").type("form").send(qs.stringify(body));
    expect(asForm.status).toBe(200);
    expect(asForm.body.transaction_id).toBe(first.body.transaction_id);
    expect(deps.store.data.payouts).toHaveLength(1);
  });

  test("a different body under the same request_id is refused with 409, naming what differs; nothing changes", async () => {
    const { app, deps } = await makeApp();
    const body = payoutBody();
    const first = await post(app, body);
    const before = snapshotState(deps);
    const changed = { ...body, payment_amount: "120.00", beneficiary: beneficiaryWith({ account_number: "555" }) };
    const res = await post(app, changed);
    expect(res.status).toBe(409);
    expect(res.body.return_status).toBe("0");
    expect(res.body.return_message).toMatch(/^I0040:request_id already used with a different request: /);
    expect(res.body.return_message).toContain(first.body.transaction_id);
    expect(res.body.errors.map((e: { field: string }) => e.field).sort()).toEqual(["beneficiary.bank_details.account_number", "payment_amount"]);
    expect(snapshotState(deps)).toEqual(before);
  });

  test("another merchant may use the same request_id", async () => {
    const { app, deps } = await makeApp();
    const body = payoutBody();
    const a = await post(app, body);
    const b = await post(app, { ...body, merchant_id: "M-PAYOUT-OTHER", account_id: "A-1" });
    expect(b.status).toBe(200);
    expect(b.body.transaction_id).not.toBe(a.body.transaction_id);
    expect(deps.store.data.payouts).toHaveLength(2);
  });

  test("a replay shows the payout as it is now (PENDING, later COMPLETED)", async () => {
    const { app } = await makeApp();
    const body = payoutBody({ beneficiary: beneficiaryWith({ account_number: "55550008" }) });
    const first = await post(app, body);
    expect(first.body.status).toBe("PENDING");
    await advance(app, "2h");
    const again = await post(app, body);
    expect(again.body).toMatchObject({ transaction_id: first.body.transaction_id, status: "COMPLETED", created_at: first.body.created_at });
  });
});

describe("validation names every bad field path", () => {
  const b = (over: Record<string, unknown>) => ({ beneficiary: { ...beneficiaryWith(), ...over } });
  const bank = (over: Record<string, unknown>) => ({ beneficiary: beneficiaryWith(over) });
  const cases: [string, Record<string, unknown>, string, string][] = [
    ["request_id missing", { request_id: undefined }, "request_id", "I0001"],
    ["request_id not a UUID", { request_id: "order-1" }, "request_id", "I0002"],
    ["payment_currency missing", { payment_currency: undefined }, "payment_currency", "I0001"],
    ["payment_currency not three letters", { payment_currency: "US" }, "payment_currency", "I0002"],
    ["payment_currency not in the FX table", { payment_currency: "XYZ" }, "payment_currency", "I0002"],
    ["source_currency not three letters", { source_currency: "EURO" }, "source_currency", "I0002"],
    ["source_currency not in the FX table", { source_currency: "CHF" }, "source_currency", "I0002"],
    ["no amount at all", { payment_amount: undefined }, "payment_amount", "I0001"],
    ["payment_amount not a number", { payment_amount: "ten" }, "payment_amount", "I0002"],
    ["payment_amount zero", { payment_amount: "0.00" }, "payment_amount", "I0002"],
    ["payment_amount with three decimals", { payment_amount: "1.234" }, "payment_amount", "I0002"],
    ["source_amount negative", { payment_amount: undefined, source_amount: "-5.00" }, "source_amount", "I0002"],
    ["payment_method missing", { payment_method: undefined }, "payment_method", "I0001"],
    ["payment_method unknown", { payment_method: "CHEQUE" }, "payment_method", "I0002"],
    ["fee_paid_by unknown", { fee_paid_by: "ME" }, "fee_paid_by", "I0002"],
    ["swift_charge_option unknown", { swift_charge_option: "HALF" }, "swift_charge_option", "I0002"],
    ["payment_date not a real date", { payment_date: "2026-02-30" }, "payment_date", "I0002"],
    ["payment_date in another format", { payment_date: "01/12/2026" }, "payment_date", "I0002"],
    ["notify_url not an address", { notify_url: "merchant/notify" }, "notify_url", "I0002"],
    ["beneficiary missing", { beneficiary: undefined }, "beneficiary", "I0001"],
    ["beneficiary not an object", { beneficiary: "Ann Lee" }, "beneficiary", "I0002"],
    [
      "no account number nor IBAN",
      { beneficiary: { first_name: "Ann", last_name: "Lee", bank_details: { bank_country_code: "US" } } },
      "beneficiary.bank_details.account_number",
      "I0001",
    ],
    ["IBAN malformed", bank({ iban: "DE12" }), "beneficiary.bank_details.iban", "I0002"],
    ["SWIFT code malformed", bank({ swift_code: "BAD" }), "beneficiary.bank_details.swift_code", "I0002"],
    ["bank_country_code three letters", bank({ bank_country_code: "USA" }), "beneficiary.bank_details.bank_country_code", "I0002"],
    ["account_currency malformed", bank({ account_currency: "DOLLARS" }), "beneficiary.bank_details.account_currency", "I0002"],
    ["bank_details not an object", b({ bank_details: 7 }), "beneficiary.bank_details", "I0002"],
    ["address country_code three letters", b({ address: { country_code: "USA" } }), "beneficiary.address.country_code", "I0002"],
    ["additional_info e-mail malformed", b({ additional_info: { personal_email: "ann-at-example" } }), "beneficiary.additional_info.personal_email", "I0002"],
    ["person_documents not a list", b({ person_documents: "passport" }), "beneficiary.person_documents", "I0002"],
    [
      "a document's file_url not an address",
      b({ person_documents: [{ file_type: "pdf", file_url: "ftp://x" }] }),
      "beneficiary.person_documents[0].file_url",
      "I0002",
    ],
    ["a document's labels not a list", b({ person_documents: [{ labels: "front" }] }), "beneficiary.person_documents[0].labels", "I0002"],
    ["a label not a string", b({ person_documents: [{ labels: ["front", { side: "back" }] }] }), "beneficiary.person_documents[0].labels[1]", "I0002"],
    ["date_of_birth not a real date", b({ date_of_birth: "1990-13-01" }), "beneficiary.date_of_birth", "I0002"],
    ["entity_type unknown", b({ entity_type: "ROBOT" }), "beneficiary.entity_type", "I0002"],
    ["a COMPANY without company_name", b({ entity_type: "COMPANY" }), "beneficiary.company_name", "I0001"],
    ["a PERSONAL beneficiary without last_name", b({ entity_type: "PERSONAL", last_name: "" }), "beneficiary.last_name", "I0001"],
    ["no name and no company_name", b({ first_name: undefined }), "beneficiary.first_name", "I0001"],
    ["payer not an object", { payer: "Pat" }, "payer", "I0002"],
    ["payer date_of_birth malformed", { payer: { date_of_birth: "06-05-1980" } }, "payer.date_of_birth", "I0002"],
    ["payer entity_type unknown", { payer: { entity_type: "TRUST" } }, "payer.entity_type", "I0002"],
    ["payer address country_code three letters", { payer: { address: { country_code: "USA" } } }, "payer.address.country_code", "I0002"],
    ["payer e-mail malformed", { payer: { additional_info: { personal_email: "pat" } } }, "payer.additional_info.personal_email", "I0002"],
    ["payer address not an object", { payer: { address: ["Seattle"] } }, "payer.address", "I0002"],
  ];

  test.each(cases)("%s → 400 naming %s", async (_name, change, field, code) => {
    const { app, deps } = await makeApp();
    const res = await post(app, payoutBody(change));
    expect(res.status).toBe(400);
    expect(res.type).toBe("application/json");
    expect(res.body.return_status).toBe("0");
    expect(res.body.return_message.split(":")[0]).toBe(code);
    expect(res.body.errors.map((e: { field: string }) => e.field)).toEqual([field]);
    expect(res.body.return_message).toContain(field);
    expect(deps.store.data.payouts).toEqual([]);
  });

  test("every problem of a request is listed at once", async () => {
    const { app } = await makeApp();
    const res = await post(app, payoutBody({ request_id: "x", payment_currency: "", payment_method: "CHEQUE", beneficiary: { bank_details: { iban: "no" } } }));
    expect(res.status).toBe(400);
    expect(res.body.errors.map((e: { field: string }) => e.field).sort()).toEqual(
      ["beneficiary.bank_details.iban", "beneficiary.first_name", "beneficiary.last_name", "payment_currency", "payment_method", "request_id"].sort(),
    );
  });
});

describe("outcomes by scenario (default): account number suffixes and the beneficiary marker", () => {
  test.each([
    ["0001", "NO_ACCOUNT", "default/payout-no-account"],
    ["0002", "ACCOUNT_CLOSED", "default/payout-account-closed"],
    ["0003", "INSUFFICIENT_FUNDS", "default/payout-insufficient-funds"],
    ["0004", "INVALID_CURRENCY", "default/payout-invalid-currency"],
    ["0005", "INVALID_BIC", "default/payout-invalid-bic"],
    ["0006", "NAME_MISMATCH", "default/payout-name-mismatch"],
    ["0007", "COMPLIANCE_REJECTED", "default/payout-compliance-rejected"],
  ])("an account number ending %s fails with %s", async (suffix, type, rule) => {
    const { app } = await makeApp();
    const res = await post(app, payoutBody({ beneficiary: beneficiaryWith({ account_number: `4400${suffix}` }) }));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: "FAILED", failure_type: type, failure_reason: FAILURE_REASONS[type] });
    expect(res.body.failure_reason).not.toBe("");
    expect(res.headers["x-sandbox-rule"]).toBe(rule);
  });

  test('beneficiary last_name "FAIL" fails with UNKNOWN', async () => {
    const { app } = await makeApp();
    const res = await post(app, payoutBody({ beneficiary: beneficiaryWith({}, { last_name: "FAIL" }) }));
    expect(res.body).toMatchObject({ status: "FAILED", failure_type: "UNKNOWN", failure_reason: FAILURE_REASONS.UNKNOWN });
    expect(res.headers["x-sandbox-rule"]).toBe("default/payout-beneficiary-fail");
  });

  test("anything else completes at once", async () => {
    const { app } = await makeApp();
    const res = await post(app, payoutBody());
    expect(res.body).toMatchObject({ status: "COMPLETED", failure_type: "", failure_reason: "" });
    expect(res.headers["x-sandbox-rule"]).toBe("default/payout-completes");
  });
});

describe("PENDING payouts settle later: by the clock or by the operator, each change notified", () => {
  const pending = (suffix: string) =>
    payoutBody({ notify_url: "https://merchant.example.com/hook", beneficiary: beneficiaryWith({ account_number: `7700${suffix}` }) });
  const listed = async (app: App, merchant = ACME.merchant_id) =>
    (await request(app).get(`/__sandbox/payouts?merchant_id=${merchant}`)).body.payouts as Record<string, unknown>[];

  test.each([
    ["0008", "COMPLETED", "", ""],
    ["0009", "FAILED", "ACCOUNT_CLOSED", FAILURE_REASONS.ACCOUNT_CLOSED],
  ])("ending %s: PENDING for an hour, then %s", async (suffix, final, type, reason) => {
    const { app, deps } = await makeApp();
    const emit = vi.spyOn(deps.notifier, "emit");
    const res = await post(app, pending(suffix));
    expect(res.body).toMatchObject({ status: "PENDING", failure_type: "", failure_reason: "" });

    await advance(app, "59m");
    expect((await listed(app))[0]).toMatchObject({ transaction_id: res.body.transaction_id, status: "PENDING" });

    await advance(app, "2m");
    const [now] = await listed(app);
    expect(now).toMatchObject({ status: final, failure_type: type, failure_reason: reason, created_at: res.body.created_at });
    expect(now!.last_updated_at).not.toBe(res.body.last_updated_at);
    expect(now!.last_updated_at).toMatch(ISO_WITH_OFFSET);

    const events = payoutEvents(emit);
    expect(events.map((e) => e.event)).toEqual(["payout.pending", `payout.${final.toLowerCase()}`]);
    expect(events[1]).toMatchObject({ merchantId: ACME.merchant_id, url: "https://merchant.example.com/hook" });
    expect(events[1]!.data).toMatchObject({ transaction_id: res.body.transaction_id, status: final, amount_payer_pays: 115.5 });
  });

  test("the operator completes a PENDING payout; a final one cannot move again", async () => {
    const { app, deps } = await makeApp();
    const emit = vi.spyOn(deps.notifier, "emit");
    const { body } = await post(app, pending("0008"));
    const done = await request(app).post(`/__sandbox/payouts/${body.transaction_id}/complete`).send({});
    expect(done.status).toBe(200);
    expect(done.body.payout).toMatchObject({ transaction_id: body.transaction_id, status: "COMPLETED" });
    expect(payoutEvents(emit).map((e) => e.event)).toEqual(["payout.pending", "payout.completed"]);

    const again = await request(app).post(`/__sandbox/payouts/${body.transaction_id}/fail`).send({});
    expect(again.status).toBe(409);
    expect(again.body).toEqual({ error: "payout_final", message: `payout ${body.transaction_id} is already COMPLETED: only PENDING payouts move` });
    // the clock no longer moves it either
    await advance(app, "2h");
    expect((await listed(app))[0]).toMatchObject({ status: "COMPLETED" });
    expect(payoutEvents(emit)).toHaveLength(2);
  });

  test("the operator fails a PENDING payout with its own failure_type and reason, or the catalogue's", async () => {
    const { app } = await makeApp();
    const one = (await post(app, pending("0008"))).body;
    const two = (await post(app, pending("0008"))).body;
    const failed = await request(app)
      .post(`/__sandbox/payouts/${one.transaction_id}/fail`)
      .send({ failure_type: "NAME_MISMATCH", failure_reason: "Holder is A. Lee" });
    expect(failed.body.payout).toMatchObject({ status: "FAILED", failure_type: "NAME_MISMATCH", failure_reason: "Holder is A. Lee" });
    const plain = await request(app).post(`/__sandbox/payouts/${two.transaction_id}/fail`).send({});
    expect(plain.body.payout).toMatchObject({ status: "FAILED", failure_type: "UNKNOWN", failure_reason: FAILURE_REASONS.UNKNOWN });
  });

  test.each([
    ["an unknown payout", "/__sandbox/payouts/PO000/complete", {}, 404, "payout_not_found"],
    ["a failure_type outside the catalogue", "/__sandbox/payouts/:id/fail", { failure_type: "BORED" }, 400, "invalid_failure_type"],
    ["a failure_reason that is not text", "/__sandbox/payouts/:id/fail", { failure_reason: 42 }, 400, "invalid_failure_reason"],
  ])("operator: %s is refused", async (_name, path, send, status, error) => {
    const { app } = await makeApp();
    const { body } = await post(app, pending("0008"));
    const res = await request(app).post(path.replace(":id", body.transaction_id)).send(send);
    expect(res.status).toBe(status);
    expect(res.body.error).toBe(error);
    expect((await listed(app))[0]).toMatchObject({ status: "PENDING" });
  });

  test("the operator lists payouts by merchant and status, with what happens next", async () => {
    const { app } = await makeApp();
    await post(app, payoutBody());
    const p = (await post(app, pending("0009"))).body;
    await post(app, payoutBody({ merchant_id: "M-PAYOUT-LIST", account_id: "A-1" }));
    expect(await listed(app)).toHaveLength(2);
    const res = await request(app).get(`/__sandbox/payouts?merchant_id=${ACME.merchant_id}&status=PENDING`);
    expect(res.body.payouts).toHaveLength(1);
    expect(res.body.payouts[0]).toMatchObject({
      transaction_id: p.transaction_id,
      sandbox: { rule: "default/payout-bounces-later", next_status: "FAILED", next_failure_type: "ACCOUNT_CLOSED" },
    });
    expect(res.body.payouts[0].sandbox.due_at).not.toBe("");
  });

  test("the creation is notified too, with the response as data (no notification without notify_url is the notifier's call)", async () => {
    const { app, deps } = await makeApp();
    const emit = vi.spyOn(deps.notifier, "emit");
    const res = await post(app, fullPayout());
    const [event, ...more] = payoutEvents(emit);
    expect(more).toEqual([]);
    expect(event).toMatchObject({ merchantId: "M10001", url: "https://merchant.example.com/payouts", event: "payout.completed" });
    const { encryption_data: _sig, ...expected } = res.body as Record<string, unknown>;
    expect(event?.data).toEqual(expected);
  });

  test("reset of one merchant removes its payouts", async () => {
    const { app, deps } = await makeApp();
    await post(app, payoutBody());
    await post(app, payoutBody({ merchant_id: "M-PAYOUT-KEEP", account_id: "A-1" }));
    await request(app).post("/__sandbox/reset").send({ merchant_id: ACME.merchant_id });
    expect(deps.store.data.payouts.map((p) => p.merchant_id)).toEqual(["M-PAYOUT-KEEP"]);
  });
});

describe("scenario rules of your own (chosen by X-Sandbox-Scenario)", () => {
  let dir = "";
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = "";
  });

  /** A scenarios folder with the bundled default and one payout scenario extending it. */
  async function appWithScenario() {
    dir = mkdtempSync(join(tmpdir(), "sandgate-payout-scenarios-"));
    writeFileSync(join(dir, "default.json"), readFileSync(new URL("../scenarios/default.json", import.meta.url)));
    const rule = (id: string, reference: string, then: Record<string, unknown>) => ({ id, when: { operation: "payout", reference }, then });
    const scenario = {
      name: "payout-custom",
      description: "payout rules for the tests",
      extends: "default",
      rules: [
        rule("hold", "HOLD", { payout: { status: "PENDING" } }),
        rule("fail-later", "LATER", {
          payout: { status: "PENDING", after_seconds: 30, then: "FAILED", failure_type: "NAME_MISMATCH", failure_reason: "Holder is A. Lee" },
        }),
        rule("odd-status", "FIELDS", { fields: { status: "PROCESSING" } }),
      ],
    };
    writeFileSync(join(dir, "payout-custom.json"), JSON.stringify(scenario));
    const { app, deps } = await makeApp({ scenarios: dir });
    const send = (body: Record<string, unknown>) => post(app, body).set("X-Sandbox-Scenario", "payout-custom");
    return { app, deps, send };
  }

  test("PENDING without after_seconds waits for the operator, however far the clock moves", async () => {
    const { app, send } = await appWithScenario();
    const res = await send(payoutBody({ reference: "HOLD" }));
    expect(res.body.status).toBe("PENDING");
    expect(res.headers["x-sandbox-rule"]).toBe("payout-custom/hold");
    await advance(app, "30d");
    const [held] = (await request(app).get(`/__sandbox/payouts?merchant_id=${ACME.merchant_id}`)).body.payouts;
    expect(held).toMatchObject({ status: "PENDING", sandbox: { due_at: "", next_status: "COMPLETED" } });
    const done = await request(app).post(`/__sandbox/payouts/${res.body.transaction_id}/complete`);
    expect(done.body.payout.status).toBe("COMPLETED");
  });

  test("a later failure keeps the rule's failure_type and failure_reason", async () => {
    const { app, send } = await appWithScenario();
    const res = await send(payoutBody({ reference: "LATER" }));
    await advance(app, "31s");
    const replay = await send(payoutBody({ reference: "LATER", request_id: res.body.request_id }));
    expect(replay.body).toMatchObject({ status: "FAILED", failure_type: "NAME_MISMATCH", failure_reason: "Holder is A. Lee" });
  });

  test("then.fields change this answer only; the payout keeps its own values", async () => {
    const { app, send } = await appWithScenario();
    const res = await send(payoutBody({ reference: "FIELDS" }));
    expect(res.body.status).toBe("PROCESSING");
    const [stored] = (await request(app).get(`/__sandbox/payouts?merchant_id=${ACME.merchant_id}`)).body.payouts;
    expect(stored.status).toBe("COMPLETED");
  });

  test("the parent's magic values still apply, and without the header the default decides", async () => {
    const { app, send } = await appWithScenario();
    const viaParent = await send(payoutBody({ beneficiary: beneficiaryWith({ account_number: "90000003" }) }));
    expect(viaParent.body).toMatchObject({ status: "FAILED", failure_type: "INSUFFICIENT_FUNDS" });
    expect(viaParent.headers["x-sandbox-rule"]).toBe("default/payout-insufficient-funds");
    const plain = await post(app, payoutBody({ reference: "HOLD" }));
    expect(plain.body.status).toBe("COMPLETED");
  });
});

describe("bodies: JSON, form, JSON sent as a form", () => {
  const sends: [string, (app: App, body: Record<string, unknown>) => request.Test][] = [
    ["JSON", (app, body) => request(app).post("/v1/payout").send(body)],
    ["a form with bracket nesting", (app, body) => request(app).post("/v1/payout").type("form").send(qs.stringify(body))],
    ["JSON sent with the form content type", (app, body) => request(app).post("/v1/payout").set("Content-Type", FORM).send(JSON.stringify(body))],
    [
      "a form carrying beneficiary and payer as JSON strings",
      (app, body) =>
        request(app)
          .post("/v1/payout")
          .type("form")
          .send(qs.stringify({ ...body, beneficiary: JSON.stringify(body.beneficiary), payer: JSON.stringify(body.payer) })),
    ],
  ];

  test.each(sends)("%s gives the same payout", async (_name, send) => {
    const body = fullPayout();
    const expected = (await post((await makeApp()).app, body)).body;
    const res = await send((await makeApp()).app, body);
    expect(res.status, res.text).toBe(200);
    // the two apps answer at different instants: everything but the timestamps (and the signature over them) is equal
    const timeless = ({ created_at: _c, last_updated_at: _u, encryption_data: _e, ...rest }: Record<string, unknown>) => rest;
    expect(timeless(res.body)).toEqual(timeless(expected));
    expect(res.body.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?[+-]\d{2}:\d{2}$/);
  });

  test("rules on nested paths match a beneficiary sent as a JSON string in a form", async () => {
    const { app } = await makeApp();
    const body = payoutBody({ beneficiary: JSON.stringify(beneficiaryWith({ account_number: "12340001" })) });
    const res = await request(app).post("/v1/payout").type("form").send(qs.stringify(body));
    expect(res.body).toMatchObject({ status: "FAILED", failure_type: "NO_ACCOUNT" });
  });

  test("a form with a bad nested field names its path", async () => {
    const { app } = await makeApp();
    const res = await request(app)
      .post("/v1/payout")
      .type("form")
      .send(qs.stringify(payoutBody({ beneficiary: beneficiaryWith({ swift_code: "x" }) })));
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ field: "beneficiary.bank_details.swift_code", message: "must be a SWIFT/BIC code of 8 or 11 characters" }]);
  });
});

describe("signatures", () => {
  test("strict mode accepts the real scheme (merchant_id, account_id, request_id, payment_amount, payment_currency + key) and signs the answer", async () => {
    const { app } = await makeApp({ signatureMode: "strict" });
    const body = payoutBody();
    body.encryption_data = signRequest("payout", body, ACME.key);
    const res = await post(app, body);
    expect(res.status, res.text).toBe(200);
    expect(res.headers["x-sandbox-signature"]).toBe("matched");
    expect(res.body.encryption_data).toBe(signResponseFields("payout", res.body, ACME.key));
  });

  test("strict mode refuses a wrong signature in JSON, and stores nothing", async () => {
    const { app, deps } = await makeApp({ signatureMode: "strict" });
    const res = await post(app, payoutBody());
    expect(res.status).toBe(400);
    expect(res.body.return_status).toBe("0");
    expect(res.body.return_message).toMatch(/^I0014:/);
    expect(deps.store.data.payouts).toEqual([]);
  });
});

describe("fixtures and state", () => {
  let dir = "";
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = "";
  });

  test("a fixtures folder without payout-pricing.json uses the bundled table; a bad one names file and path", () => {
    dir = mkdtempSync(join(tmpdir(), "sandgate-pricing-"));
    expect(loadPayoutPricing(dir)).toEqual(loadPayoutPricing(defaultFixturesDir));
    const bundled = JSON.parse(readFileSync(join(defaultFixturesDir, "payout-pricing.json"), "utf8")) as { fees: Record<string, { fixed_currency: string }> };
    bundled.fees.SWIFT!.fixed_currency = "XXX";
    writeFileSync(join(dir, "payout-pricing.json"), JSON.stringify(bundled));
    expect(() => loadPayoutPricing(dir)).toThrow(/payout-pricing\.json: at fees\.SWIFT\.fixed_currency: XXX has no rate in fx\.rates/);
  });

  test("a --data file written before payouts existed still loads, with no payouts", async () => {
    dir = mkdtempSync(join(tmpdir(), "sandgate-old-state-"));
    const file = join(dir, "state.json");
    const fresh = await openStore({ fixturesDir: defaultFixturesDir, dataFile: file, seed: "old" });
    const { payouts: _gone, ...old } = fresh.data;
    writeFileSync(file, JSON.stringify(old));
    const reopened = await openStore({ fixturesDir: defaultFixturesDir, dataFile: file, seed: undefined });
    expect(reopened.data.payouts).toEqual([]);
  });
});
