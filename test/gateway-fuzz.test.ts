// Every gateway operation, over HTTP, sent bodies generated around a valid request of its own
// (fields dropped, replaced by numbers, nulls, objects, JSON strings, values just off their rules,
// keys added), as JSON and as a form: the answer is never a 5xx or a stack trace, it is in the
// operation's own format (XML, JSON or HTML) with what it reflects escaped, and a refused request
// changes nothing.
import fc from "fast-check";
import request from "supertest";
import { describe, expect, test } from "vitest";
import { GATEWAY_HANDLERS, type App } from "../src/server/app.js";
import type { Deps } from "../src/deps/deps.js";
import { around, VALID } from "./gateway-bodies.js";
import { apmPayment, directPayment, makeApp, nextOrderNo, parseXml, snapshotState, standingClock, textOf } from "./helpers.js";
import { REPLICA_MODE } from "./replica-helpers.js";

const CONTENT_TYPE = { xml: /^application\/xml/, json: /^application\/json/, html: /^text\/html/ } as const;

/** A body as a form sends it: every value text, objects and lists as JSON. */
function asForm(body: Record<string, unknown>): string {
  const form = new URLSearchParams();
  for (const [k, v] of Object.entries(body)) form.append(k, v === null ? "" : typeof v === "object" ? JSON.stringify(v) : String(v));
  return form.toString();
}

/**
 * The state to compare before and after a request. In process: the whole runtime state. On
 * replicas (the replicas projects), whose processes also change records by themselves each second
 * (due refunds, notification attempts): the merchants and their accounts as the operator API
 * exports them from Redis, which only a request changes (a refused one must provision nothing).
 * Compared line for line: the export lists them in one order on every read (it once followed the
 * replica's most recently served merchants, and this failed on it).
 */
function stateOf(app: App, deps: Deps): () => Promise<unknown> {
  if (!REPLICA_MODE) return async () => snapshotState(deps);
  return async () => (await request(app).get("/__sandbox/state").expect(200)).text.split("\n").filter((line) => line.startsWith('{"c":"merchants"'));
}

/**
 * A sandbox for the fuzz: notifications may go to this machine only (replicas deliver them by
 * themselves). In process its clock stands still: a valid refund the fuzz made falls due 5 s later,
 * and a request that comes then applies it first, refused or not (time's doing, not the refusal's;
 * on a loaded machine a run lasts that long, and the comparison failed on it).
 */
const fuzzedApp = () => makeApp({ notifyAllow: "127.0.0.1", ...(REPLICA_MODE ? {} : { clock: standingClock() }) });

describe("gateway operations, fuzzed over HTTP", () => {
  test.each(GATEWAY_HANDLERS.map((op) => [op.path, op] as const))("%s: answered in its own format, never 5xx; a refusal changes nothing", async (_path, op) => {
    const { app, deps } = await fuzzedApp();
    const state = stateOf(app, deps);
    const valid = VALID[op.name]!;
    const answers = new Set<number>();
    // now and then a valid request as it is, so that the state the refusals must not change moves on
    const bodies = fc.oneof({ weight: 1, arbitrary: fc.constantFrom(...valid) }, { weight: 5, arbitrary: fc.constantFrom(...valid).chain((b) => around(b)) });
    await fc.assert(
      fc.asyncProperty(bodies, fc.boolean(), async (generated, form) => {
        const body = generated as Record<string, unknown>;
        const before = await state();
        const sent = form ? asForm(body) : JSON.stringify(body);
        const res = await request(app)
          .post(op.path)
          .type(form ? "form" : "json")
          .send(sent);
        const said = `${op.path} (${form ? "form" : "JSON"}) ${sent.slice(0, 300)} → ${res.status} ${res.text.slice(0, 300)}`;
        answers.add(res.status);
        expect(res.status, said).toBeLessThan(500);
        expect(res.headers["content-type"], said).toMatch(CONTENT_TYPE[op.format]);
        expect(res.text, said).not.toMatch(/\n\s+at .+[jt]s:\d+/);
        // whatever it reflects of the request is escaped (JSON carries text as it is)
        if (op.format !== "json") expect(res.text, said).not.toMatch(/<script>alert|<x>/);
        if (res.status >= 400) expect(await state(), said).toEqual(before);
      }),
      { numRuns: 100 },
    );
    // the bodies reached past validation, and were refused by it too
    expect([...answers].sort()).toEqual(expect.arrayContaining([200, 400]));
  });
});

// what a payer (or a script standing in for one) may post to a payment page
const payerField = fc.oneof(
  fc.tuple(
    fc.constant("outcome"),
    fc.constantFrom(
      "paid",
      "failed",
      "cancelled",
      "expired",
      "pending",
      "threeds_passed",
      "threeds_failed",
      "abandoned",
      "review",
      "stolen_card",
      "nope",
      "",
      "<b>",
    ),
  ),
  fc.tuple(
    fc.constantFrom("card", "expiration_month", "expiration_year", "security_code", "holder_name"),
    fc.constantFrom(
      "4242424242424242",
      "4000000000000002",
      "4242424242424241",
      "12",
      "13",
      "2030",
      "2020",
      "123",
      "",
      "<script>alert(1)</script>",
      "x".repeat(300),
    ),
  ),
  fc.tuple(fc.constantFrom("challenge_code", "allParams", "orderNo", "extra"), fc.constantFrom("1234", "0000", "", "x=1", "<x>", "ORD-1")),
);

describe("payment pages, fuzzed over HTTP", () => {
  test("any form a payer posts to a checkout, 3-D Secure or APM page: a page or JSON, never 5xx; a refusal changes nothing", async () => {
    const { app, deps } = await fuzzedApp();
    const state = stateOf(app, deps);
    // a payment waiting at each kind of page (no notify_url: nothing leaves this machine)
    const pending = {
      checkout: async () => {
        const res = await request(app)
          .post("/v1/checkout")
          .send({ ...VALID.checkout![1], order_no: nextOrderNo("FZ") })
          .expect(200);
        return new URL(/action="([^"]+)"/.exec(res.text)![1]!.replace(/&amp;/g, "&")).pathname;
      },
      threeDs: async () =>
        new URL(
          textOf(
            parseXml(
              (
                await request(app)
                  .post("/v1/authorise")
                  .send(directPayment({ card: "4000002760003184" }))
                  .expect(200)
              ).text,
            ).issuer_url,
          ),
        ).pathname,
      apm: async () => new URL(textOf(parseXml((await request(app).post("/v1/authorise").send(apmPayment()).expect(200)).text).issuer_url)).pathname,
    };
    const statuses = new Set<number>();
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...(Object.keys(pending) as (keyof typeof pending)[])),
        fc.array(payerField, { maxLength: 6 }),
        fc.boolean(),
        fc.boolean(),
        async (kind, fields, json, twice) => {
          const page = await pending[kind]();
          const form = new URLSearchParams(fields).toString();
          for (const attempt of twice ? [1, 2] : [1]) {
            const before = await state();
            const res = await request(app)
              .post(page)
              .type("form")
              .set("accept", json ? "application/json" : "text/html")
              .send(form);
            const said = `${attempt}: POST ${page} ${form.slice(0, 300)} → ${res.status} ${res.text.slice(0, 300)}`;
            statuses.add(res.status);
            expect(res.status, said).toBeLessThan(500);
            // a page, or JSON for a script that asks for it (the checkout's own form landing is its page)
            if (res.status !== 303)
              expect(res.headers["content-type"], said).toMatch(json && res.status >= 400 ? /^application\/json/ : /^(text\/html|application\/json)/);
            if (!json) expect(res.text, said).not.toMatch(/<script>alert|<x>/);
            if (res.status >= 400) expect(await state(), said).toEqual(before);
          }
        },
      ),
      { numRuns: 100 },
    );
    // finished (a redirect onward, or its result page), refused, and asked again once finished
    expect([...statuses]).toEqual(expect.arrayContaining([400, 409]));
    expect([...statuses].some((s) => s === 200 || s === 303)).toBe(true);
  });
});
