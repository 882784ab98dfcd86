// `sandgate ctl` as a CI job in any language runs it: the real command (src/main.ts through tsx) as
// a process, against a real listening Sandgate process, payments made over plain HTTP. Exit codes:
// 0 done, 1 the check failed, 2 bad usage (nothing sent), 3 the sandbox answered an error or is out of reach.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer as createHttpServer } from "node:http";
import { createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { runSandgate, spawnSandgate, type SandgateProcess } from "../scripts/sandgate-process.js";
import { COMMANDS } from "../src/cli/ctl-commands.js";
import { createAdminClient } from "../src/api/client.js";
import { ANY_SIGNATURE, directPayment, parseXml, textOf } from "./helpers.js";
import { startReceiver } from "./receiver.js";

const servers: SandgateProcess[] = [];
const scratch = mkdtempSync(join(tmpdir(), "sandgate-ctl-"));
afterAll(async () => {
  for (const s of servers) if (s.child.exitCode === null) s.child.kill("SIGTERM");
  await Promise.all(servers.map((s) => s.exited));
  rmSync(scratch, { recursive: true, force: true });
});

/** A Sandgate process, as `npx sandgate --port <port> &` starts it in a CI job (port 0: any free one). */
function serve(port = 0, env: Record<string, string> = {}): SandgateProcess {
  const server = spawnSandgate(["--port", String(port), "--host", "127.0.0.1"], { env });
  servers.push(server);
  return server;
}

/** A port nothing listens on (it was free a moment ago). */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((ready) => probe.listen(0, "127.0.0.1", ready));
  const { port } = probe.address() as { port: number };
  await new Promise((closed) => probe.close(closed));
  return port;
}

/** `sandgate ctl …`, with neither SANDGATE_URL nor ADMIN_TOKEN inherited from the test's environment. */
const ctl = (args: string[], env: Record<string, string> = {}) => runSandgate(["ctl", ...args], { env: { SANDGATE_URL: "", ADMIN_TOKEN: "", ...env } });
const parsed = <T = Record<string, unknown>>(r: { stdout: string }) => JSON.parse(r.stdout) as T;

async function pay(url: string, fields: Record<string, unknown>) {
  const res = await fetch(`${url}/v1/authorise`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(directPayment(fields)),
  });
  return parseXml(await res.text());
}

describe("sandgate ctl in a CI job that has no in-process Sandgate (PHP, Java, ...)", () => {
  test("waits for the sandbox, binds a scenario to its merchant, pays over HTTP, gates on coverage", async () => {
    const port = await freePort();
    const env = { SANDGATE_URL: `http://127.0.0.1:${port}` };
    serve(port); // `sandgate &`: the job does not wait for it itself
    const up = await ctl(["health", "--wait", "30s"], env);
    expect(up).toMatchObject({ code: 0, stderr: "" });
    expect(up.stdout).toMatch(/is up: scenario default/);

    const bound = await ctl(["scenario", "use", "declines", "--merchant", "CI-PHP"], env);
    expect(bound).toMatchObject({ code: 0, stdout: "merchant CI-PHP uses scenario declines\n" });
    const declined = await pay(env.SANDGATE_URL, { merchant_id: "CI-PHP", account_id: "ACC-PHP" });
    expect(textOf(declined.order_status)).toBe("0");
    // the binding is the merchant's only: another merchant is still approved
    expect(textOf((await pay(env.SANDGATE_URL, {})).order_status)).toBe("1");

    const strict = await ctl(["coverage", "--merchant", "CI-PHP", "--fail-under", "100"], env);
    expect(strict.code).toBe(1);
    expect(strict.stderr).toMatch(/^sandgate ctl: coverage [\d.]+% \(1 of \d+ rules\) is under 100%\n$/);
    expect(strict.stdout).toMatch(/^Coverage of merchant CI-PHP: 1 of \d+ rules answered/);
    const lenient = await ctl(["coverage", "--merchant", "CI-PHP", "--fail-under", "1", "--json"], env);
    expect(lenient.code).toBe(0);
    const report = parsed<{
      merchant_id: string;
      rules: { answered: number; total: number; percent: number };
      passed: boolean;
      operations: { operation: string; produced: Record<string, number> }[];
    }>(lenient);
    expect(report).toMatchObject({ merchant_id: "CI-PHP", passed: true, fail_under: 1, rules: { answered: 1 } });
    expect(report.rules.percent).toBeGreaterThanOrEqual(1);
    expect(report.rules.percent).toBeLessThan(100);
    expect(report.operations.find((o) => o.operation === "authorise")!.produced).toEqual({ do_not_honor: 1 });
  }, 60_000);

  test("health --wait waits for a sandbox that starts late; it exits 1 when none comes", async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    // until ctl has asked once, the port hangs up on it (as a process still starting would not answer)
    let asked!: () => void;
    const askedOnce = new Promise<void>((resolve) => (asked = resolve));
    const notYet = createServer((socket) => (socket.destroy(), asked()));
    await new Promise<void>((ready) => notYet.listen(port, "127.0.0.1", ready));
    const waiting = ctl(["health", "--wait", "30s", "--json", "--url", url]);
    await askedOnce;
    await new Promise((closed) => notYet.close(closed));
    serve(port);
    const up = await waiting;
    expect(up.code).toBe(0);
    expect(parsed(up)).toMatchObject({ status: "ok", scenario: "default" });
    expect(parsed<{ waited_ms: number }>(up).waited_ms).toBeGreaterThan(0);

    const nobody = await ctl(["health", "--wait", "1s", "--url", `http://127.0.0.1:${await freePort()}`]);
    expect(nobody).toMatchObject({ code: 1, stdout: "" });
    expect(nobody.stderr).toMatch(/^sandgate ctl: the Sandgate at http:\/\/127\.0\.0\.1:\d+ did not answer within 1s \(last: .*ECONNREFUSED\)\n$/);
  }, 60_000);

  test("a server with ADMIN_TOKEN: without the token exit 3 and say so; --token or env ADMIN_TOKEN works", async () => {
    const url = await serve(0, { ADMIN_TOKEN: "ci-secret" }).url;
    const [none, wrong, flag, env, health] = await Promise.all([
      ctl(["scenario", "list", "--url", url]),
      ctl(["scenario", "list", "--url", url, "--token", "guess"]),
      ctl(["scenario", "list", "--url", url, "--token", "ci-secret", "--json"]),
      ctl(["reset", "--all"], { SANDGATE_URL: url, ADMIN_TOKEN: "ci-secret" }),
      ctl(["health", "--url", url]),
    ]);
    expect(none).toMatchObject({ code: 3, stdout: "" });
    expect(none.stderr).toBe(`sandgate ctl: the Sandgate at ${url} requires its ADMIN_TOKEN (401 unauthorised): pass --token <token> or set ADMIN_TOKEN\n`);
    expect(wrong).toMatchObject({ code: 3, stderr: `sandgate ctl: the Sandgate at ${url} refused the token (401 unauthorised): pass its ADMIN_TOKEN\n` });
    expect(flag.code).toBe(0);
    expect(parsed(flag)).toMatchObject({ global: "default", bindings: {} });
    expect(env).toMatchObject({ code: 0, stdout: "reset: everything is back to the fixtures\n" });
    // resetting every team's records is said, never the default: without --all or --merchant, exit 2 and nothing sent
    const unsaid = await ctl(["reset", "--url", url, "--token", "ci-secret"]);
    expect(unsaid).toMatchObject({
      code: 2,
      stdout: "",
      stderr: "sandgate ctl: say what to reset: --merchant <id> for one merchant, or --all for every merchant\n",
    });
    // health is open, as in the API
    expect(health.code).toBe(0);
  }, 60_000);
});

describe("every command against a running Sandgate", () => {
  let url: string;
  beforeAll(async () => {
    url = await serve().url;
  });
  const admin = () => createAdminClient(url);
  const M = { merchant_id: "CI-OPS", account_id: "ACC-OPS" };

  test("scenario list and scenario use (global); the sandbox's refusal exits 3, with --json a JSON error", async () => {
    const list = await ctl(["scenario", "list", "--json", "--url", url]);
    expect(list.code).toBe(0);
    expect(parsed<{ scenarios: { name: string }[] }>(list).scenarios.map((s) => s.name)).toEqual(expect.arrayContaining(["default", "declines", "3ds"]));
    expect(await ctl(["scenario", "use", "happy-path", "--url", url])).toMatchObject({ code: 0, stdout: "global scenario: happy-path\n" });
    expect((await admin().health()).scenario).toBe("happy-path");
    expect((await ctl(["--url", url, "scenario", "list"])).stdout).toMatch(/^\* happy-path +Everything succeeds/m);
    expect(await ctl(["scenario", "use", "default", "--url", url, "--json"])).toMatchObject({ code: 0 });

    // a merchant bound, then unbound: it follows the global scenario again; one with no binding exits 3
    expect(await ctl(["scenario", "use", "declines", "--merchant", "CTL-BOUND", "--url", url])).toMatchObject({ code: 0 });
    expect(await ctl(["scenario", "unbind", "CTL-BOUND", "--url", url])).toMatchObject({
      code: 0,
      stdout: "merchant CTL-BOUND follows the global scenario (default)\n",
    });
    expect((await admin().scenarios()).bindings).not.toHaveProperty("CTL-BOUND");
    expect((await ctl(["scenario", "unbind", "CTL-BOUND", "--url", url])).stderr).toMatch(/answered 404 not_bound/);

    const unknown = await ctl(["scenario", "use", "no-such", "--url", url, "--json"]);
    expect(unknown.code).toBe(3);
    expect(parsed(unknown)).toMatchObject({ error: "unknown_scenario", status: 404 });
    expect(unknown.stderr).toMatch(/^sandgate ctl: the Sandgate at .* answered 404 unknown_scenario: .*"no-such".*\n$/);
  }, 60_000);

  test("complete a 3-D Secure payment, settle its refund, advance the clock, deliver notifications, export HAR, reset a merchant", async () => {
    const challenged = await pay(url, { ...M, order_no: "CTL-3DS", card: "4000002760003184" });
    const id = textOf(challenged.transaction_id);
    expect(textOf(challenged.order_status)).toBe("-1");
    const completed = await ctl(["complete", id, "threeds_passed", "--json", "--url", url]);
    expect(completed.code).toBe(0);
    expect(parsed(completed)).toMatchObject({ transaction_id: id, order_status: "1", payment_status: "2000", stage: "" });
    const again = await ctl(["complete", id, "threeds_passed", "--url", url]);
    expect(again.code).toBe(3);
    expect(again.stderr).toMatch(/409 payment_not_pending/);

    const order = { transaction_id: id, order_no: "CTL-3DS", currency: "USD", amount: "10.00" };
    const post = (path: string, body: object) =>
      fetch(`${url}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ ...M, encryption_data: ANY_SIGNATURE, ...body }),
      });
    await post("/v1/capture", { capture_orders: [order] });
    await post("/v1/refund", { refund_orders: [{ ...order, refund_amount: "4.00" }] });
    const [refund] = await admin().refunds({ transaction_id: id });
    expect(refund!.state).toBe("accepted");
    const settled = await ctl(["refund", "settle", refund!.refund_reference_id, "failed", "--url", url]);
    expect(settled).toMatchObject({ code: 0, stdout: `refund ${refund!.refund_reference_id} of ${id}: failed\n` });
    expect((await admin().refunds({ transaction_id: id }))[0]!.state).toBe("failed");

    // a notification held for an hour: nothing to send until the clock passes it
    let hits = 0;
    const receiver = createHttpServer((_req, res) => {
      hits++;
      res.end("ok");
    });
    await new Promise<void>((ready) => receiver.listen(0, "127.0.0.1", ready));
    try {
      const notifyUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/notify`;
      const trigger = await fetch(`${url}/__sandbox/notifications/trigger`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ merchant_id: M.merchant_id, url: notifyUrl, event: "ctl.test", notify: { delay_seconds: 3600 } }),
      });
      expect(trigger.status).toBe(201);
      const before = await admin().clock();
      const moved = await ctl(["clock", "advance", "2h", "--json", "--url", url]);
      expect(moved.code).toBe(0);
      expect(parsed<{ offset_ms: number }>(moved).offset_ms - before.offset_ms).toBe(2 * 3_600_000);
      const delivered = await ctl(["notifications", "deliver", "--json", "--url", url]);
      expect(delivered.code).toBe(0);
      expect(Object.keys(parsed(delivered)).sort()).toEqual(["attempts", "delivered", "dropped", "failed", "pending"]);
      expect(parsed<{ delivered: number }>(delivered).delivered).toBeGreaterThanOrEqual(1);
      // once it returned, the due notification has reached the receiver
      expect(hits).toBe(1);
      expect((await admin().notifications({ event: "ctl.test" }))[0]!.state).toBe("delivered");
    } finally {
      receiver.close();
    }

    const file = join(scratch, "reports", "requests.har");
    const har = await ctl(["requests", "--har", file, "--merchant", M.merchant_id, "--url", url]);
    expect(har.code).toBe(0);
    expect(har.stdout).toBe(`wrote 4 requests to ${file} (HAR 1.2)\n`);
    const log = JSON.parse(readFileSync(file, "utf8")) as { log: { version: string; entries: { request: { url: string } }[] } };
    expect(log.log.version).toBe("1.2");
    expect(log.log.entries.map((e) => new URL(e.request.url).pathname)).toEqual([
      "/v1/authorise",
      `/__sandbox/payments/${id}/complete`,
      "/v1/capture",
      "/v1/refund",
    ]);

    // `--har -`: the same HAR on standard output
    const piped = await ctl(["requests", "--har", "-", "--merchant", M.merchant_id, "--url", url]);
    expect(piped.code).toBe(0);
    expect(JSON.parse(piped.stdout)).toEqual(log);

    expect(await ctl(["reset", "--merchant", M.merchant_id, "--url", url])).toMatchObject({
      code: 0,
      stdout: `reset: merchant ${M.merchant_id} is back to the fixtures\n`,
    });
    expect(await admin().transactions({ merchant_id: M.merchant_id })).toEqual([]);
  }, 90_000);

  test("payout complete and fail, subscription charge, notifications trigger and resend, requests --count as a CI assertion", async () => {
    const P = { merchant_id: "CI-OPS2", account_id: "ACC-OPS2" };
    const payout = async (n: string) => {
      const body = {
        ...P,
        request_id: `7b0e7c1e-0000-4000-8000-00000000000${n}`,
        payment_currency: "EUR",
        source_currency: "USD",
        payment_amount: "10.00",
        payment_method: "SWIFT",
        fee_paid_by: "PAYER",
        beneficiary: {
          first_name: "Ann",
          last_name: "Lee",
          entity_type: "PERSONAL",
          bank_details: { account_number: "55550008", bank_country_code: "DE", swift_code: "DEUTDEFF" },
        },
        encryption_data: ANY_SIGNATURE,
      };
      const res = await fetch(`${url}/v1/payout`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
      return ((await res.json()) as { transaction_id: string; status: string }).transaction_id;
    };
    const [one, two] = [await payout("1"), await payout("2")];
    expect(await ctl(["payout", "complete", one, "--url", url])).toMatchObject({ code: 0, stdout: `payout ${one}: COMPLETED\n` });
    expect(await ctl(["payout", "fail", two, "--type", "ACCOUNT_CLOSED", "--url", url])).toMatchObject({
      code: 0,
      stdout: `payout ${two}: FAILED ACCOUNT_CLOSED\n`,
    });
    expect((await ctl(["payout", "complete", two, "--url", url])).code).toBe(3);

    const subscription = { contract: "CTL-C", contract_name: "Box", interval: "month", interval_count: "1", billing_cycle: 6 };
    const recurring = textOf((await pay(url, { ...P, order_no: "CTL-SUB", subscription })).recurring_id);
    expect((await ctl(["subscription", "charge", recurring, "--url", url])).stdout).toMatch(new RegExp(`^subscription ${recurring}: 2 charges, active\n$`));

    const receiver = await startReceiver();
    try {
      const made = await ctl(["notifications", "trigger", "--merchant", P.merchant_id, "--to", receiver.url, "--event", "ci.ping", "--url", url]);
      expect(made.code, made.stderr).toBe(0);
      const id = /^notification (\S+) \(ci\.ping\)/.exec(made.stdout)![1]!;
      expect(await ctl(["notifications", "deliver", "--url", url])).toMatchObject({ code: 0 });
      expect((await ctl(["notifications", "resend", id, "--url", url])).stdout).toBe(`notification ${id}: delivered after 2 attempts\n`);
      expect(receiver.received.filter((n) => n.event === "ci.ping")).toHaveLength(2);
    } finally {
      await receiver.close();
    }

    // WireMock's verify(n, postRequestedFor(...)): exit 1 with what was found when the count is not n
    const count = (...args: string[]) => ctl(["requests", "--count", "--merchant", P.merchant_id, ...args, "--url", url]);
    expect(await count("--operation", "payout", "--expect", "2")).toMatchObject({
      code: 0,
      stdout: `2 requests (merchant ${P.merchant_id}, operation payout)\n`,
    });
    expect(await count("--operation", "authorise", "--order", "CTL-SUB", "--at-least", "1")).toMatchObject({ code: 0 });
    const wrong = await count("--operation", "payout", "--expect", "3");
    expect([wrong.code, wrong.stderr]).toEqual([1, `sandgate ctl: expected 3, found 2 requests (merchant ${P.merchant_id}, operation payout)\n`]);
    expect((await count("--status", "4xx", "--at-least", "1")).code).toBe(1);
  }, 60_000);

  test("bad usage exits 2 with one line on stderr, nothing on stdout, nothing sent", async () => {
    // the URL answers: exit 3 or 0 would mean the command went out
    const cases = [
      ["bogus"],
      ["scenario", "use"],
      ["complete", "T1"],
      ["refund", "settle", "R1", "maybe"],
      ["clock", "advance", "soon"],
      ["coverage", "--fail-under", "abc"],
      ["coverage", "--fail-under", "101"],
      ["requests"],
      ["requests", "--har", "x.har", "--limit", "0"],
      ["requests", "--count", "--expect", "two"],
      ["requests", "--count", "--expect", "1", "--at-least", "1"],
      ["health", "extra"],
      ["health", "--wait", "forever"],
      ["health", "--timeout", "0s"],
      ["health", "--url", "ftp://example.com"],
      ["health", "--no-such-flag"],
    ];
    const results = await Promise.all(cases.map((args) => ctl([...args, ...(args.includes("--url") ? [] : ["--url", url])])));
    results.forEach((r, i) => {
      expect({ args: cases[i], code: r.code, stdout: r.stdout }).toEqual({ args: cases[i], code: 2, stdout: "" });
      expect(r.stderr).toMatch(/^sandgate ctl: [^\n]+\n$/);
    });
    expect(results[4]!.stderr).toBe('sandgate ctl: clock advance: "soon" is not a duration above zero (90s, 15m, 2h, 3d, 1w, or seconds)\n');
    const bad = await ctl(["health"], { SANDGATE_URL: "sandgate:8080" });
    expect(bad).toMatchObject({ code: 2, stderr: 'sandgate ctl: SANDGATE_URL must be an http(s) URL, got "sandgate:8080"\n' });
    const help = await ctl(["--help"]);
    expect(help.code).toBe(0);
    for (const command of [
      "health",
      "scenario",
      "complete",
      "payment",
      "refund",
      "payout",
      "subscription",
      "clock",
      "notifications",
      "coverage",
      "requests",
      "reset",
    ])
      expect(help.stdout).toMatch(new RegExp(`^  ${command}\\b`, "m"));
  }, 60_000);
});

describe("a sandbox out of reach", () => {
  test("a closed port exits 3 at once, with the reason", async () => {
    const url = `http://127.0.0.1:${await freePort()}`;
    const refused = await ctl(["scenario", "list", "--url", url, "--json"]);
    // told ECONNREFUSED, not the 60 s call timeout's "no answer"
    expect(refused.code).toBe(3);
    expect(refused.stderr).toBe(`sandgate ctl: cannot reach the Sandgate at ${url}: ECONNREFUSED\n`);
    expect(parsed(refused)).toMatchObject({ error: "unreachable", status: 0 });
  }, 30_000);

  test("a server that never answers exits 3 after --timeout", async () => {
    const sockets: Socket[] = [];
    const silent: Server = createServer((socket) => void sockets.push(socket));
    await new Promise<void>((ready) => silent.listen(0, "127.0.0.1", ready));
    try {
      const url = `http://127.0.0.1:${(silent.address() as { port: number }).port}`;
      const hung = await ctl(["reset", "--all", "--url", url, "--timeout", "1s"]);
      expect(hung).toMatchObject({ code: 3, stdout: "", stderr: `sandgate ctl: no answer from the Sandgate at ${url} within 1s\n` });
    } finally {
      for (const s of sockets) s.destroy();
      silent.close();
    }
  }, 30_000);
});

test("every `sandgate ctl …` the README and docs/ show is a command, with only flags its --help lists; `sandgate --help` names ctl", async () => {
  const root = new URL("../", import.meta.url);
  const files = [
    "README.md",
    ...readdirSync(new URL("docs/", root))
      .filter((f) => f.endsWith(".md"))
      .map((f) => `docs/${f}`),
  ];
  const known = COMMANDS.map((c) => c.words).sort((a, b) => b.length - a.length);
  const flagsOf = new Map<string, Set<string>>();
  const unknown: string[] = [];
  for (const file of files) {
    for (const [, rest] of readFileSync(new URL(file, root), "utf8").matchAll(/sandgate ctl ([^\n`|]*)/g)) {
      // the shared options may come first: `sandgate ctl --json coverage`
      const words = rest!.replace(/^(?:--(?:json|help)\s*|--(?:url|token|timeout)\s+\S+\s*)*/, "");
      if (words === "" || words.startsWith("<")) continue; // prose naming the tool, the synopsis
      const command = known.find((w) => words === w || words.startsWith(`${w} `));
      if (!command) unknown.push(`${file}: sandgate ctl ${rest}`);
      else for (const [flag] of rest!.matchAll(/(?<![\w-])--[a-z][a-z-]*/g)) flagsOf.set(command, (flagsOf.get(command) ?? new Set()).add(flag));
    }
  }
  expect(unknown).toEqual([]);
  expect(flagsOf.size).toBeGreaterThan(3);
  const helps = await Promise.all([...flagsOf.keys()].map((command) => ctl([...command.split(" "), "--help"])));
  [...flagsOf].forEach(([command, flags], i) => {
    for (const flag of flags) expect(helps[i]!.stdout, `sandgate ctl ${command} ${flag}`).toMatch(new RegExp(`^\\s+${flag}\\b`, "m"));
  });
  expect((await runSandgate(["--help"])).stdout).toMatch(/^ {2}sandgate ctl <command>/m);
}, 60_000);
