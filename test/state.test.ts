// Runtime state: --data keeps it across restarts and continues the id sequence; --seed makes
// generated values repeatable; fixtures are never written; bad state files and bad settings
// fail at start with a clear message.
import { createHash } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { parseCommandLine } from "../src/cli/command-line.js";
import { ConfigError, DEFAULTS, resolveConfig } from "../src/config/config.js";
import { defaultFixturesDir } from "../src/base/paths.js";
import { startSandbox, type Sandbox } from "../src/server/sandbox.js";
import { directPayment, makeApp, parseXml, postAuthorise, textOf } from "./helpers.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "sandgate-state-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const start = (data: string, seed = "state-seed") => startSandbox({ port: 0, host: "127.0.0.1", logLevel: "silent", data, seed });

async function pay(sandbox: Sandbox, overrides: Record<string, unknown> = {}) {
  const body = directPayment(overrides);
  const res = await fetch(`${sandbox.url}/v1/authorise`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  expect(res.status).toBe(200);
  const xml = parseXml(await res.text());
  return { orderNo: String(body.order_no), transactionId: textOf(xml.transaction_id), tokenId: textOf(xml.token_id) };
}

describe("--data keeps state across restarts", () => {
  test("a payment survives a restart; the request log starts empty; new ids continue the sequence", async () => {
    const file = join(dir, "state.json");
    const first = await start(file);
    const before = [await pay(first, { token_flag: "YES" }), await pay(first)];
    // an acknowledged payment is already on disk: in the journal beside the snapshot
    const journal = readFileSync(`${file}.journal`, "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { c?: string; v?: { transaction_id?: string } });
    const journaled = journal.filter((l) => l.c === "transactions").map((l) => l.v?.transaction_id);
    expect(journaled).toEqual(expect.arrayContaining(before.map((p) => p.transactionId)));
    await first.close();

    const second = await start(file);
    try {
      const log = await fetch(`${second.url}/__sandbox/requests`);
      expect(((await log.json()) as { requests: unknown[] }).requests).toEqual([]);
      for (const p of before) {
        expect(second.deps.store.data.transactions.find((t) => t.transaction_id === p.transactionId)?.order_no).toBe(p.orderNo);
      }
      // the token issued before the restart still pays
      const again = await pay(second, { card: undefined, token_id: before[0]!.tokenId });
      expect(again.tokenId).toBe(before[0]!.tokenId);

      const after = [again, await pay(second, { token_flag: "YES" }), await pay(second)];
      const transactionIds = [...before, ...after].map((p) => p.transactionId);
      expect(new Set(transactionIds).size).toBe(transactionIds.length);
      expect(after[1]!.tokenId).not.toBe(before[0]!.tokenId);
    } finally {
      await second.close();
    }
    expect(readdirSync(dir)).toEqual(["state.json"]);
  });

  test("the state file holds no card number of a payment that asked for no token", async () => {
    const file = join(dir, "state.json");
    const sandbox = await start(file);
    try {
      await pay(sandbox, { card: "4000000000009235" });
    } finally {
      await sandbox.close();
    }
    const content = readFileSync(file, "utf8");
    expect(content).toContain("400000******9235");
    expect(content).not.toContain("4000000000009235");
  });

  test("a restart without --seed keeps the seed stored in the file", async () => {
    const file = join(dir, "state.json");
    const first = await start(file, "kept-seed");
    await first.close();
    const second = await startSandbox({ port: 0, host: "127.0.0.1", logLevel: "silent", data: file });
    try {
      expect(second.deps.store.data.seed).toBe("kept-seed");
    } finally {
      await second.close();
    }
  });

  test.each([
    ["not JSON", "{ this is not json"],
    ["JSON that is not a Sandgate state", JSON.stringify({ hello: "world" })],
    ["a JSON array", "[]"],
  ])("a corrupt --data file (%s) fails at start, naming the file", async (_name, content) => {
    const file = join(dir, "corrupt.json");
    writeFileSync(file, content);
    await expect(start(file)).rejects.toThrow(file);
    expect(readFileSync(file, "utf8")).toBe(content);
  });
});

describe("fixtures are read-only", () => {
  const hashFixtures = () =>
    Object.fromEntries(
      readdirSync(defaultFixturesDir).map((f) => [
        f,
        createHash("sha256")
          .update(readFileSync(join(defaultFixturesDir, f)))
          .digest("hex"),
      ]),
    );

  test("a run with --data that pays, tokenises and subscribes leaves fixtures/ untouched", async () => {
    const before = hashFixtures();
    const sandbox = await start(join(dir, "state.json"));
    try {
      await pay(sandbox, { token_flag: "YES", subscription: { interval: "month" } });
      await pay(sandbox, { card: undefined, token_id: "tok_acme_visa_4242" });
      await pay(sandbox, { merchant_id: "CI-FIX-1" });
      await sandbox.deps.store.reset();
    } finally {
      await sandbox.close();
    }
    expect(hashFixtures()).toEqual(before);
  });
});

describe("deterministic generated values", () => {
  /** The same sequence of requests: values that depend on the seed only, not on order numbers. */
  async function run(seed: string) {
    const { app } = await makeApp({ seed });
    const values: string[] = [];
    const bodies = [
      directPayment({ token_flag: "YES", subscription: { interval: "month" } }),
      directPayment({ card: "4000000000009235" }),
      directPayment({ merchant_id: "CI-DET-1", token_flag: "YES" }),
    ];
    for (const body of bodies) {
      const xml = parseXml((await postAuthorise(app, body)).text);
      values.push(...["transaction_id", "token_id", "recurring_id", "risk_score"].map((f) => `${f}=${textOf(xml[f])}`));
    }
    return values;
  }

  test("two fresh sandboxes with the same seed give the same ids and risk scores", async () => {
    const a = await run("repeatable");
    expect(a.filter((v) => v.startsWith("token_id=tok_"))).toHaveLength(2);
    expect(a.filter((v) => /^recurring_id=\S+$/.test(v))).toHaveLength(1);
    expect(await run("repeatable")).toEqual(a);
  });

  test("a different seed gives different ids", async () => {
    const a = await run("seed-one");
    const b = await run("seed-two");
    const ids = (values: string[]) => values.filter((v) => /^(transaction_id|token_id|recurring_id)=\S+$/.test(v));
    for (const [i, value] of ids(a).entries()) expect(ids(b)[i]).not.toBe(value);
  });
});

describe("settings: flags override env, env overrides defaults", () => {
  test("resolveConfig", () => {
    expect(resolveConfig({}, {}).port).toBe(DEFAULTS.port);
    expect(resolveConfig({}, { PORT: "9100" }).port).toBe(9100);
    expect(resolveConfig({ port: "9200" }, { PORT: "9100" }).port).toBe(9200);
    expect(resolveConfig({}, { PORT: "" }).port).toBe(DEFAULTS.port);
    expect(resolveConfig({}, { SIGNATURE_MODE: "strict" }).signatureMode).toBe("strict");
    expect(resolveConfig({ signatureMode: "lenient" }, { SIGNATURE_MODE: "strict" }).signatureMode).toBe("lenient");
    expect(resolveConfig({}, { STRICT_MERCHANTS: "yes" }).strictMerchants).toBe(true);
    expect(resolveConfig({ strictMerchants: false }, { STRICT_MERCHANTS: "true" }).strictMerchants).toBe(false);
    expect(resolveConfig({}, { DATA_FILE: "/tmp/x.json", SEED: "s1" })).toMatchObject({ data: "/tmp/x.json", seed: "s1" });
  });

  test("parseCommandLine", () => {
    const env = { PORT: "9100", SCENARIO: "from-env", SEED: "env-seed" };
    const config = parseCommandLine(["--port", "9300", "--seed", "flag-seed", "--strict-merchants", "--signature-mode", "strict"], env);
    expect(config).toMatchObject({ port: 9300, seed: "flag-seed", scenario: "from-env", strictMerchants: true, signatureMode: "strict" });
    expect(parseCommandLine([], {})).toEqual(DEFAULTS);
  });

  test.each([
    ["a port that is not a number", { port: "http" }, {}, /--port \/ PORT: .*"http"/],
    ["a port out of range", {}, { PORT: "70000" }, /--port \/ PORT: .*0-65535.*"70000"/],
    ["a negative port", {}, { PORT: "-1" }, /--port \/ PORT/],
    ["an unknown signature mode", {}, { SIGNATURE_MODE: "loose" }, /--signature-mode \/ SIGNATURE_MODE: expected one of lenient, strict, got "loose"/],
    ["a boolean that is not one", {}, { STRICT_MERCHANTS: "maybe" }, /--strict-merchants \/ STRICT_MERCHANTS: expected true or false/],
    ["a base URL that is not absolute", {}, { BASE_URL: "/" }, /--base-url \/ BASE_URL: expected an absolute http\(s\) address/],
    [
      "a base URL without a scheme",
      { baseUrl: "sandbox.example.com" },
      {},
      /--base-url \/ BASE_URL: expected an absolute http\(s\) address.*"sandbox.example.com"/,
    ],
  ])("%s is a clear error", (_name, flags, env, message) => {
    expect(() => resolveConfig(flags, env)).toThrow(ConfigError);
    expect(() => resolveConfig(flags, env)).toThrow(message);
  });

  test("an unknown signature mode given as a flag is refused with the allowed choices", () => {
    const written: string[] = [];
    vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    });
    vi.spyOn(process, "exit").mockImplementation((code) => {
      throw new Error(`exit ${String(code)}`);
    });
    try {
      expect(() => parseCommandLine(["--signature-mode", "loose"], {})).toThrow(/exit 1/);
      expect(written.join("")).toMatch(/loose.*lenient, strict/s);
    } finally {
      vi.restoreAllMocks();
    }
  });

  test("an invalid port flag is a clear error", () => {
    expect(() => parseCommandLine(["--port", "eighty"], {})).toThrow(/--port \/ PORT: expected a port number 0-65535, got "eighty"/);
  });
});
