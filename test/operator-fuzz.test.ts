// Every operator call that takes a JSON body, sent bodies of its own keys holding any JSON value (a
// number where text is meant, an array, an object, null, a huge or hostile string) and path
// parameters that are real records or not: the answer is never a 5xx or a crash, it is JSON, a
// refusal is { error, message }, and a refusal changes nothing (but the gateway's refusal of a
// step, which a payment's history keeps as "capture refused", as it keeps the merchant's own).
import fc from "fast-check";
import request from "supertest";
import { describe, expect, test } from "vitest";
import { keysOf } from "../src/admin/accepts-only.js";
import { OPERATOR_CALLS } from "../src/api/operator-calls.js";
import type { OperatorCall } from "../src/api/operator-call.js";
import { z } from "zod";
import { ACME, directPayment, formSession, makeApp, snapshotState, standingClock } from "./helpers.js";
import { REPLICA_MODE } from "./replica-helpers.js";

const value = fc.oneof(
  fc.constantFrom(
    "",
    " ",
    "0",
    "-1",
    "0.001",
    "12.345",
    "1e400",
    "NaN",
    "Infinity",
    "99999999999999999999.99",
    "10.00",
    "processed",
    "failed",
    "approve",
    "reject",
    "paid",
    "3d",
    "90s",
    "M10001",
    "CI-FUZZ",
    "declines",
    "<b>&amp;</b>",
    "__proto__",
    "http://127.0.0.1:1/",
  ),
  fc.string({ maxLength: 30 }),
  fc.constant("x".repeat(100_000)),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.oneof(fc.string({ maxLength: 8 }), fc.integer()), { maxLength: 3 }),
  fc.dictionary(fc.constantFrom("a", "delay_seconds", "duplicate", "drop", "__proto__"), fc.oneof(fc.string({ maxLength: 8 }), fc.integer(), fc.boolean()), {
    maxKeys: 3,
  }),
);

/** Candidates for each path parameter: records of the fixtures (in many states) and ones that are not. */
const hostile = ["nope", "..%2F..%2Fetc", "%3Cscript%3E", "0", " ", "9".repeat(300)];
const params: Record<string, string[]> = {
  transaction_id: ["1000000000001001", "1000000000001002", "1000000000001003", "1000000000001005", "1000000000001007", "2000000000002001", ...hostile],
  ref: ["1000000000001003-01", "1000000000001004-01", ...hostile],
  recurring_id: hostile,
  merchant_id: ["M10001", "CI-FUZZ", ...hostile],
  merchantId: ["M10001", "CI-FUZZ", ...hostile],
  name: ["fuzz", "default", "declines", ...hostile],
  id: hostile,
};

type State = { transactions: { transaction_id: string; history?: { event: string }[] }[] };
/** The state but one payment's history (which keeps its latest lines only: a new line may push out the oldest). */
const withoutHistoryOf = (state: unknown, transactionId: string) => {
  const copy = structuredClone(state) as State;
  for (const tx of copy.transactions) if (tx.transaction_id === transactionId) delete tx.history;
  return copy;
};
const lastLine = (state: unknown, transactionId: string) => (state as State).transactions.find((t) => t.transaction_id === transactionId)?.history?.at(-1);

const withBody = (OPERATOR_CALLS as readonly OperatorCall[]).filter((c): c is OperatorCall & { body: z.ZodType } => c.body !== undefined && c.body !== "raw");

describe.skipIf(REPLICA_MODE)("operator calls, fuzzed", () => {
  test("the fuzz reaches every call with a JSON body", () => {
    expect(withBody.map((c) => c.operationId)).toEqual(
      expect.arrayContaining([
        "advanceClock",
        "settleRefund",
        "completePayment",
        "failPayout",
        "triggerNotification",
        "checkReceiver",
        "setGlobalScenario",
        "bindScenario",
        "saveSnapshot",
        "restoreSnapshot",
        "resetState",
        "capturePayment",
        "refundPayment",
        "reviewPayment",
      ]),
    );
  });

  test.each(withBody.map((c) => [c.operationId, c] as const))(
    "%s: any body of its keys is answered in JSON, never 5xx; a refusal changes nothing",
    async (_id, call) => {
      // (the clock stands still: nothing falls due by itself between the two states compared)
      const { app, deps } = await makeApp({ clock: standingClock() });
      // a payment of its own to capture, refund or review, besides the fixtures'
      await request(app)
        .post("/v1/authorise")
        .send(directPayment({ ...ACME, amount: "20.00" }))
        .expect(200);
      const names = [...call.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
      const keys = keysOf(call.body);
      const arbitraries = {
        path: fc.tuple(...names.map((n) => fc.constantFrom(...(params[n] ?? hostile)))),
        body: fc.dictionary(fc.constantFrom(...(keys.length ? keys : ["x"])), value, { maxKeys: keys.length || 1 }).map((b) => (keys.length ? b : {})),
      };
      await fc.assert(
        fc.asyncProperty(arbitraries.path, arbitraries.body, async (values, body) => {
          // never a request to anything but this machine
          if (typeof body.url === "string" && !body.url.startsWith("http://127.0.0.1:1/")) body.url = "http://127.0.0.1:1/";
          let path = call.path;
          names.forEach((n, i) => (path = path.replace(`{${n}}`, values[i]!)));
          const before = snapshotState(deps);
          const res = await request(app)[call.method](path).set("content-type", "application/json").send(JSON.stringify(body));
          const said = `${call.method.toUpperCase()} ${path} ${JSON.stringify(body).slice(0, 200)} → ${res.status} ${res.text.slice(0, 200)}`;
          expect(res.status, said).toBeLessThan(500);
          expect(res.headers["content-type"], said).toMatch(/^application\/json/);
          if (res.status >= 400) {
            expect(typeof res.body.error, said).toBe("string");
            expect(typeof res.body.message, said).toBe("string");
            const after = snapshotState(deps);
            // a step the gateway refused (409 refused) may be in the payment's history, and only there
            const line = lastLine(after, values[0]!);
            if (res.body.error === "refused" && line && JSON.stringify(line) !== JSON.stringify(lastLine(before, values[0]!))) {
              expect(line.event, said).toMatch(/ refused$/);
              expect(withoutHistoryOf(after, values[0]!), said).toEqual(withoutHistoryOf(before, values[0]!));
            } else expect(after, said).toEqual(before);
          }
        }),
        { numRuns: 60 },
      );
    },
  );
});

const formValue = fc.oneof(
  fc.constantFrom(
    "",
    "10.00",
    "-1",
    "1e400",
    "processed",
    "failed",
    "approve",
    "paid",
    "3d",
    "M10001",
    "CI-FUZZ",
    "declines",
    "<script>alert(1)</script>",
    "true",
  ),
  fc.string({ maxLength: 30 }),
);
// where a form may send the tester back to: only this dashboard's pages
const back = fc.constantFrom(
  "/__sandbox/",
  "/__sandbox/ui/transactions",
  "//evil.example/",
  "https://evil.example/__sandbox/",
  "/__sandbox/../x",
  "/__sandbox/\\evil.example",
  "/__sandbox//evil.example",
  "javascript:alert(1)",
  "/__sandbox/ui/transactions?ok=<b>",
);
const twins = withBody.filter((c): c is typeof c & { form: string } => c.form !== undefined);

describe.skipIf(REPLICA_MODE)("the dashboard's forms, fuzzed", () => {
  test.each(twins.map((c) => [c.form, c] as const))(
    "%s: any fields are answered with a page or a redirect to a dashboard page, never 5xx",
    async (_form, call) => {
      const { app } = await makeApp();
      const { cookie, token } = await formSession(app);
      const names = [...call.form.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
      const fields = fc.array(fc.tuple(fc.constantFrom(...keysOf(call.body), "back"), formValue), { maxLength: 6 });
      await fc.assert(
        fc.asyncProperty(fc.tuple(...names.map((n) => fc.constantFrom(...(params[n] ?? hostile)))), fields, back, async (values, pairs, to) => {
          let path = call.form;
          names.forEach((n, i) => (path = path.replace(`{${n}}`, values[i]!)));
          const form = new URLSearchParams([["_form", token], ["back", to], ...pairs]);
          const res = await request(app).post(path).set("cookie", cookie).type("form").send(form.toString());
          const said = `POST ${path} ${form.toString().slice(0, 200)} → ${res.status} ${String(res.headers.location ?? res.text.slice(0, 200))}`;
          expect(res.status, said).toBeLessThan(500);
          if (res.status === 303) {
            // a browser resolves it to this server, under the dashboard
            const target = new URL(String(res.headers.location), "http://sandgate.test");
            expect([target.origin, target.pathname.startsWith("/__sandbox/")], said).toEqual(["http://sandgate.test", true]);
          } else expect(res.headers["content-type"], said).toMatch(/^text\/html/);
        }),
        { numRuns: 60 },
      );
    },
  );

  test("the playground: any fields are answered with its page (refused: nothing stored) or a redirect to the payment it made, never 5xx but a gateway's fault", async () => {
    const { app, deps } = await makeApp({ clock: standingClock() });
    const { cookie, token } = await formSession(app, "/__sandbox/ui/playground");
    const field = fc.oneof(
      fc.tuple(fc.constant("kind"), fc.constantFrom("card", "checkout", "apm", "", "nope")),
      fc.tuple(fc.constantFrom("merchant_id", "account_id"), fc.constantFrom("M10001", "A10001", "A10002", "M10002", "A20001", "CI-X", "", "<b>")),
      fc.tuple(
        fc.constantFrom("amount", "currency", "card", "expiration_month", "expiration_year", "security_code", "payment_method", "outcome", "order_no"),
        formValue,
      ),
      // where the gateway would send the payer and the notifications: only this machine
      fc.tuple(fc.constantFrom("return_url", "notify_url"), fc.constantFrom("", "http://127.0.0.1:1/x", "not a url", "javascript:alert(1)")),
    );
    // a card payment that goes through, with any of its fields changed
    const valid = {
      kind: "card",
      merchant_id: "M10001",
      account_id: "A10001",
      amount: "10.00",
      currency: "USD",
      card: "4242424242424242",
      expiration_month: "12",
      expiration_year: "2031",
      security_code: "123",
    };
    const statuses = new Set<number>();
    await fc.assert(
      fc.asyncProperty(fc.array(field, { maxLength: 4 }), async (changes) => {
        const form = new URLSearchParams({ _form: token, ...valid, ...Object.fromEntries(changes) });
        const before = snapshotState(deps);
        const res = await request(app)
          .post("/__sandbox/ui/playground")
          .set({ cookie, "sec-fetch-site": "same-origin", origin: "http://127.0.0.1" })
          .type("form")
          .send(form.toString());
        const said = `POST /__sandbox/ui/playground ${form.toString().slice(0, 300)} → ${res.status} ${String(res.headers.location ?? res.text.match(/id="playground-error"[^>]*>([^<]*)/)?.[1] ?? res.text.slice(0, 200))}`;
        statuses.add(res.status);
        if (res.status === 303) return void expect(res.headers.location, said).toMatch(/^\/__sandbox\/ui\/playground\/result\//);
        // refused by the playground or the gateway (400), or a scenario's fault the gateway answered (502): its page, and nothing stored
        expect([200, 400, 502], said).toContain(res.status);
        expect(res.headers["content-type"], said).toMatch(/^text\/html/);
        expect(res.text, said).not.toMatch(/<script>alert|<b>/);
        if (res.status !== 200) expect(snapshotState(deps), said).toEqual(before);
      }),
      { numRuns: 60 },
    );
    expect([...statuses]).toEqual(expect.arrayContaining([303, 400]));
  });
});
