// `npm start` as a process: prints its URL, answers health, honours flags and env, stops on signals
// and with the process that launched it, prints its version.
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { spawnSandgate } from "../scripts/sandgate-process.js";
import { readFileSync } from "node:fs";
import { afterEach, describe, expect, test } from "vitest";
import { sandgateArgs } from "../scripts/bench/processes.js";
import { NODE_FLAGS } from "../scripts/node-flags.js";
import { until } from "./waiting.js";

const running: ChildProcessWithoutNullStreams[] = [];
afterEach(() => {
  for (const child of running.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
});

/** Starts src/main.ts the way `npm start` starts dist/main.js, and waits for its URL line. */
function start(args: string[], env: Record<string, string> = {}, nodeFlags: string[] = []) {
  const proc = spawnSandgate(args, { env, nodeFlags });
  running.push(proc.child);
  return proc;
}

describe("the sandgate process", () => {
  test.each(["SIGTERM", "SIGINT"] as const)("prints its URL, is healthy, and exits 0 on %s", async (signal) => {
    const proc = start(["--port", "0", "--host", "127.0.0.1"]);
    const url = await proc.url;
    const health = await fetch(`${url}/__sandbox/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ status: "ok", scenario: "default", signature_mode: "lenient" });
    proc.child.kill(signal);
    expect(await proc.exited).toBe(0);
  });

  test("env vars configure it and flags win over env", async () => {
    const proc = start(["--signature-mode", "strict"], { PORT: "0", HOST: "127.0.0.1", SIGNATURE_MODE: "lenient" });
    const url = await proc.url;
    const health = (await (await fetch(`${url}/__sandbox/health`)).json()) as { signature_mode: string };
    expect(health.signature_mode).toBe("strict");
    proc.child.kill("SIGTERM");
    expect(await proc.exited).toBe(0);
  });

  test("under node --disallow-code-generation-from-strings it still validates and answers payments", async () => {
    // a hardened test runner may refuse code from strings; validation's fast path then walks objects with a loop
    const proc = start(["--port", "0", "--host", "127.0.0.1"], {}, ["--disallow-code-generation-from-strings"]);
    const url = await proc.url;
    const pay = (fields: Record<string, string>) =>
      fetch(`${url}/v1/authorise`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ ...fields, encryption_data: "a".repeat(64) }),
      }).then(async (r) => ({ status: r.status, text: await r.text() }));
    const card = {
      merchant_id: "M10001",
      account_id: "A10001",
      currency: "USD",
      amount: "10.00",
      card: "4242424242424242",
      expiration_month: "12",
      expiration_year: "2030",
      security_code: "123",
    };
    const approved = await pay({ ...card, order_no: "NO-EVAL-1" });
    expect(approved.status).toBe(200);
    expect(approved.text).toContain("<order_status>1</order_status>");
    const refused = await pay({ ...card, order_no: "NO-EVAL-2", amount: "ten" });
    expect(refused.status).toBe(400);
    expect(refused.text).toContain("<field>amount</field>");
    expect(proc.stderr()).not.toMatch(/EvalError/);
    proc.child.kill("SIGTERM");
    expect(await proc.exited).toBe(0);
  });

  test("a bad flag value stops it with a clear message and a non-zero exit", async () => {
    const proc = start(["--port", "0", "--signature-mode", "sloppy"]);
    await expect(proc.url).rejects.toThrow(/signature-mode/);
    expect(await proc.exited).not.toBe(0);
  });

  test("an empty ADMIN_TOKEN stops it with one line (an empty token once meant an open sandbox)", async () => {
    for (const [args, env] of [
      [[], { ADMIN_TOKEN: "" }],
      [["--admin-token", ""], {}],
    ] as const) {
      const proc = start(["--port", "0", "--host", "127.0.0.1", ...args], env);
      await expect(proc.url).rejects.toThrow(/ADMIN_TOKEN is set but empty/);
      expect(await proc.exited).not.toBe(0);
      expect(proc.stderr().trim().split("\n")).toHaveLength(1);
    }
  });

  test("a token under 16 characters is a start warning; a longer one is not", async () => {
    const short = start(["--port", "0", "--host", "127.0.0.1"], { ADMIN_TOKEN: "x" });
    const url = await short.url;
    expect(short.stderr()).toContain(
      "sandgate: warning: ADMIN_TOKEN is 1 character long: anyone who can reach /__sandbox can guess a short token; use 16 or more",
    );
    // it is still the token
    expect((await fetch(`${url}/__sandbox/transactions`)).status).toBe(401);
    expect((await fetch(`${url}/__sandbox/transactions`, { headers: { authorization: "Bearer x" } })).status).toBe(200);
    const long = start(["--port", "0", "--host", "127.0.0.1"], { ADMIN_TOKEN: "0123456789abcdef" });
    await long.url;
    expect(long.stderr()).not.toContain("ADMIN_TOKEN");
  });

  test("a missing scenario stops it with the file it looked for", async () => {
    const proc = start(["--port", "0", "--scenario", "no-such-scenario"]);
    await expect(proc.url).rejects.toThrow(/no-such-scenario/);
  });

  test("a --data file it cannot write stops it at once with what to do (create the folder, or grant the uid access)", async () => {
    const proc = start(["--port", "0", "--data", "/nonexistent-sandgate-dir/state.json"]);
    await expect(proc.url).rejects.toThrow(/cannot write state \(ENOENT.*the folder \/nonexistent-sandgate-dir does not exist: create it/);
    expect(await proc.exited).not.toBe(0);
  });

  test("a --data folder it may not write in (a host folder mounted in Docker) stops it with the uid and the remedy", async () => {
    // /sys refuses writes even to root: it stands for a folder owned by another uid
    const proc = start(["--port", "0", "--data", "/sys/state.json"]);
    await expect(proc.url).rejects.toThrow(
      /cannot write state \(EACCES.*runs as uid \d+ and needs to write in \/sys: give that uid write access .*chown .*--user/,
    );
    expect(await proc.exited).not.toBe(0);
  });

  test("npm start, the Docker image and the bench run node with the same V8 flags, and it starts with them", async () => {
    const { scripts } = JSON.parse(readFileSync("package.json", "utf8")) as { scripts: { start: string } };
    expect(scripts.start).toBe(`node ${NODE_FLAGS.join(" ")} dist/sandgate.js`);
    const cmd = /^CMD (\[.*\])$/m.exec(readFileSync("Dockerfile", "utf8"))?.[1];
    expect(JSON.parse(cmd ?? "null")).toEqual(["node", ...NODE_FLAGS, "dist/sandgate.js"]);
    expect(sandgateArgs().slice(0, NODE_FLAGS.length)).toEqual(NODE_FLAGS);
    // node refuses a flag V8 does not know ("bad option"): this one answers
    const proc = start(["--port", "0", "--host", "127.0.0.1"], {}, [...NODE_FLAGS]);
    expect((await fetch(`${await proc.url}/__sandbox/health`)).status).toBe(200);
    proc.child.kill("SIGTERM");
    expect(await proc.exited).toBe(0);
  });

  test("--version prints the package's version and exits 0", async () => {
    const { version } = JSON.parse(readFileSync("package.json", "utf8")) as { version: string };
    const proc = start(["--version"]);
    proc.url.catch(() => undefined); // it never listens
    let out = "";
    proc.child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    expect(await proc.exited).toBe(0);
    expect(out.trim()).toBe(version);
  });

  /**
   * A launcher like npx or npm: starts the server as its child and prints the child's pid. Killing
   * the launcher (what `kill $!` after `npx sandgate &` does) must stop the server too.
   */
  function launch(extra: string[] = []) {
    const { BASE_URL: _vite, ...inherited } = process.env;
    const script = `const { spawn } = require("node:child_process");
      const c = spawn(process.execPath, ["--import", "tsx", "src/main.ts", "--port", "0", "--host", "127.0.0.1", ...${JSON.stringify(extra)}], { stdio: ["ignore", "inherit", "inherit"] });
      console.log("server pid " + c.pid); setInterval(() => {}, 1000);`;
    const launcher = spawn(process.execPath, ["-e", script], { env: { ...inherited, LOG_LEVEL: "warn" } });
    running.push(launcher);
    let out = "";
    const ready = new Promise<{ url: string; pid: number }>((resolve) => {
      launcher.stdout.on("data", (d: Buffer) => {
        out += d.toString();
        const url = /listening on (http:\/\/\S+)/.exec(out)?.[1];
        const pid = /server pid (\d+)/.exec(out)?.[1];
        if (url && pid) resolve({ url, pid: Number(pid) });
      });
    });
    return { launcher, ready };
  }
  const alive = (pid: number) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  test("killing the launcher (npx, npm start) stops the server instead of leaving it answering", async () => {
    const { launcher, ready } = launch();
    const { url, pid } = await ready;
    expect((await fetch(`${url}/__sandbox/health`)).status).toBe(200);
    launcher.kill("SIGKILL");
    await until(() => !alive(pid));
    await expect(fetch(`${url}/__sandbox/health`)).rejects.toThrow();
  });

  test("--keep-running outlives its launcher: once a server without it has stopped with its own, it still answers", async () => {
    const kept = launch(["--keep-running"]);
    const plain = launch();
    const [{ url, pid }, other] = await Promise.all([kept.ready, plain.ready]);
    kept.launcher.kill("SIGKILL");
    plain.launcher.kill("SIGKILL");
    try {
      // the server without --keep-running noticed its launcher gone: time enough for this one to have noticed too
      await until(() => !alive(other.pid));
      expect(alive(pid)).toBe(true);
      expect((await fetch(`${url}/__sandbox/health`)).status).toBe(200);
    } finally {
      process.kill(pid, "SIGTERM");
    }
  });

  test("startSandbox() in a merchant's own process is quiet by default: no log line per request on stdout", async () => {
    const { BASE_URL: _vite, LOG_LEVEL: _level, ...inherited } = process.env;
    const script = `import { startSandbox } from "./src/index.ts";
      const s = await startSandbox({ port: 0, host: "127.0.0.1" });
      const body = JSON.stringify({ merchant_id: "M10001", account_id: "A10001", order_no: "QUIET-1", currency: "USD", amount: "10.00", card: "4242424242424242", expiration_month: "12", expiration_year: "2030", security_code: "123", encryption_data: "${"a".repeat(64)}" });
      const res = await fetch(s.url + "/v1/authorise", { method: "POST", headers: { "content-type": "application/json" }, body });
      process.stderr.write("status " + res.status + "\\n");
      await s.close();`;
    const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { env: inherited });
    running.push(child);
    let out = "";
    let err = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (err += d.toString()));
    expect(await new Promise((r) => child.on("exit", r))).toBe(0);
    expect(err).toContain("status 200");
    expect(out).toBe("");
  });
});
