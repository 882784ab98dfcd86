// Every gateway operation, over HTTP, sent bodies generated around a valid request of its own
// (fields dropped, replaced by numbers, nulls, objects, JSON strings, values just off their rules,
// keys added), as JSON and as a form: the answer is never a 5xx or a stack trace, it is in the
// operation's own format (XML, JSON or HTML) with what it reflects escaped, and a refused request
// changes nothing.
import fc from "fast-check";
import request from "supertest";
import { describe, expect, test } from "vitest";
import { OPERATIONS } from "../src/app.js";
import { around, VALID } from "./gateway-bodies.js";
import { makeApp, snapshotState } from "./helpers.js";
import { REPLICA_MODE } from "./replica-helpers.js";

const CONTENT_TYPE = { xml: /^application\/xml/, json: /^application\/json/, html: /^text\/html/ } as const;

/** A body as a form sends it: every value text, objects and lists as JSON. */
function asForm(body: Record<string, unknown>): string {
  const form = new URLSearchParams();
  for (const [k, v] of Object.entries(body)) form.append(k, v === null ? "" : typeof v === "object" ? JSON.stringify(v) : String(v));
  return form.toString();
}

describe.skipIf(REPLICA_MODE)("gateway operations, fuzzed over HTTP", () => {
  test.each(OPERATIONS.map((op) => [op.path, op] as const))("%s: answered in its own format, never 5xx; a refusal changes nothing", async (_path, op) => {
    const { app, deps } = await makeApp();
    const valid = VALID[op.name]!;
    const answers = new Set<number>();
    // now and then a valid request as it is, so that the state the refusals must not change moves on
    const bodies = fc.oneof({ weight: 1, arbitrary: fc.constantFrom(...valid) }, { weight: 5, arbitrary: fc.constantFrom(...valid).chain((b) => around(b)) });
    await fc.assert(
      fc.asyncProperty(bodies, fc.boolean(), async (generated, form) => {
        const body = generated as Record<string, unknown>;
        const before = snapshotState(deps);
        const sent = form ? asForm(body) : JSON.stringify(body);
        const res = await request(app).post(op.path).type(form ? "form" : "json").send(sent);
        const said = `${op.path} (${form ? "form" : "JSON"}) ${sent.slice(0, 300)} → ${res.status} ${res.text.slice(0, 300)}`;
        answers.add(res.status);
        expect(res.status, said).toBeLessThan(500);
        expect(res.headers["content-type"], said).toMatch(CONTENT_TYPE[op.format]);
        expect(res.text, said).not.toMatch(/\n\s+at .+[jt]s:\d+/);
        // whatever it reflects of the request is escaped (JSON carries text as it is)
        if (op.format !== "json") expect(res.text, said).not.toMatch(/<script>alert|<x>/);
        if (res.status >= 400) expect(snapshotState(deps), said).toEqual(before);
      }),
      { numRuns: 100 },
    );
    // the bodies reached past validation, and were refused by it too
    expect([...answers].sort()).toEqual(expect.arrayContaining([200, 400]));
  });
});
