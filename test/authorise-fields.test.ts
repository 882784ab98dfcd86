// The interface document's "Direct payment result (XML)" and "APM payment result (XML)", element by element,
// checked on real responses; and every field of the interface document's payment and APM requests accepted.
import { createClock } from "../src/domain/clock.js";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startSandbox, type Sandbox } from "../src/server/sandbox.js";
import {
  ACME,
  apmPayment,
  childNames,
  directPayment,
  fullApmRequest,
  fullPaymentRequest,
  makeApp,
  parseXml,
  postAuthorise,
  rootText,
  textOf,
  type XmlObject,
} from "./helpers.js";

type Sent = Record<string, unknown>;
type Value = XmlObject[string];

interface ElementSpec {
  element: string;
  /** the subscription elements are filled only when the request carried `subscription`, and empty (but present) otherwise */
  subscriptionOnly?: boolean;
  check(value: Value, sent: Sent): void;
}

const echo = (field: string) => (v: Value, sent: Sent) => expect(textOf(v)).toBe(sent[field]);
const matches = (re: RegExp) => (v: Value) => expect(textOf(v)).toMatch(re);
const subscriptionEcho = (field: string) => (v: Value, sent: Sent) => expect(textOf(v)).toBe((sent.subscription as Record<string, unknown>)[field]);

/** The interface document's table, in the interface document's order. */
const DIRECT_RESULT: ElementSpec[] = [
  { element: "merchant_id", check: echo("merchant_id") },
  { element: "account_id", check: echo("account_id") },
  { element: "order_no", check: echo("order_no") },
  { element: "amount", check: echo("amount") },
  { element: "currency", check: echo("currency") },
  { element: "transaction_id", check: matches(/^\d{16}$/) },
  { element: "card", check: matches(/^\d{6}\*+\d{4}$/) },
  { element: "order_status", check: (v) => expect(textOf(v)).toBe("1") },
  { element: "result_info", check: (v) => expect(textOf(v)).toMatch(/^(\d{4}|[A-Z]\d{4}):\S/) },
  { element: "contract_name", subscriptionOnly: true, check: subscriptionEcho("contract_name") },
  { element: "recurring_id", subscriptionOnly: true, check: matches(/^\S+$/) },
  { element: "recurring_deduction_period", subscriptionOnly: true, check: matches(/^1 month$/) },
  { element: "recurring_deduction_time", subscriptionOnly: true, check: matches(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/) },
  { element: "note", check: (v, sent) => expect(textOf(v)).toBe(sent.note ?? "") },
  { element: "token_id", check: (v) => expect(textOf(v)).toBe("") },
  { element: "connector", check: (v) => expect(textOf(v)).toBe("NorthStar Acquiring") },
  { element: "threeds_result", check: (v) => expect(typeof textOf(v)).toBe("string") },
  { element: "risk_action", check: matches(/^(ACCEPT|REVIEW|REJECT)$/) },
  { element: "risk_score", check: matches(/^\d+(\.\d+)?$/) },
  {
    element: "risk_reasons",
    check: (v) => {
      const reasons = Array.isArray(v) ? v : [v];
      expect(reasons.length).toBeGreaterThan(0);
      for (const reason of reasons) {
        expect(typeof reason).toBe("object");
        expect(Object.keys(reason as XmlObject)).toEqual(["name", "status"]);
        expect(textOf((reason as XmlObject).name)).not.toBe("");
        expect(textOf((reason as XmlObject).status)).toMatch(/^(ACCEPT|REVIEW|REJECT)$/);
      }
    },
  },
  { element: "encryption_data", check: matches(/^[0-9a-f]{64}$/) },
];

/** Root children in document order, a repeated element (risk_reasons) counted once. */
const distinctChildren = (xml: string) => childNames(xml).filter((name, i, all) => all[i - 1] !== name);

describe("direct payment result: the interface document's element table", () => {
  const cases = [
    { name: "with a subscription", withSubscription: true },
    { name: "without a subscription", withSubscription: false },
  ];

  test.each(cases)(
    "$name: every element present, in the interface document's order, with its format (subscription ones empty without one)",
    async ({ withSubscription }) => {
      const { app } = await makeApp();
      const sent = directPayment({
        note: "Ring twice",
        ...(withSubscription ? { subscription: { contract_name: "Coffee club", interval: "month", interval_count: "1" } } : {}),
      });
      const res = await postAuthorise(app, sent);
      expect(res.status).toBe(200);
      expect(res.type).toBe("application/xml");

      // a client that reads the XML into a map (PHP's SimpleXML + json_encode) finds the same keys on every answer
      expect(distinctChildren(res.text)).toEqual(DIRECT_RESULT.map((e) => e.element));
      const xml = parseXml(res.text);
      for (const spec of DIRECT_RESULT) {
        const value = xml[spec.element];
        expect(value, spec.element).toBeDefined();
        if (spec.subscriptionOnly && !withSubscription) expect(textOf(value!), spec.element).toBe("");
        else spec.check(value!, sent);
      }
      if (!withSubscription) expect(res.text).toContain("<recurring_id/>");
    },
  );

  test("card is the masked number: first six and last four digits only", async () => {
    const { app } = await makeApp();
    const res = await postAuthorise(app, directPayment({ card: "5555555555554444" }));
    expect(textOf(parseXml(res.text).card)).toBe("555555******4444");
    expect(res.text).not.toContain("5555555555554444");
  });

  test("a successful result says 0000:Success", async () => {
    const { app } = await makeApp();
    const res = await postAuthorise(app, directPayment());
    expect(textOf(parseXml(res.text).result_info)).toBe("0000:Success");
  });

  test("recurring_deduction_time is one interval after the payment, in UTC", async () => {
    const now = new Date("2026-03-10T08:15:30.000Z");
    const { app } = await makeApp({ clock: createClock(() => now.getTime()) });
    const res = await postAuthorise(app, directPayment({ subscription: { interval: "week", interval_count: "2" } }));
    const xml = parseXml(res.text);
    expect(textOf(xml.recurring_deduction_time)).toBe("2026-03-24 08:15:30");
    expect(textOf(xml.recurring_deduction_period)).toBe("2 week");
  });
});

describe("every field of the interface document's requests is accepted", () => {
  test("a direct payment carrying all payment request fields is approved (checkout_time an integer)", async () => {
    const { app, deps } = await makeApp();
    const sent = fullPaymentRequest();
    const res = await postAuthorise(app, sent);
    expect(res.status, res.text).toBe(200);
    const xml = parseXml(res.text);
    expect(textOf(xml.order_status)).toBe("1");
    expect(textOf(xml.contract_name)).toBe("Monthly box");

    const tx = deps.store.data.transactions.find((t) => t.order_no === sent.order_no)!;
    expect(tx).toMatchObject({
      amount: "25.00",
      website: "shop.example.com",
      note: "Leave at the door",
      shopper_email: "jane@example.com",
      notify_url: "https://shop.example.com/notify",
      delivery: { delivery_city: "Oakland", delivery_postal_code: "94607" },
    });
    const subscription = deps.store.data.subscriptions.find((s) => s.transaction_id === tx.transaction_id);
    expect(subscription).toMatchObject({ contract: "C-1", billing_cycle: 12, interval: "month", price_id: "price-1" });
  });

  test("`website` is accepted as the name of the interface document's `the service`", async () => {
    const { app, deps } = await makeApp();
    const sent = directPayment({ website: "store.example.org" });
    expect((await postAuthorise(app, sent)).status).toBe(200);
    expect(deps.store.data.transactions.find((t) => t.order_no === sent.order_no)?.website).toBe("store.example.org");
  });

  test("an APM payment carrying every APM field, the nested person included, answers the APM result", async () => {
    const { app, deps } = await makeApp();
    const sent = fullApmRequest();
    const res = await postAuthorise(app, sent);
    expect(res.status, res.text).toBe(200);
    expect(childNames(res.text)).toEqual(["merchant_id", "account_id", "order_no", "amount", "currency", "issuer_url", "encryption_data"]);
    const tx = deps.store.data.transactions.find((t) => t.order_no === sent.order_no);
    expect(tx).toMatchObject({ kind: "apm", payment_method: "pix", return_url: "https://shop.example.com/return" });
  });
});

describe("APM payment result", () => {
  test("children are exactly the interface document's, plus encryption_data, echoing the request", async () => {
    const { app } = await makeApp();
    const sent = apmPayment();
    const res = await postAuthorise(app, sent);
    expect(res.status).toBe(200);
    expect(childNames(res.text)).toEqual(["merchant_id", "account_id", "order_no", "amount", "currency", "issuer_url", "encryption_data"]);
    const xml = parseXml(res.text);
    for (const field of ["merchant_id", "account_id", "order_no", "amount", "currency"]) expect(textOf(xml[field]), field).toBe(sent[field]);
    expect(textOf(xml.encryption_data)).toMatch(/^[0-9a-f]{64}$/);
  });

  test("issuer_url is unique per payment, and an unknown page is 404", async () => {
    const { app } = await makeApp();
    const urls = [];
    for (let i = 0; i < 3; i++) urls.push(textOf(parseXml((await postAuthorise(app, apmPayment())).text).issuer_url));
    expect(new Set(urls).size).toBe(3);
    for (const url of urls) expect((await request(app).get(new URL(url).pathname)).status).toBe(200);
    expect((await request(app).get("/pay/apm/000000000000000000000000")).status).toBe(404);
  });

  test("issuer_url follows --base-url when it is set", async () => {
    const { app } = await makeApp({ baseUrl: "https://sandbox.example.com/" });
    const url = textOf(parseXml((await postAuthorise(app, apmPayment())).text).issuer_url);
    expect(url).toMatch(/^https:\/\/sandbox\.example\.com\/pay\/apm\/[0-9a-f]+$/);
  });

  describe("on a real server", () => {
    let sandbox: Sandbox;
    beforeAll(async () => {
      sandbox = await startSandbox({ port: 0, host: "127.0.0.1", logLevel: "silent", seed: "fields-seed" });
    });
    afterAll(() => sandbox.close());

    test("issuer_url is an absolute address the payer's browser can open", async () => {
      const res = await fetch(`${sandbox.url}/v1/authorise`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(apmPayment()),
      });
      expect(res.status).toBe(200);
      const url = textOf(parseXml(await res.text()).issuer_url);
      expect(new URL(url).origin).toBe(sandbox.url);
      const page = await fetch(url);
      expect(page.status).toBe(200);
      expect(page.headers.get("content-type")).toMatch(/^text\/html/);
    });
  });
});

test("ACME's fixture account answers with its own connector", async () => {
  const { app } = await makeApp();
  const res = await postAuthorise(app, directPayment({ account_id: "A10002" }));
  expect(textOf(parseXml(res.text).connector)).toBe("Meridian Payments");
  expect(textOf(parseXml(res.text).merchant_id)).toBe(ACME.merchant_id);
});

describe("values are escaped, never interpreted as markup", () => {
  test.each([
    ["order_no", "<b>&amp;</b>]]>"],
    ["note", `"quoted" & <tagged> 'text'`],
  ])("%s with markup characters comes back as the same text", async (field, value) => {
    const { app } = await makeApp();
    const res = await postAuthorise(app, directPayment({ [field]: value }));
    expect(res.status).toBe(200);
    expect(res.text).not.toContain("<b>");
    expect(rootText(res.text, field)).toBe(value);
  });

  test("a refusal that quotes the request (an unknown token) escapes it", async () => {
    const { app } = await makeApp();
    const res = await postAuthorise(app, directPayment({ card: undefined, token_id: "<tok>&" }));
    expect(res.status).toBe(404);
    expect(rootText(res.text, "result_info")).toContain('"<tok>&"');
  });
});
