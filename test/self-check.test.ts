// The proof of the proof: Sandgate recorded through `sandgate record` (Sandgate as its own
// upstream) covers every operation, payer page and notification kind, and `sandgate verify` finds
// no difference in it against a fresh Sandgate; a copy with known alterations is reported with
// exactly those differences, and --suggest closes the ones data can close. All through the
// commands as processes, as a merchant's CI runs them.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, test } from "vitest";
import { runSandgate } from "../scripts/sandgate-process.js";
import { recordSelfCheck, SHIPPED_RECORDING } from "../scripts/self-check/record.js";
import { EXPECTED_EVENTS, LEFT_OUT } from "../scripts/self-check/traffic.js";
import { GATEWAY_HANDLERS } from "../src/server/app.js";
import type { Difference } from "../src/proof/compare.js";
import { kindOf, parseHar, pathOf, type HarEntry } from "../src/proof/har.js";
import type { VerifyReport } from "../src/proof/verify.js";

const dir = mkdtempSync(join(tmpdir(), "sandgate-self-check-"));

const sandgate = (args: string[]) => runSandgate(args);

async function verify(file: string, ...flags: string[]): Promise<{ code: number | null; report: VerifyReport; stdout: string }> {
  const out = join(dir, `report-${Math.random().toString(36).slice(2)}.json`);
  const run = await sandgate(["verify", file, "--report", out, ...flags]);
  expect(run.stderr).toBe("");
  return { code: run.code, report: JSON.parse(readFileSync(out, "utf8")) as VerifyReport, stdout: run.stdout };
}

const bodyOf = (e: HarEntry) => e.request.postData?.text ?? "";
const eventOf = (e: HarEntry) => (JSON.parse(bodyOf(e)) as { event: string }).event;

describe("a recording of Sandgate through the recorder", () => {
  const live = join(dir, "live.har");
  let entries: HarEntry[];
  beforeAll(async () => {
    await recordSelfCheck(live);
    entries = parseHar(readFileSync(live, "utf8"));
  }, 60_000);

  test("covers every operation, every payer page and every notification a request causes", () => {
    const paths = new Set(entries.filter((e) => kindOf(e) === "gateway").map((e) => pathOf(e.request.url)));
    expect([...paths].sort()).toEqual(GATEWAY_HANDLERS.map((o) => o.path).sort());
    const pages = new Set(entries.filter((e) => kindOf(e) === "page").map((e) => pathOf(e.request.url).split("/")[2]));
    expect([...pages].sort()).toEqual(["3ds", "apm", "checkout"]);
    const events = new Set(entries.filter((e) => kindOf(e) === "notification").map(eventOf));
    expect([...events]).toEqual(expect.arrayContaining([...EXPECTED_EVENTS]));
    // on a slow machine a refund may settle (5 s) before the recorder stops: verify replays that too
    for (const event of events) expect([...EXPECTED_EVENTS, ...Object.keys(LEFT_OUT)]).toContain(event);
  });

  test("verifies against a fresh Sandgate with no difference, notifications included (exit 0)", async () => {
    const { code, report, stdout } = await verify(live);
    expect(report.differences).toEqual([]);
    expect(report.notifications.compared).toBe(true);
    expect(report.notifications.recorded).toBe(entries.filter((e) => kindOf(e) === "notification").length);
    expect(stdout).toContain("no differences");
    expect(code).toBe(0);
  }, 30_000);
});

test("the shipped recording verifies against a fresh Sandgate with no difference (if this fails after a change to Sandgate's answers, re-record it: npm run self-check:record)", async () => {
  const { code, report } = await verify(SHIPPED_RECORDING);
  expect(report.differences).toEqual([]);
  expect(report.notifications.compared).toBe(true);
  expect(code).toBe(0);
}, 30_000);

describe("a copy of the shipped recording with known alterations", () => {
  const shipped = JSON.parse(readFileSync(SHIPPED_RECORDING, "utf8")) as { log: { entries: HarEntry[] } };
  const altered = structuredClone(shipped);
  const list = altered.log.entries;
  const number = (e: HarEntry) => list.indexOf(e) + 1;
  const find = (path: string, has: string) => {
    const e = list.find((x) => pathOf(x.request.url) === path && bodyOf(x).includes(has));
    if (!e) throw new Error(`no ${path} exchange with ${has} in the shipped recording`);
    return e;
  };
  const edit = (e: HarEntry, from: string | RegExp, to: string) => {
    const text = e.response.content.text!;
    const next = text.replace(from, to);
    if (next === text) throw new Error(`alteration ${String(from)} found nothing in exchange #${number(e)}`);
    e.response.content.text = next;
  };
  const approved = find("/v1/authorise", "SELF-0001");
  const declined = find("/v1/authorise", "SELF-0004");
  const insufficient = find("/v1/authorise", "SELF-0005");
  const frictionless = find("/v1/authorise", "SELF-0007");
  const payout = find("/v1/payout", "");
  const capture = find("/v1/capture", "");
  const query = find("/v1/retrievalTrans", "");
  const optimise = find("/v1/paymentMethods/optimise", "");
  edit(payout, '"fee_amount":', '"fee":'); // a renamed field
  edit(approved, /(<merchant_id>[^<]*<\/merchant_id>)\s*(<account_id>[^<]*<\/account_id>)/, "$2$1"); // swapped XML children
  edit(capture, '"return_status":"1"', '"return_status":1'); // "1" vs 1
  edit(query, /"amount":"(\d+)\.(\d)0"/, '"amount":"$1.$2"'); // an amount with one decimal
  edit(declined, "D0005:Do not honor", "D0051:Insufficient funds"); // a changed result code
  edit(frictionless, /\s*<connector>[^<]*<\/connector>/, ""); // a missing element
  optimise.response.headers = optimise.response.headers.map((h) => (h.name.toLowerCase() === "content-type" ? { ...h, value: "text/plain" } : h)); // a different content type
  edit(insufficient, "D0051:Insufficient funds", "D0999:Card restricted by the issuer"); // an unknown result code
  const file = join(dir, "altered.har");
  writeFileSync(file, JSON.stringify(altered));

  const expected = [
    [number(approved), "authorise", "order", "respon"],
    [number(declined), "authorise", "value", "respon.result_info"],
    [number(insufficient), "authorise", "value", "respon.result_info"],
    // the recording is the gateway's side: an element it lacks is one Sandgate sends extra
    [number(frictionless), "authorise", "extra", "respon.connector"],
    [number(capture), "capture", "shape", "return_status"],
    [number(query), "retrievalTrans", "shape", expect.stringMatching(/^orders_list\[\d+\]\.amount$/)],
    [number(payout), "payout", "missing", "fee"],
    [number(payout), "payout", "extra", "fee_amount"],
    [number(optimise), "paymentMethodsOptimise", "content_type", "content-type"],
  ];
  const sorted = (rows: unknown[][]) => [...rows].sort((a, b) => Number(a[0]) - Number(b[0]) || String(a[3]).localeCompare(String(b[3])));

  test("is reported with exactly those differences (exit 1), in the table, the JSON report and JUnit XML", async () => {
    const junit = join(dir, "altered.xml");
    const { code, report, stdout } = await verify(file, "--junit", junit);
    expect(sorted(summary(report.differences))).toEqual(sorted(expected));
    expect(code).toBe(1);
    expect(stdout).toContain("9 differences");
    expect(stdout).toMatch(/#\d+\s+authorise\s+value\s+respon\.result_info\s+D0999:Card restricted by the issuer\s+D0051:Insufficient funds/);
    const xml = readFileSync(junit, "utf8");
    const cases = xml.match(/<testcase /g) ?? [];
    expect(cases.length).toBe(report.exchanges.length);
    expect(report.exchanges.length).toBe(list.length);
    expect(xml).toContain(`failures="${new Set(expected.map((e) => e[0])).size}"`);
    expect(xml).toContain("missing at fee;");
  }, 30_000);

  test("--ignore leaves paths out", async () => {
    const { report } = await verify(file, "--ignore", "connector", "--ignore", "orders_list[*].amount", "--ignore", "respon");
    // connector, the amount, and everything under respon (the order and both result codes)
    const paths = report.differences.map((d) => d.path);
    expect(paths).not.toContain("respon.connector");
    expect(paths.some((p) => p.startsWith("orders_list"))).toBe(false);
    expect(report.differences.length).toBe(expected.length - 5);
  }, 30_000);

  test("--suggest writes the rules that close the result codes; verifying with them reports only what data cannot close", async () => {
    const suggestions = join(dir, "suggested");
    const first = await verify(file, "--suggest", suggestions);
    expect(first.stdout).toMatch(/wrote 2 rules closing 2 differences/);
    expect(first.stdout).toContain("Sandgate defect: payout: Sandgate lacks fee, which the gateway sends");
    const scenario = JSON.parse(readFileSync(join(suggestions, "suggested.json"), "utf8")) as {
      rules: { when: Record<string, unknown>; then: Record<string, unknown> }[];
    };
    expect(scenario.rules.map((r) => r.when)).toEqual([
      { operation: "authorise", order_no: "SELF-0004" },
      { operation: "authorise", order_no: "SELF-0005" },
    ]);
    expect(scenario.rules[0]!.then).toEqual({ outcome: "insufficient_funds", fields: { result_info: "D0051:Insufficient funds" } });
    const second = await verify(file, "--scenarios", suggestions, "--scenario", "suggested");
    expect(sorted(summary(second.report.differences))).toEqual(sorted(expected.filter((e) => e[3] !== "respon.result_info")));
  }, 60_000);
});

describe("a recording verify cannot use: exit 2 with one line that says why", () => {
  const cases: [string, string, RegExp][] = [
    ["not JSON", "this is not json", /not JSON/],
    ["not a HAR", JSON.stringify({ hello: "world" }), /not a HAR 1\.2 document: log/],
    ["cut off while written", readFileSync(SHIPPED_RECORDING, "utf8").slice(0, 5000), /not JSON.*cut off/],
    [
      "a HAR of another API",
      JSON.stringify({
        log: {
          version: "1.2",
          entries: [
            {
              startedDateTime: "2026-11-26T10:00:00Z",
              time: 1,
              request: { method: "GET", url: "https://api.example/users", headers: [] },
              response: { status: 200, headers: [], content: { text: "[]" } },
            },
          ],
        },
      }),
      /no request of this gateway's API/,
    ],
  ];
  test.each(cases)("%s", async (name, text, message) => {
    const file = join(dir, `bad-${name.replace(/\W+/g, "-")}.har`);
    writeFileSync(file, text);
    const run = await sandgate(["verify", file]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(message);
    expect(run.stderr.trim().split("\n")).toHaveLength(1);
    expect(run.stdout).toBe("");
  });

  test("a file that is not there, and a flag that is not a URL", async () => {
    const missing = await sandgate(["verify", join(dir, "nope.har")]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/nope\.har: cannot be read \(ENOENT\)/);
    const bad = await sandgate(["verify", SHIPPED_RECORDING, "--against", "not-a-url"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--against must be an http\(s\) URL/);
  });
});

describe("notifications in a recording", () => {
  test("a recorded notification that differs, and one Sandgate sends that the gateway did not, are reported", async () => {
    const har = JSON.parse(readFileSync(SHIPPED_RECORDING, "utf8")) as { log: { entries: HarEntry[] } };
    const notifications = har.log.entries.filter((e) => kindOf(e) === "notification");
    const changed = notifications.find((e) => eventOf(e) === "payment.captured")!;
    const body = JSON.parse(bodyOf(changed)) as { data: Record<string, unknown> };
    body.data.payment_status = "9999";
    changed.request.postData!.text = JSON.stringify(body);
    const dropped = notifications.find((e) => eventOf(e) === "payout.failed")!;
    har.log.entries = har.log.entries.filter((e) => e !== dropped);
    const file = join(dir, "notifications.har");
    writeFileSync(file, JSON.stringify(har));
    const { code, report } = await verify(file);
    expect(code).toBe(1);
    expect(report.differences).toHaveLength(2);
    expect(summary(report.differences)).toEqual(
      expect.arrayContaining([
        [har.log.entries.indexOf(changed) + 1, "notification payment.captured", "value", "data.payment_status"],
        // an extra one is told with the exchange after which Sandgate sent it: the payout's
        [expect.any(Number), "notification payout.failed", "extra", "notification"],
      ]),
    );
  }, 30_000);
});

describe("verify --against a running Sandgate", () => {
  test("replays the shipped recording with no difference, re-signing each request with the fixture's key (strict signatures)", async () => {
    const { startSandbox } = await import("../src/server/sandbox.js");
    const running = await startSandbox({ port: 0, host: "127.0.0.1", logLevel: "silent", signatureMode: "strict", seed: "against" });
    try {
      const { code, report } = await verify(SHIPPED_RECORDING, "--against", running.url);
      expect(report.target).toBe(running.url);
      expect(report.differences).toEqual([]);
      expect(report.notifications.compared).toBe(true);
      expect(code).toBe(0);
      // with a wrong key every signed request is refused: the status differs, exchange by exchange
      await running.admin.reset();
      const wrong = await verify(SHIPPED_RECORDING, "--against", running.url, "--key", "not_the_key");
      const refused = new Set(wrong.report.differences.filter((d) => d.kind === "status").map((d) => d.exchange));
      const gateway = entriesOf(SHIPPED_RECORDING).flatMap((e, i) => (kindOf(e) === "gateway" ? [i + 1] : []));
      expect(gateway.filter((n) => !refused.has(n))).toEqual([]);
      expect(wrong.code).toBe(1);
    } finally {
      await running.close();
    }
  }, 60_000);
});

const entriesOf = (file: string) => parseHar(readFileSync(file, "utf8"));
const summary = (ds: Difference[]) => ds.map((d) => [d.exchange, d.operation, d.kind, d.path]);

describe("--suggest for a payout failure and a refused refund", () => {
  test("writes a payout rule and a refund rule (declined, with the gateway's code and text); with them the differences are gone", async () => {
    const har = JSON.parse(readFileSync(SHIPPED_RECORDING, "utf8")) as { log: { entries: HarEntry[] } };
    const list = har.log.entries;
    const payout = list.find((e) => pathOf(e.request.url) === "/v1/payout")!;
    const requestId = (JSON.parse(bodyOf(payout)) as { request_id: string }).request_id;
    const failed = { status: "FAILED", failure_type: "INVALID_BIC", failure_reason: "The BIC does not name a bank" };
    payout.response.content.text = JSON.stringify({ ...(JSON.parse(payout.response.content.text!) as object), ...failed });
    // the gateway's notification of that payout says the same
    const payoutNotice = list.find((e) => kindOf(e) === "notification" && bodyOf(e).includes(requestId))!;
    const notice = JSON.parse(bodyOf(payoutNotice)) as { event: string; data: Record<string, unknown> };
    payoutNotice.request.postData!.text = JSON.stringify({ ...notice, event: "payout.failed", data: { ...notice.data, ...failed } });
    // the gateway refuses the full refund of SELF-0014, and so never notifies it
    const refund = list.find((e) => pathOf(e.request.url) === "/v1/refund")!;
    const answer = JSON.parse(refund.response.content.text!) as { refund_orders: Record<string, string>[] };
    const order = answer.refund_orders.findIndex((o) => o.order_no === "SELF-0014");
    Object.assign(answer.refund_orders[order]!, {
      refund_status: "0",
      refund_message: "E0499:Refund not allowed for this payment method",
      refund_reference_id: "",
    });
    refund.response.content.text = JSON.stringify(answer);
    har.log.entries = list.filter((e) => !(kindOf(e) === "notification" && eventOf(e) === "refund.accepted" && bodyOf(e).includes("SELF-0014")));
    const file = join(dir, "payout-refund.har");
    writeFileSync(file, JSON.stringify(har));

    const suggestions = join(dir, "suggested-payout-refund");
    const first = await verify(file, "--suggest", suggestions);
    const paths = first.report.differences.map((d) => `${d.kind} ${d.path}`);
    expect(paths).toEqual(
      expect.arrayContaining([
        "value status",
        "shape failure_type",
        `value refund_orders[${order}].refund_status`,
        `value refund_orders[${order}].refund_message`,
        `shape refund_orders[${order}].refund_reference_id`,
      ]),
    );
    const scenario = JSON.parse(readFileSync(join(suggestions, "suggested.json"), "utf8")) as {
      rules: { when: Record<string, unknown>; then: Record<string, unknown> }[];
    };
    expect(scenario.rules.map((r) => [r.when, r.then])).toEqual([
      [
        { operation: "refund", order_no: "SELF-0014" },
        {
          outcome: "refund_declined",
          fields: { refund_status: "0", refund_message: "E0499:Refund not allowed for this payment method", refund_reference_id: "" },
        },
      ],
      [{ operation: "payout", request_id: requestId }, { payout: failed }],
    ]);
    const second = await verify(file, "--scenarios", suggestions, "--scenario", "suggested");
    expect(second.report.differences).toEqual([]);
    expect(second.code).toBe(0);
  }, 60_000);
});

test("a recording in which time passed (refunds settled 5 s after they were accepted) verifies with no difference: the fresh Sandgate's clock follows the recording", async () => {
  const file = join(dir, "waited.har");
  await recordSelfCheck(file, 6_000);
  const events = entriesOf(file)
    .filter((e) => kindOf(e) === "notification")
    .map(eventOf);
  expect(events).toEqual(expect.arrayContaining(["refund.processed", "refund.failed"]));
  const { code, report } = await verify(file);
  expect(report.differences).toEqual([]);
  expect(code).toBe(0);
}, 60_000);
