// `sandgate check-receiver` / POST /__sandbox/receiver-checks: real receivers on 127.0.0.1 (a
// correct one, and one per common mistake) get exactly the verdicts they deserve; every probe is in
// the notifications log; bad input is refused and changes nothing; the command runs as a process.
import { createHash, timingSafeEqual } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, test, vi } from "vitest";
import { runSandgate, spawnSandgate } from "../scripts/sandgate-process.js";
import { PROBES, type Verdict } from "../src/receiver-check/probes.js";
import type { ReceiverCheckReport } from "../src/receiver-check/run.js";
import { runReceiverCheck } from "../src/receiver-check/run.js";
import { startSandbox, type Sandbox } from "../src/server/sandbox.js";
import type { Notification } from "../src/domain/types.js";
import { ACME, directPayment, makeApp } from "./helpers.js";

/** The field list a merchant verifies encryption_data with, read from the data file as a merchant's integration would. */
const SIGNED_FIELDS = (JSON.parse(readFileSync(new URL("../data/signature-fields.json", import.meta.url), "utf8")) as Record<string, { response: string[] }>)
  .notification!.response;
const TOLERANCE_MS = 300_000;

type Flaw = "none" | "accepts everything" | "crashes on duplicates" | "slow" | "crashes on malformed JSON" | "window on created_at";

interface Receiver {
  url: string;
  /** every request: its path, and how many were being answered at once when it came */
  requests: { path: string; concurrent: number }[];
  close(): Promise<void>;
}

/** "data.amount" reads inside data; a field the body lacks counts as empty. */
function valueOf(body: Record<string, unknown>, field: string): string {
  const value = field.startsWith("data.") ? (body.data as Record<string, unknown> | undefined)?.[field.slice(5)] : body[field];
  return value === undefined || value === null ? "" : String(value);
}

/** A receiver as a merchant writes it: [status, text] for the raw body; a flaw throws where a careless one would. */
function createHandler(key: string, flaw: Flaw) {
  const seen = new Set<string>();
  return (raw: string, contentType: string): [number, string] => {
    if (flaw === "accepts everything") return [200, "ok"];
    if (!/^application\/json\b/i.test(contentType)) return [400, "JSON only"];
    if (raw === "") return [400, "empty body"];
    let parsed: unknown;
    if (flaw === "crashes on malformed JSON") parsed = JSON.parse(raw);
    else {
      try {
        parsed = JSON.parse(raw);
      } catch {
        return [400, "not JSON"];
      }
    }
    if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) return [400, "not a notification"];
    const body = parsed as Record<string, unknown>;
    const got = body.encryption_data;
    if (typeof got !== "string" || !/^[0-9a-f]{64}$/.test(got)) return [401, "unsigned"];
    const expected = createHash("sha256")
      .update(SIGNED_FIELDS.map((f) => valueOf(body, f)).join("") + key)
      .digest("hex");
    if (!timingSafeEqual(Buffer.from(got), Buffer.from(expected))) return [401, "bad signature"];
    // the freshness window: on sent_at, the attempt's own signed time (a careless one holds it on created_at)
    const age = Date.now() - Date.parse(String(flaw === "window on created_at" ? body.created_at : body.sent_at));
    if (!(Math.abs(age) <= TOLERANCE_MS)) return [400, "too old"];
    const id = String(body.notification_id);
    if (seen.has(id)) {
      if (flaw === "crashes on duplicates") throw new Error(`duplicate key ${id}`);
      return [200, "duplicate"];
    }
    seen.add(id);
    return [200, "ok"];
  };
}

async function startReceiver(flaw: Flaw = "none", key: string = ACME.key): Promise<Receiver> {
  const handle = createHandler(key, flaw);
  const requests: Receiver["requests"] = [];
  let active = 0;
  const server: Server = createServer((req, res) => {
    active++;
    requests.push({ path: req.url ?? "", concurrent: active });
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const answer = (status: number, text: string) => {
        active--;
        if (!res.destroyed) res.writeHead(status, { "content-type": "text/plain" }).end(text);
      };
      if (flaw === "slow") {
        setTimeout(() => answer(200, "ok"), 6_000);
        return;
      }
      try {
        answer(...handle(Buffer.concat(chunks).toString("utf8"), req.headers["content-type"] ?? ""));
      } catch {
        // what a framework's default error handler does
        answer(500, "Internal Server Error");
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/notify`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())).finally(() => server.closeAllConnections()),
  };
}

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const PROBE_IDS = PROBES.map((p) => p.id);
const verdicts = (report: ReceiverCheckReport) => Object.fromEntries(report.probes.map((p) => [p.probe, p.verdict]));
const allPass = (): Record<string, Verdict> => Object.fromEntries(PROBE_IDS.map((id) => [id, "pass"]));

describe("the verdicts each receiver deserves", () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await startSandbox({ port: 0, host: "127.0.0.1", logLevel: "silent", watchScenarios: false, seed: "receiver-check" });
  });
  afterAll(() => sandbox.close());

  const check = (url: string, extra: { transaction_id?: string; key?: string } = {}) =>
    runReceiverCheck(sandbox.deps, { url, merchant_id: ACME.merchant_id, ...extra }, sandbox.url);
  const logOf = async (id: string) =>
    ((await (await fetch(`${sandbox.url}/__sandbox/notifications?check=${id}`)).json()) as { notifications: Notification[] }).notifications;

  test("a correct receiver passes every probe; only its URL is contacted, one request at a time; every probe is in the log with its attempt", async () => {
    const receiver = await startReceiver();
    try {
      const report = await check(receiver.url);
      expect(verdicts(report)).toEqual(allPass());
      expect(report).toMatchObject({ passed: true, stopped: "", not_run: [], payment: "created", summary: { pass: 16, warning: 0, fail: 0, not_run: 0 } });
      expect(report.probes.map((p) => p.probe)).toEqual(PROBE_IDS);
      for (const p of report.probes) expect(p.why, p.probe).toMatch(/Standard Webhooks|Stripe/);
      // 16 probes, the out-of-order one sends two
      expect(receiver.requests).toHaveLength(17);
      expect(receiver.requests.every((r) => r.path === "/notify" && r.concurrent === 1)).toBe(true);

      const log = await logOf(report.check);
      expect(log).toHaveLength(16);
      expect(log.every((n) => n.check === report.check && n.state !== "pending" && n.url === receiver.url)).toBe(true);
      const byProbe: Record<string, Notification> = Object.fromEntries(log.map((n) => [n.probe ?? "", n]));
      // the duplicate is the same notification's second attempt, as Sandgate's own duplicates are
      expect(byProbe.valid!.attempts.map((a) => [a.attempt, a.reason, a.http_status])).toEqual([
        [1, "first", 200],
        [2, "duplicate", 200],
      ]);
      expect(byProbe.valid).toMatchObject({ state: "delivered", event: "payment.authorised" });
      expect(byProbe.wrong_key).toMatchObject({ state: "failed", attempts: [{ attempt: 1, http_status: 401 }] });
      expect(byProbe.malformed_json!.raw).toMatchObject({ content_type: "application/json" });
      expect(byProbe.empty_body!.raw).toEqual({ content_type: "application/json", body: "" });
      expect(byProbe.signature_missing!.raw!.body).not.toContain("encryption_data");
      expect(log.filter((n) => n.probe === "out_of_order").map((n) => n.event)).toEqual(["refund.processed", "payment.captured"]);
      expect(Buffer.byteLength(JSON.stringify(byProbe.large_body!.payload))).toBeGreaterThan(45_000);
      // the check's payment: made by a direct authorise, without a notify_url of its own
      const [tx] = await sandbox.admin.transactions({ merchant_id: ACME.merchant_id, order_no: `CHECK-${report.check}` });
      expect(tx).toMatchObject({ transaction_id: report.transaction_id, state: "authorised", notify_url: "" });
      // nothing is left to send: a check never retries
      expect(await sandbox.admin.deliverNotifications()).toMatchObject({ attempts: 0 });
    } finally {
      await receiver.close();
    }
  });

  test("a merchant whose clock is four years on: the check's payment is made with a card good by that clock, and a correct receiver passes", async () => {
    // its first payment provisions it and its account
    await fetch(`${sandbox.url}/v1/authorise`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(directPayment({ merchant_id: "CLOCK-CHECK", account_id: "A1" })),
    });
    await sandbox.admin.call("advanceClock", { body: { advance: "1461d", merchant_id: "CLOCK-CHECK" } });
    // a correct receiver on the world's clock: its freshness window holds on sent_at, the real time
    const receiver = await startReceiver("none", "sk_test_CLOCK-CHECK");
    try {
      const report = await runReceiverCheck(sandbox.deps, { url: receiver.url, merchant_id: "CLOCK-CHECK" }, sandbox.url);
      expect(report.probes.filter((p) => p.verdict !== "pass").map((p) => `${p.probe}: ${JSON.stringify(p.sends).slice(0, 300)}`)).toEqual([]);
      expect(report).toMatchObject({ passed: true, payment: "created" });
      const [tx] = await sandbox.admin.transactions({ merchant_id: "CLOCK-CHECK", order_no: `CHECK-${report.check}` });
      expect(tx).toMatchObject({ transaction_id: report.transaction_id, state: "authorised" });
    } finally {
      await receiver.close();
    }
  });

  test("one that accepts everything: every signature probe and the malformed bodies fail; the stale and mistyped ones warn", async () => {
    const receiver = await startReceiver("accepts everything");
    try {
      const report = await check(receiver.url);
      expect(verdicts(report)).toEqual({
        ...allPass(),
        wrong_key: "fail",
        tampered_amount: "fail",
        tampered_status: "fail",
        signature_missing: "fail",
        signature_not_hex: "fail",
        signature_wrong_length: "fail",
        stale: "warning",
        malformed_json: "fail",
        empty_body: "fail",
        wrong_content_type: "warning",
      });
      expect(report.passed).toBe(false);
      expect(report.probes.find((p) => p.probe === "tampered_amount")!.reason).toMatch(/data\.amount/);
    } finally {
      await receiver.close();
    }
  });

  test("one whose freshness window is on created_at fails late_retry only: it would refuse Sandgate's genuine late retries", async () => {
    const receiver = await startReceiver("window on created_at");
    try {
      const report = await check(receiver.url);
      expect(verdicts(report)).toEqual({ ...allPass(), late_retry: "fail" });
      expect(report.probes.find((p) => p.probe === "late_retry")!.reason).toMatch(/sent_at/);
    } finally {
      await receiver.close();
    }
  });

  test("one that crashes on duplicates fails the duplicate probe only", async () => {
    const receiver = await startReceiver("crashes on duplicates");
    try {
      const report = await check(receiver.url);
      expect(verdicts(report)).toEqual({ ...allPass(), duplicate: "fail" });
      expect(report.probes.find((p) => p.probe === "duplicate")!.sends).toMatchObject([{ attempt: 2, http_status: 500 }]);
    } finally {
      await receiver.close();
    }
  });

  test("one that answers 500 to malformed JSON fails that probe only", async () => {
    const receiver = await startReceiver("crashes on malformed JSON");
    try {
      expect(verdicts(await check(receiver.url))).toEqual({ ...allPass(), malformed_json: "fail" });
    } finally {
      await receiver.close();
    }
  });

  test("one that answers after the timeout (5 s; 0.3 s here): two timeouts in a row stop the run, said once", async () => {
    vi.stubEnv("SANDGATE_TIMINGS", JSON.stringify({ notifyTimeoutMs: 300 }));
    const own = await startSandbox({ port: 0, host: "127.0.0.1", logLevel: "silent", watchScenarios: false, seed: "receiver-check" });
    const receiver = await startReceiver("slow");
    try {
      const report = await runReceiverCheck(own.deps, { url: receiver.url, merchant_id: ACME.merchant_id }, own.url);
      expect(verdicts(report)).toEqual({ valid: "fail", duplicate: "fail" });
      expect(report.stopped).toBe("receiver does not answer: 2 requests in a row got no answer within 0.3 s");
      expect(report.not_run).toEqual(PROBE_IDS.slice(2));
      expect(report.probes[0]!.sends[0]).toMatchObject({ http_status: null, error: "no answer within 0.3 s (timed out)" });
      expect(receiver.requests).toHaveLength(2);
    } finally {
      await receiver.close();
      await own.close();
      vi.unstubAllEnvs();
    }
  });

  test("one that cannot be reached: reported once, not as fifteen failures", async () => {
    const port = await closedPort();
    const report = await check(`http://127.0.0.1:${port}/notify`);
    expect(report).toMatchObject({ probes: [], stopped: "receiver unreachable: ECONNREFUSED", not_run: PROBE_IDS, passed: false });
    // the attempt is recorded like any other
    expect(await logOf(report.check)).toMatchObject([{ probe: "valid", state: "failed", attempts: [{ http_status: null }] }]);
    // a port fetch never calls (6000, X11) is as unreachable
    expect(await check("http://127.0.0.1:6000/notify")).toMatchObject({ probes: [], stopped: "receiver unreachable: BAD_PORT" });
  });

  test("with --key the probes are signed with the receiver's key; with a transaction_id they describe that payment", async () => {
    const receiver = await startReceiver("none", "the-receivers-own-key");
    try {
      const tx = "1000000000001001";
      const report = await check(receiver.url, { key: "the-receivers-own-key", transaction_id: tx });
      expect(verdicts(report)).toEqual(allPass());
      expect(report).toMatchObject({ payment: "given", transaction_id: tx });
      const log = await logOf(report.check);
      expect(log.find((n) => n.probe === "valid")).toMatchObject({ event: "payment.paid", payload: { data: { transaction_id: tx } } });
      // the merchant's key in Sandgate is not the receiver's: the same check without --key fails at once
      expect(verdicts(await check(receiver.url, { transaction_id: tx })).valid).toBe("fail");
    } finally {
      await receiver.close();
    }
  });
});

describe("POST /__sandbox/receiver-checks", () => {
  test("answers the report; the log lists the check's notifications with ?check=", async () => {
    const { app } = await makeApp();
    const server = createServer(app);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const receiver = await startReceiver();
    try {
      const res = await request(server).post("/__sandbox/receiver-checks").send({ url: receiver.url, merchant_id: ACME.merchant_id });
      expect(res.status).toBe(200);
      const report = res.body as ReceiverCheckReport;
      expect(report.passed).toBe(true);
      expect(report.probes).toHaveLength(16);
      const listed = (await request(server).get(`/__sandbox/notifications?check=${report.check}`)).body.notifications as Notification[];
      expect(listed).toHaveLength(16);
      expect((await request(server).get("/__sandbox/notifications?check=chk_none")).body.notifications).toEqual([]);
      // the dashboard's Notifications tab hides the probes unless asked; shown, each is a probe with
      // what the receiver answered, never a failure to resend
      const tab = (await request(server).get("/__sandbox/ui/notifications")).text;
      expect(tab).not.toContain(`receiver check ${report.check}`);
      expect(tab).toContain("16 receiver-check probes hidden");
      const shown = (await request(server).get("/__sandbox/ui/notifications?probes=1")).text;
      expect(shown).toContain(`receiver check ${report.check}`);
      expect(shown.match(/<span class="status wait">probe<\/span> <span class="hint">answered HTTP \d{3}<\/span>/g)).toHaveLength(16);
      expect(shown).not.toContain('data-action="resend-');
      // each with the check's verdict on that answer, as its report has it (this receiver passes)
      const verdicts = shown.match(/<span class="status (ok|bad|wait)">(pass|warning|fail)<\/span> <span class="hint">\(expects: /g) ?? [];
      expect(verdicts).toHaveLength(16);
      expect(verdicts.filter((v) => v.includes(">pass<"))).toHaveLength(report.probes.filter((p) => p.verdict === "pass").length);
      expect((await request(server).get(`/__sandbox/ui/notifications?check=${report.check}`)).text).toContain(
        `<code id="notifications-check">${report.check}</code>`,
      );
    } finally {
      await receiver.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  test("bad input is refused with 400 {error, message} and changes nothing: no payment, no notification, no merchant", async () => {
    const { app, deps } = await makeApp();
    const server = createServer(app);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    const receiver = await startReceiver();
    try {
      const before = {
        transactions: deps.store.data.transactions.length,
        notifications: deps.store.data.notifications.length,
        requests: deps.requests.list({ limit: 5000 }).length,
      };
      const cases: [Record<string, unknown>, string, RegExp][] = [
        [{ url: "ftp://shop.example/notify", merchant_id: "M10001" }, "invalid_url", /http or https/],
        [{ url: "not a url", merchant_id: "M10001" }, "invalid_url", /not a valid URL/],
        [{ url: `http://127.0.0.1:${port}/__sandbox/notifications`, merchant_id: "M10001" }, "invalid_url", /Sandgate's own/],
        [{ url: `http://localhost:${port}/v1/authorise`, merchant_id: "M10001" }, "invalid_url", /Sandgate's own/],
        [{ url: receiver.url, merchant_id: "M-NOBODY" }, "unknown_merchant", /no merchant M-NOBODY/],
        [{ url: receiver.url, merchant_id: "M10001", transaction_id: "2000000000002001" }, "transaction_not_found", /not merchant M10001's/],
        [{ url: receiver.url, merchant_id: "M10001", transaction_id: "9999999999999999" }, "transaction_not_found", /no transaction/],
        [{ merchant_id: "M10001" }, "invalid_check", /url/],
      ];
      for (const [body, error, message] of cases) {
        const res = await request(server).post("/__sandbox/receiver-checks").send(body);
        expect(res.status, JSON.stringify(body)).toBe(400);
        expect(res.body.error, JSON.stringify(body)).toBe(error);
        expect(res.body.message, JSON.stringify(body)).toMatch(message);
      }
      expect(deps.store.data.transactions).toHaveLength(before.transactions);
      expect(deps.store.data.notifications).toHaveLength(before.notifications);
      expect(deps.store.records.merchant("M-NOBODY")).toBeUndefined();
      expect(receiver.requests).toEqual([]);
    } finally {
      await receiver.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

describe("sandgate check-receiver, the command", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "sandgate-check-"));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test("a correct receiver: the table, --json, --junit, exit 0", async () => {
    const receiver = await startReceiver();
    try {
      const json = join(dir, "ok.json");
      const junit = join(dir, "ok.xml");
      const { code, stdout, stderr } = await runSandgate(["check-receiver", receiver.url, "--merchant", "M10001", "--json", json, "--junit", junit]);
      expect(stderr).toBe("");
      expect(code).toBe(0);
      expect(stdout).toMatch(/^receiver check chk_\w+ of http:\/\/127\.0\.0\.1:\d+\/notify \(merchant M10001, payment \d+ made for the check\)\n/);
      expect(stdout).toMatch(/^probe +sent +answer +verdict +why$/m);
      expect(stdout).toMatch(/^valid +the payment's notification, signed +200 in \d+ ms +pass +as expected: 2xx within 5 s$/m);
      expect(stdout).toMatch(/^wrong_key +signed with another key +401 in \d+ ms +pass/m);
      expect(stdout).toContain("16 probes: 16 pass, 0 warnings, 0 failures\n");
      const report = JSON.parse(readFileSync(json, "utf8")) as ReceiverCheckReport;
      expect(report).toMatchObject({ passed: true, merchant_id: "M10001", url: receiver.url });
      const xml = readFileSync(junit, "utf8");
      expect(xml).toContain('<testsuites name="sandgate check-receiver" tests="16" failures="0" skipped="0">');
      expect(xml.match(/<testcase /g)).toHaveLength(16);
      expect(xml).not.toContain("<failure");
    } finally {
      await receiver.close();
    }
  }, 60_000);

  test("a receiver that accepts everything: failures in the table and as <failure>, warnings as <system-out>, exit 1", async () => {
    const receiver = await startReceiver("accepts everything");
    try {
      const junit = join(dir, "bad.xml");
      const { code, stdout } = await runSandgate(["check-receiver", receiver.url, "--merchant", "M10001", "--junit", junit]);
      expect(code).toBe(1);
      expect(stdout).toMatch(/^tampered_amount +signed, then data\.amount changed +200 in \d+ ms +fail +expected refuses \(not 2xx\)/m);
      expect(stdout).toContain("16 probes: 6 pass, 2 warnings, 8 failures — the receiver does not pass");
      expect(stdout).toMatch(/what they stand for:\n {2}wrong_key, tampered_amount, .*Standard Webhooks/);
      const xml = readFileSync(junit, "utf8");
      expect(xml.match(/<failure /g)).toHaveLength(8);
      expect(xml.match(/<system-out>warning: /g)).toHaveLength(2);
    } finally {
      await receiver.close();
    }
  }, 60_000);

  test("an unreachable receiver: said once, exit 1; bad input: one line on stderr, exit 2, nothing checked", async () => {
    const port = await closedPort();
    const junit = join(dir, "down.xml");
    const down = await runSandgate(["check-receiver", `http://127.0.0.1:${port}/notify`, "--merchant", "M10001", "--junit", junit]);
    expect(down.code).toBe(1);
    expect(down.stdout).toContain("stopped: receiver unreachable: ECONNREFUSED\n");
    expect(down.stdout.match(/ECONNREFUSED/g)).toHaveLength(1);
    const xml = readFileSync(junit, "utf8");
    expect(xml.match(/<skipped /g)).toHaveLength(16);
    expect(xml).toContain('<testcase classname="sandgate.check-receiver" name="the receiver answers">');

    for (const [args, message] of [
      [["ftp://shop.example/notify", "--merchant", "M10001"], /must be an http or https URL/],
      [["http://127.0.0.1:9/notify", "--merchant", "M-NOBODY"], /no merchant M-NOBODY/],
      [["http://127.0.0.1:9/notify", "--merchant", "M10001", "--transaction", "2000000000002001"], /not merchant M10001's/],
      [["http://127.0.0.1:9/notify"], /required option '--merchant <id>'/],
    ] as [string[], RegExp][]) {
      const { code, stdout, stderr } = await runSandgate(["check-receiver", ...args]);
      expect(code, args.join(" ")).toBe(2);
      expect(stdout).toBe("");
      expect(stderr.trim().split("\n"), args.join(" ")).toHaveLength(1);
      expect(stderr).toMatch(message);
    }
  }, 60_000);

  test("--sandbox: the running Sandgate checks (ADMIN_TOKEN sent), its log keeps the probes; a refusal there is exit 2", async () => {
    const server = spawnSandgate(["--port", "0", "--host", "127.0.0.1"], { env: { ADMIN_TOKEN: "check-token" } });
    const receiver = await startReceiver();
    try {
      const url = await server.url;
      const env = { env: { ADMIN_TOKEN: "check-token" } };
      const ok = await runSandgate(["check-receiver", receiver.url, "--merchant", "M10001", "--sandbox", url], env);
      expect(ok.stderr).toBe("");
      expect(ok.code).toBe(0);
      const id = /^receiver check (chk_\w+)/.exec(ok.stdout)![1]!;
      expect(ok.stdout).toContain(`every request is in ${url}/__sandbox/notifications?check=${id}\n`);
      const listed = await fetch(`${url}/__sandbox/notifications?check=${id}`, { headers: { authorization: "Bearer check-token" } });
      expect(((await listed.json()) as { notifications: unknown[] }).notifications).toHaveLength(16);

      const self = await runSandgate(["check-receiver", `${url}/__sandbox/health`, "--merchant", "M10001", "--sandbox", url], env);
      expect(self.code).toBe(2);
      expect(self.stderr).toMatch(/^sandgate check-receiver: .*answered HTTP 400: .*Sandgate's own \/__sandbox\/ path/);
      const unauthorised = await runSandgate(["check-receiver", receiver.url, "--merchant", "M10001", "--sandbox", url]);
      expect(unauthorised.code).toBe(2);
      expect(unauthorised.stderr).toMatch(/answered HTTP 401/);
    } finally {
      server.child.kill("SIGTERM");
      await server.exited;
      await receiver.close();
    }
  }, 60_000);
});
