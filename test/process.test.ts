// `npm start` as a process: prints its URL, answers health, honours flags and env, stops on signals.
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { afterEach, describe, expect, test } from "vitest";

const running: ChildProcessWithoutNullStreams[] = [];
afterEach(() => {
  for (const child of running.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
});

/** Starts src/main.ts the way `npm start` starts dist/main.js, and waits for its URL line. */
function start(args: string[], env: Record<string, string> = {}) {
  // vitest puts Vite's BASE_URL ("/") in the environment: it is not a setting for the child
  const { BASE_URL: _vite, ...inherited } = process.env;
  const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts", ...args], {
    env: { ...inherited, LOG_LEVEL: "warn", ...env },
  });
  running.push(child);
  let out = "";
  let err = "";
  child.stderr.on("data", (d: Buffer) => (err += d.toString()));
  const url = new Promise<string>((resolve, reject) => {
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.on("exit", (code) => reject(new Error(`exited ${code} before listening: ${err}`)));
  });
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return { child, url, exited, stderr: () => err };
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

  test("a bad flag value stops it with a clear message and a non-zero exit", async () => {
    const proc = start(["--port", "0", "--signature-mode", "sloppy"]);
    await expect(proc.url).rejects.toThrow(/signature-mode/);
    expect(await proc.exited).not.toBe(0);
  });

  test("a missing scenario stops it with the file it looked for", async () => {
    const proc = start(["--port", "0", "--scenario", "no-such-scenario"]);
    await expect(proc.url).rejects.toThrow(/no-such-scenario/);
  });
});
