// --data as a real process would meet it: the state file is a snapshot plus a journal of what each
// commit changed. kill -9 at any moment loses nothing that was acknowledged; every kind of change
// comes back after a restart; a commit writes what it changed, not the whole state.
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { Writable } from "node:stream";
import { pino } from "pino";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { startSandbox } from "../src/server/sandbox.js";
import { openJournal, replayJournal } from "../src/store/journal.js";
import { ACME, ANY_SIGNATURE, apmPayment, directPayment, nextOrderNo, parseXml, textOf } from "./helpers.js";
import { until } from "./waiting.js";

let dir: string;
const children: ChildProcess[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "sandgate-journal-"));
});
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});

/** Sandgate as its own process on --data; resolves with its URL. */
function startProcess(file: string): Promise<{ url: string; child: ChildProcess }> {
  // vitest puts Vite's BASE_URL ("/") in the environment: the child must not take it for --base-url
  const { BASE_URL: _vite, ...env } = process.env;
  const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts", "--port", "0", "--host", "127.0.0.1", "--data", file, "--seed", "journal"], {
    env: { ...env, LOG_LEVEL: "silent" },
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (d: Buffer) => {
      out += d.toString();
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve({ url: m[1]!, child });
    });
    child.on("exit", (code) => reject(new Error(`exited ${code} before listening`)));
  });
}

const killed = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    child.on("exit", () => resolve());
    child.kill("SIGKILL");
  });

const post = async (url: string, path: string, body: unknown) => {
  const res = await fetch(`${url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  return { status: res.status, text: await res.text() };
};
const ENVELOPE = { merchant_id: ACME.merchant_id, account_id: ACME.account_id, encryption_data: ANY_SIGNATURE };

/** The state a fresh Sandgate reads back from `file` (it replays the journal). */
async function reopened(file: string) {
  const sandbox = await startSandbox({ port: 0, host: "127.0.0.1", logLevel: "silent", data: file, watchScenarios: false });
  const data = structuredClone(sandbox.deps.store.data);
  await sandbox.close();
  return data;
}

/**
 * The --data files of `file` as a crash at this moment would leave them, copied into the folder `to`
 * (created): the journal, the journal kept for a snapshot being written, then the snapshot (in that
 * order, so a rotation or a snapshot finishing between two reads still leaves files a start can
 * read: lines twice at worst, which replay takes). Returns the copy's state file.
 */
function crashCopy(file: string, to: string): string {
  mkdirSync(to);
  const copy = join(to, basename(file));
  for (const suffix of [".journal", ".journal.old", ""]) {
    if (existsSync(`${file}${suffix}`)) writeFileSync(`${copy}${suffix}`, readFileSync(`${file}${suffix}`));
  }
  return copy;
}

/** A real disk that fills up: a tmpfs of `size` in the test's folder (needs root and mount: the test is skipped where the machine allows neither). Unmount it when done. */
function tinyDisk(context: { skip(): never }, size: string): string {
  const tiny = join(dir, "full");
  mkdirSync(tiny);
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", `size=${size}`, "tmpfs", tiny], { stdio: "ignore" });
  } catch {
    context.skip();
  }
  return tiny;
}

describe("kill -9 under load", () => {
  test("loses no acknowledged payment, capture or refund, over several rounds", async () => {
    const file = join(dir, "state.json");
    const acknowledged = { payments: new Map<string, string>(), captured: new Set<string>(), refunded: new Map<string, number>() };
    for (let round = 0; round < 3; round++) {
      const { url, child } = await startProcess(file);
      let running = true;
      const worker = async () => {
        while (running) {
          const body = directPayment({ order_no: nextOrderNo(`K${round}`) });
          const paid = await post(url, "/v1/authorise", body).catch(() => undefined);
          if (!paid || paid.status !== 200) return;
          const id = textOf(parseXml(paid.text).transaction_id);
          acknowledged.payments.set(id, String(body.order_no));
          const order = { transaction_id: id, order_no: body.order_no, currency: "USD", amount: "10.00" };
          const captured = await post(url, "/v1/capture", { ...ENVELOPE, capture_orders: [order] }).catch(() => undefined);
          if (!captured || captured.status !== 200) return;
          if (JSON.parse(captured.text).capture_orders[0].capture_status === "1") acknowledged.captured.add(id);
          const refunded = await post(url, "/v1/refund", { ...ENVELOPE, refund_orders: [{ ...order, refund_amount: "2.50" }] }).catch(() => undefined);
          if (!refunded || refunded.status !== 200) return;
          if (JSON.parse(refunded.text).refund_orders[0].refund_status === "1") acknowledged.refunded.set(id, 1);
        }
      };
      const workers = Array.from({ length: 8 }, worker);
      await until(() => acknowledged.payments.size > 20);
      await killed(child);
      running = false;
      await Promise.all(workers);
    }
    expect(acknowledged.payments.size).toBeGreaterThan(20);
    const state = await reopened(file);
    const byId = new Map(state.transactions.map((t) => [t.transaction_id, t]));
    for (const [id, orderNo] of acknowledged.payments) expect(byId.get(id)?.order_no, id).toBe(orderNo);
    for (const id of acknowledged.captured) expect(byId.get(id)?.captured_amount, id).toBe("10.00");
    for (const id of acknowledged.refunded.keys()) {
      expect(byId.get(id)?.refunded_amount, id).toBe("2.50");
      expect(state.refunds.some((r) => r.refund_reference_id === `${id}-01`)).toBe(true);
    }
    expect(new Set(state.transactions.map((t) => t.transaction_id)).size).toBe(state.transactions.length);
  }, 60_000);
});

describe("a snapshot written behind the commits", () => {
  test("commits go on while it is written, and a crash at any moment of it loses nothing acknowledged", async () => {
    const file = join(dir, "state.json");
    const kept = `${file}.journal.old`;
    // a new snapshot each time the journal is as large as the snapshot: several during the run
    const sandbox = await startSandbox({
      port: 0,
      host: "127.0.0.1",
      logLevel: "silent",
      data: file,
      seed: "behind",
      watchScenarios: false,
      snapshotAfterBytes: 0,
    });
    const acknowledged = { payments: new Map<string, string>(), captured: new Set<string>() };
    let answeredWhileWriting = 0;
    const crashes: { at: string; payments: Map<string, string>; captured: Set<string>; writing: boolean }[] = [];
    /** the files as a crash now would leave them, with what was acknowledged by then */
    const crashNow = () => {
      const at = crashCopy(file, join(dir, `crash-${crashes.length}`));
      crashes.push({ at, payments: new Map(acknowledged.payments), captured: new Set(acknowledged.captured), writing: existsSync(`${at}.journal.old`) });
    };
    let running = true;
    // every turn of the event loop (the snapshot yields to requests between slices): a crash while one is written
    const watch = () => {
      if (!running) return;
      if (existsSync(kept) && crashes.filter((c) => c.writing).length < 40) crashNow();
      setImmediate(watch);
    };
    watch();
    const every = setInterval(() => crashes.length < 80 && crashNow(), 20);
    const worker = async (w: number) => {
      while (running) {
        const body = directPayment({ order_no: nextOrderNo(`B${w}`) });
        const paid = await post(sandbox.url, "/v1/authorise", body);
        const id = textOf(parseXml(paid.text).transaction_id);
        acknowledged.payments.set(id, String(body.order_no));
        if (existsSync(kept)) answeredWhileWriting++;
        const captured = await post(sandbox.url, "/v1/capture", {
          ...ENVELOPE,
          capture_orders: [{ transaction_id: id, order_no: body.order_no, currency: "USD", amount: "10.00" }],
        });
        if (JSON.parse(captured.text).capture_orders[0].capture_status === "1") acknowledged.captured.add(id);
        if (existsSync(kept)) answeredWhileWriting++;
      }
    };
    try {
      const workers = Array.from({ length: 6 }, (_, w) => worker(w));
      await until(() => crashes.some((c) => c.writing) && answeredWhileWriting > 0);
      running = false;
      await Promise.all(workers);
    } finally {
      clearInterval(every);
      await sandbox.close();
    }
    expect(crashes.filter((c) => c.writing).length).toBeGreaterThan(0);
    expect(answeredWhileWriting).toBeGreaterThan(0);
    for (const crash of crashes) {
      const state = await reopened(crash.at);
      const byId = new Map(state.transactions.map((t) => [t.transaction_id, t]));
      for (const [id, orderNo] of crash.payments) expect(byId.get(id)?.order_no, `${crash.at}: ${id}`).toBe(orderNo);
      for (const id of crash.captured) expect(byId.get(id)?.captured_amount, `${crash.at}: ${id}`).toBe("10.00");
    }
  }, 60_000);
  test("one that fails is logged as a warning, loses nothing, and the next snapshot is written whole", async () => {
    const file = join(dir, "state.json");
    const warnings: { msg: string; err?: string }[] = [];
    const lines = new Writable({
      write(chunk: Buffer, _encoding, done) {
        warnings.push(JSON.parse(chunk.toString()) as { msg: string; err?: string });
        done();
      },
    });
    const logger = pino({ level: "warn" }, lines);
    const sandbox = await startSandbox({ port: 0, host: "127.0.0.1", logger, data: file, seed: "behind-fails", watchScenarios: false, snapshotAfterBytes: 0 });
    const paid = new Map<string, string>();
    const pay = async () => {
      const body = directPayment({ order_no: nextOrderNo("BF") });
      const answer = await post(sandbox.url, "/v1/authorise", body);
      expect(answer.status).toBe(200);
      paid.set(textOf(parseXml(answer.text).transaction_id), String(body.order_no));
    };
    try {
      // a folder where the snapshot's temp file goes: the next snapshot cannot be written
      mkdirSync(`${file}.tmp`);
      for (let i = 0; i < 400 && warnings.length === 0; i++) await pay();
      expect(warnings).toHaveLength(1);
      expect(warnings[0]!.msg).toMatch(/snapshot written behind the commits failed/);
      expect(warnings[0]!.err).toMatch(/EISDIR|directory/);
      // its journal is kept until a snapshot holds it
      expect(existsSync(`${file}.journal.old`)).toBe(true);
      rmdirSync(`${file}.tmp`);
      for (let i = 0; i < 400 && existsSync(`${file}.journal.old`); i++) await pay();
      expect(existsSync(`${file}.journal.old`)).toBe(false);
      // one more, after the snapshot: it is in the journal only
      await pay();
    } finally {
      await sandbox.close();
    }
    expect(warnings).toHaveLength(1);
    const state = await reopened(crashCopy(file, join(dir, "after")));
    const byId = new Map(state.transactions.map((t) => [t.transaction_id, t.order_no]));
    for (const [id, orderNo] of paid) expect(byId.get(id), id).toBe(orderNo);
  }, 60_000);
});

describe("every kind of change comes back after a crash", () => {
  test("the sandbox clock (moved and frozen), the global scenario and a merchant's binding, written by the commit that changed them", async () => {
    const file = join(dir, "state.json");
    const first = await startProcess(file);
    const json = async (url: string, path: string, method = "GET", body?: unknown) => {
      const res = await fetch(`${url}${path}`, { method, headers: { "content-type": "application/json" }, ...(body ? { body: JSON.stringify(body) } : {}) });
      expect(res.status).toBe(200);
      return (await res.json()) as Record<string, unknown>;
    };
    await json(first.url, "/__sandbox/clock", "POST", { advance: "3d" });
    const frozen = await json(first.url, "/__sandbox/clock/freeze", "POST", {});
    await json(first.url, "/__sandbox/scenarios/global", "PUT", { name: "declines" });
    await json(first.url, "/__sandbox/scenarios/bindings/M10002", "PUT", { name: "3ds" });
    await killed(first.child); // a crash: nothing said at the end
    const { url } = await startProcess(file);
    const clock = await json(url, "/__sandbox/clock");
    expect(clock).toMatchObject({ frozen: true, now: (frozen as { now: string }).now });
    expect(await json(url, "/__sandbox/scenarios")).toMatchObject({ global: "declines", bindings: { M10002: "3ds" } });
    // and they decide: a payment of another merchant is declined by the global scenario
    const declined = parseXml((await post(url, "/v1/authorise", directPayment())).text);
    expect(String(declined.result_info)).not.toBe("0000:Success");
  });

  test("payments, captures, refunds and their settlement, payer completion, payouts, subscriptions, notification attempts, provisioning", async () => {
    const file = join(dir, "state.json");
    const { url, child } = await startProcess(file);
    const pay = async (overrides: Record<string, unknown>) =>
      textOf(parseXml((await post(url, "/v1/authorise", directPayment(overrides))).text).transaction_id);

    const captured = await pay({ order_no: "P-CAP", token_flag: "YES" });
    await post(url, "/v1/capture", { ...ENVELOPE, capture_orders: [{ transaction_id: captured, order_no: "P-CAP", currency: "USD", amount: "10.00" }] });
    await post(url, "/v1/refund", {
      ...ENVELOPE,
      refund_orders: [{ transaction_id: captured, order_no: "P-CAP", currency: "USD", amount: "10.00", refund_amount: "1.00" }],
    });
    await post(url, `/__sandbox/refunds/${captured}-01/settle`, { result: "failed" });

    const apm = apmPayment({ order_no: "P-APM", notify_url: "http://127.0.0.1:9/hook" });
    const issuer = textOf(parseXml((await post(url, "/v1/authorise", apm)).text).issuer_url);
    await fetch(issuer, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json" }, body: "outcome=paid" });
    await post(url, "/__sandbox/notifications/deliver", {});

    const subscribed = await pay({ order_no: "P-SUB", subscription: { contract_name: "Box", interval: "month", billing_cycle: 6 } });
    const payout = JSON.parse(
      (
        await post(url, "/v1/payout", {
          ...ENVELOPE,
          request_id: "6a1c2a9e-8b7d-4c6e-9a5b-000000000001",
          payment_currency: "USD",
          payment_amount: "10.00",
          payment_method: "SWIFT",
          beneficiary: { first_name: "A", last_name: "B", bank_details: { account_number: "99990008", bank_country_code: "US" } },
        })
      ).text,
    ) as { transaction_id: string };
    await post(url, `/__sandbox/payouts/${payout.transaction_id}/fail`, { failure_type: "NAME_MISMATCH" });
    await pay({ merchant_id: "M-NEW", account_id: "A-NEW", order_no: "P-PROV" });
    await pay({ merchant_id: ACME.merchant_id, account_id: "A-EXTRA", order_no: "P-ACCT" });
    const state0 = JSON.parse(await (await fetch(`${url}/__sandbox/subscriptions?merchant_id=${ACME.merchant_id}`)).text()) as {
      subscriptions: { recurring_id: string; transaction_id: string }[];
    };
    const sub = state0.subscriptions.find((s) => s.transaction_id === subscribed)!;
    await post(url, "/v1/subscription/cancel", { ...ENVELOPE, recurring_id: sub.recurring_id });
    await killed(child);

    const state = await reopened(file);
    const tx = (id: string) => state.transactions.find((t) => t.transaction_id === id);
    expect(tx(captured)).toMatchObject({ state: "paid", captured_amount: "10.00", refunded_amount: "0.00" });
    expect(state.refunds.find((r) => r.refund_reference_id === `${captured}-01`)?.state).toBe("failed");
    expect(state.tokens.some((t) => t.token_id === tx(captured)?.token_id)).toBe(true);
    expect(state.transactions.find((t) => t.order_no === "P-APM")?.state).toBe("paid");
    expect(state.notifications.filter((n) => n.url === "http://127.0.0.1:9/hook").every((n) => n.attempts.length > 0)).toBe(true);
    expect(state.payouts.find((p) => p.transaction_id === payout.transaction_id)).toMatchObject({ status: "FAILED", failure_type: "NAME_MISMATCH" });
    expect(state.subscriptions.find((s) => s.recurring_id === sub.recurring_id)?.state).toBe("cancelled");
    expect(state.merchants.find((m) => m.merchant_id === "M-NEW")?.accounts.map((a) => a.account_id)).toEqual(["A-NEW"]);
    expect(state.merchants.find((m) => m.merchant_id === ACME.merchant_id)?.accounts.map((a) => a.account_id)).toContain("A-EXTRA");
  }, 30_000);
});

describe("the journal", () => {
  test("a commit appends what it changed: a capture among 300 payments writes the fields it changed, not the payment", async () => {
    const file = join(dir, "state.json");
    const sandbox = await startSandbox({ port: 0, host: "127.0.0.1", logLevel: "silent", data: file, seed: "j" });
    try {
      const ids: string[] = [];
      for (let i = 0; i < 300; i++)
        ids.push(textOf(parseXml((await post(sandbox.url, "/v1/authorise", directPayment({ order_no: `J-${i}` }))).text).transaction_id));
      const before = statSync(`${file}.journal`).size;
      await post(sandbox.url, "/v1/capture", { ...ENVELOPE, capture_orders: [{ transaction_id: ids[0], order_no: "J-0", currency: "USD", amount: "10.00" }] });
      const appended = readFileSync(`${file}.journal`).subarray(before).toString("utf8").trim().split("\n");
      const oneRecord = JSON.stringify(sandbox.deps.store.records.transaction(ids[0]!)).length;
      // the payment's new state, amounts and time, and the one history line it gained; then the counters
      expect(appended).toHaveLength(2);
      const change = JSON.parse(appended[0]!) as { c: string; k: string; s: Record<string, unknown>; h: [number, { event: string }] };
      expect(change).toMatchObject({ c: "transactions", k: ids[0], s: { state: "paid", captured_amount: "10.00" } });
      expect(Object.keys(change.s)).not.toContain("order_no");
      expect(change.h[0]).toBe(1);
      expect(change.h.slice(1).map((e) => (e as { event: string }).event)).toEqual(["capture"]);
      expect(appended[0]!.length).toBeLessThan(oneRecord / 2);
      // rewriting the world would have cost the whole state
      expect(JSON.stringify(sandbox.deps.store.data).length).toBeGreaterThan(appended.join("\n").length * 100);
    } finally {
      await sandbox.close();
    }
  });

  test("a merchant of 100 accounts: its 100th account, a clock advance and a key rotation each append what changed, not the merchant; a crash keeps them", async () => {
    const file = join(dir, "state.json");
    const sandbox = await startSandbox({
      port: 0,
      host: "127.0.0.1",
      logLevel: "silent",
      data: file,
      seed: "accounts",
      merchantKeys: "random",
      watchScenarios: false,
    });
    try {
      const merchant = "M-MANY";
      const account = (i: number) => `ACC-${String(i).padStart(3, "0")}-${"x".repeat(56)}`; // 64 characters
      const appended = async (step: () => Promise<unknown>) => {
        const before = statSync(`${file}.journal`).size;
        await step();
        return readFileSync(`${file}.journal`).subarray(before).toString("utf8").trim().split("\n");
      };
      for (let i = 1; i < 100; i++)
        expect((await post(sandbox.url, "/v1/authorise", directPayment({ merchant_id: merchant, account_id: account(i), order_no: `ACC-${i}` }))).status).toBe(
          200,
        );
      const added = await appended(() =>
        post(sandbox.url, "/v1/authorise", directPayment({ merchant_id: merchant, account_id: account(100), order_no: "ACC-100" })),
      );
      const whole = JSON.stringify(sandbox.deps.store.records.merchant(merchant)).length;
      expect(whole).toBeGreaterThan(25_000);
      const merchantLine = (lines: string[]) =>
        JSON.parse(lines.find((l) => l.includes('"c":"merchants"'))!) as { k: string; s?: Record<string, unknown>; h?: [number, { account_id: string }] };
      // the account it gained, from position 99 on
      const accountLine = merchantLine(added);
      expect(accountLine).toMatchObject({ k: merchant, h: [99, { account_id: account(100) }] });
      expect(accountLine.s).toBeUndefined();
      expect(added.find((l) => l.includes('"c":"merchants"'))!.length).toBeLessThan(1_000);
      // its clock, and its key
      const advanced = merchantLine(await appended(() => post(sandbox.url, "/__sandbox/clock", { advance: "2h", merchant_id: merchant })));
      expect(advanced).toEqual({ c: "merchants", k: merchant, s: { clock_offset_ms: 7_200_000 } });
      const rotated = merchantLine(await appended(() => post(sandbox.url, `/__sandbox/merchants/${merchant}/rotate-key`, {})));
      expect(Object.keys(rotated.s ?? {})).toEqual(["secret_key"]);
      await sandbox.deps.store.commit();
      const acknowledged = JSON.parse(JSON.stringify(sandbox.deps.store.data)) as typeof sandbox.deps.store.data;
      const back = await reopened(crashCopy(file, join(dir, "crashed")));
      expect(back.merchants.find((m) => m.merchant_id === merchant)?.accounts).toHaveLength(100);
      expect(back).toEqual(acknowledged);
    } finally {
      await sandbox.close();
    }
  });

  test("after a crash the state comes back exactly as acknowledged: every field of every record, through pages, refunds, the clock and operators", async () => {
    const file = join(dir, "state.json");
    const sandbox = await startSandbox({ port: 0, host: "127.0.0.1", logLevel: "silent", data: file, seed: "whole", watchScenarios: false });
    const url = sandbox.url;
    try {
      const authorise = async (body: Record<string, unknown>, scenario?: string) => {
        const res = await fetch(`${url}/v1/authorise`, {
          method: "POST",
          headers: { "content-type": "application/json", ...(scenario ? { "x-sandbox-scenario": scenario } : {}) },
          body: JSON.stringify(body),
        });
        return parseXml(await res.text());
      };
      const order = (id: string, orderNo: string) => ({ transaction_id: id, order_no: orderNo, currency: "USD", amount: "10.00" });
      // captured, then refunded twice (one settles by the clock, one by an operator, failed)
      const paid = textOf((await authorise(directPayment({ order_no: "W-CAP", token_flag: "YES" }))).transaction_id);
      await post(url, "/v1/capture", { ...ENVELOPE, capture_orders: [order(paid, "W-CAP")] });
      await post(url, "/v1/refund", { ...ENVELOPE, refund_orders: [{ ...order(paid, "W-CAP"), refund_amount: "1.00" }] });
      await post(url, "/v1/refund", { ...ENVELOPE, refund_orders: [{ ...order(paid, "W-CAP"), refund_amount: "2.00" }] });
      await post(url, `/__sandbox/refunds/${paid}-02/settle`, { result: "failed" });
      // a 3-D Secure challenge and a risk review finished by operators, an APM paid at its page
      const challenged = textOf((await authorise(directPayment({ order_no: "W-3DS" }), "3ds")).transaction_id);
      await post(url, `/__sandbox/payments/${challenged}/complete`, { outcome: "paid" });
      const reviewed = textOf((await authorise(directPayment({ order_no: "W-REV" }), "risk-review")).transaction_id);
      await post(url, `/__sandbox/payments/${reviewed}/complete`, { outcome: "failed" });
      const issuer = textOf((await authorise(apmPayment({ order_no: "W-APM", notify_url: "http://127.0.0.1:9/hook" }))).issuer_url);
      await fetch(issuer, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json" },
        body: "outcome=paid",
      });
      await post(url, "/__sandbox/notifications/deliver", {});
      // a subscription charged once by the clock, a payout failed by an operator, a new merchant
      await authorise(directPayment({ order_no: "W-SUB", subscription: { contract_name: "Box", interval: "day", billing_cycle: 6 } }));
      const payout = JSON.parse(
        (
          await post(url, "/v1/payout", {
            ...ENVELOPE,
            request_id: "6a1c2a9e-8b7d-4c6e-9a5b-000000000002",
            payment_currency: "USD",
            payment_amount: "10.00",
            payment_method: "SWIFT",
            beneficiary: { first_name: "A", last_name: "B", bank_details: { account_number: "99990008", bank_country_code: "US" } },
          })
        ).text,
      ) as { transaction_id: string };
      await post(url, `/__sandbox/payouts/${payout.transaction_id}/fail`, { failure_type: "NAME_MISMATCH" });
      await authorise(directPayment({ merchant_id: "M-WHOLE", account_id: "A-WHOLE", order_no: "W-PROV" }));
      await post(url, "/__sandbox/clock", { advance: "3d" });
      await sandbox.deps.store.commit();
      // kill -9 now: what is on disk is what a restart reads
      const acknowledged = JSON.parse(JSON.stringify(sandbox.deps.store.data)) as typeof sandbox.deps.store.data;
      const crashed = crashCopy(file, join(dir, "crashed"));
      expect(readFileSync(`${crashed}.journal`, "utf8")).toContain('"k":');
      const back = await reopened(crashed);
      expect(back.transactions.find((t) => t.transaction_id === paid)?.history?.length).toBeGreaterThan(3);
      expect(back.refunds.filter((r) => r.transaction_id === paid).map((r) => r.state)).toEqual(["processed", "failed"]);
      expect(back).toEqual(acknowledged);
    } finally {
      await sandbox.close();
    }
  });

  test("a commit of 50 records in text of every UTF-8 width comes back whole after kill -9", async () => {
    const file = join(dir, "state.json");
    const { url, child } = await startProcess(file);
    // 1-, 2-, 3- and 4-byte UTF-8 (the last a surrogate pair in JavaScript); 50 records of ~2 KB in one commit
    const note = (i: number) => `Zoë ⟨${i}⟩ 日本語 😀 ${"é".repeat(600)}`;
    const orders = [];
    for (let i = 0; i < 50; i++) {
      const body = directPayment({ order_no: `U-${i}`, note: note(i) });
      const id = textOf(parseXml((await post(url, "/v1/authorise", body)).text).transaction_id);
      orders.push({ transaction_id: id, order_no: body.order_no, currency: "USD", amount: "10.00" });
    }
    const captured = await post(url, "/v1/capture", { ...ENVELOPE, capture_orders: orders });
    expect(JSON.parse(captured.text).capture_orders.every((o: { capture_status: string }) => o.capture_status === "1")).toBe(true);
    await killed(child);
    const state = await reopened(file);
    const byId = new Map(state.transactions.map((t) => [t.transaction_id, t]));
    orders.forEach((o, i) => {
      expect(byId.get(o.transaction_id)?.note).toBe(note(i));
      expect(byId.get(o.transaction_id)?.captured_amount).toBe("10.00");
    });
  }, 30_000);

  test("a disk that fills up mid-append leaves whole lines only, and later appends replay", async (context) => {
    const tiny = tinyDisk(context, "256k");
    try {
      const path = join(tiny, "state.json.journal");
      const journal = await openJournal(path);
      const line = JSON.stringify({ c: "tokens", v: { token_id: "tok_full", merchant_id: "M10001", pad: "x".repeat(3000) } });
      await expect(
        (async () => {
          for (;;) await journal.append([line, line, line]);
        })(),
      ).rejects.toThrow(/ENOSPC/);
      const text = readFileSync(path, "utf8");
      expect(text.endsWith("\n")).toBe(true);
      expect(text.length).toBe(journal.size);
      // room again (a snapshot cleared it, say): the next append follows whole lines
      await journal.clear();
      await journal.append([JSON.stringify({ c: "tokens", v: { token_id: "tok_after", merchant_id: "M10001" } }), JSON.stringify({ counters: {} })]);
      await journal.close();
      const state = { tokens: [], counters: {} } as unknown as Parameters<typeof replayJournal>[1];
      expect(replayJournal(path, state)).toBe(2);
      expect(state.tokens.map((t) => t.token_id)).toEqual(["tok_after"]);
    } finally {
      execFileSync("umount", [tiny], { stdio: "ignore" });
    }
  });

  test("captures whose append meets a full disk are answered I0500; once there is room, the next commit puts them on disk", async (context) => {
    const tiny = tinyDisk(context, "512k");
    const file = join(tiny, "state.json");
    const filler = join(tiny, "filler");
    const sandbox = await startSandbox({ port: 0, host: "127.0.0.1", logLevel: "silent", data: file, seed: "full", watchScenarios: false });
    try {
      const paid = async () => textOf(parseXml((await post(sandbox.url, "/v1/authorise", directPayment({ order_no: nextOrderNo() }))).text).transaction_id);
      const ids: string[] = [];
      for (let i = 0; i < 20; i++) ids.push(await paid());
      const orders = ids.map((id) => sandbox.deps.store.records.transaction(id)!);
      // the disk fills up to its last page: 20 captures' lines (~6 KB) cannot fit
      try {
        for (let i = 0; ; i++) writeFileSync(filler, Buffer.alloc(4096, i), { flag: "a" });
      } catch {
        // ENOSPC
      }
      const capture_orders = orders.map((o) => ({ transaction_id: o.transaction_id, order_no: o.order_no, currency: "USD", amount: "10.00" }));
      const captured = await post(sandbox.url, "/v1/capture", { ...ENVELOPE, capture_orders });
      expect(captured.status).toBe(500);
      expect(JSON.parse(captured.text)).toMatchObject({ return_status: "0", return_message: expect.stringMatching(/^I0500:/) });
      // memory has the captures (a query says so): the disk must come to say the same
      expect(orders.every((o) => o.state === "paid")).toBe(true);
      rmSync(filler);
      await paid();
      const back = new Map((await reopened(crashCopy(file, join(dir, "crash")))).transactions.map((t) => [t.transaction_id, t]));
      for (const o of orders) expect(back.get(o.transaction_id)).toEqual(JSON.parse(JSON.stringify(o)));
    } finally {
      rmSync(filler, { force: true });
      await sandbox.close();
      execFileSync("umount", [tiny], { stdio: "ignore" });
    }
  });

  test("a commit cut short by a crash is ignored whole; a damaged line before the end stops the start, naming the file", async () => {
    const file = join(dir, "state.json");
    const first = await startSandbox({ port: 0, host: "127.0.0.1", logLevel: "silent", data: file, seed: "t" });
    await first.close();
    const token = (id: string) => JSON.stringify({ c: "tokens", v: { token_id: id, merchant_id: "M10001" } });
    const counters = JSON.stringify({ counters: {} });
    // a whole commit (its record, then its counters line), then one torn in its second line
    writeFileSync(`${file}.journal`, `${token("tok_whole")}\n${counters}\n${token("tok_half")}\n{"c":"transac`);
    let state = await reopened(file);
    expect(state.tokens.map((t) => t.token_id)).toContain("tok_whole");
    expect(state.tokens.map((t) => t.token_id)).not.toContain("tok_half");
    // a commit whose lines are whole but whose counters line never came
    writeFileSync(`${file}.journal`, `${token("tok_whole")}\n${counters}\n${token("tok_no_counters")}\n`);
    state = await reopened(file);
    expect(state.tokens.map((t) => t.token_id)).not.toContain("tok_no_counters");
    writeFileSync(`${file}.journal`, `{"c":"transac\n${JSON.stringify({ counters: {} })}\n`);
    await expect(startSandbox({ port: 0, logLevel: "silent", data: file })).rejects.toThrow(`${file}.journal`);
    expect(readFileSync(`${file}.journal`, "utf8")).toContain('{"c":"transac');
  });
});
