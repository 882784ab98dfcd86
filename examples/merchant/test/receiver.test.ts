// The shop's notify_url (src/receiver.ts) against `sandgate check-receiver`, run as the package's
// command the way a merchant's CI would: genuine, repeated, forged, tampered, stale, out-of-order
// and malformed notifications, and every probe must pass. The check starts its own Sandgate.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { expect, test } from "vitest";
import { createReceiver, type GatewayNotification } from "../src/receiver.js";

/** the installed package's command (package.json "bin") */
const packageJson = createRequire(import.meta.url).resolve("sandgate/package.json");
const bin = join(dirname(packageJson), (JSON.parse(readFileSync(packageJson, "utf8")) as { bin: { sandgate: string } }).bin.sandgate);

function sandgate(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [bin, ...args]);
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, stdout, stderr })));
}

interface CheckReport {
  passed: boolean;
  probes: { probe: string; verdict: string; sends: { notification_id: string }[] }[];
}

test("the shop's receiver passes every probe of sandgate check-receiver, and handles each notification once", async () => {
  const handled: GatewayNotification[] = [];
  const server = createServer(createReceiver({ key: "acme_test_key_7f3a9c21", onEvent: (n) => void handled.push(n) }));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/notify`;
  const dir = mkdtempSync(join(tmpdir(), "shop-receiver-"));
  try {
    const json = join(dir, "check.json");
    const { code, stdout, stderr } = await sandgate(["check-receiver", url, "--merchant", "M10001", "--json", json]);
    expect(stderr).toBe("");
    expect(stdout).toContain("16 probes: 16 pass, 0 warnings, 0 failures");
    expect(code).toBe(0);
    const report = JSON.parse(readFileSync(json, "utf8")) as CheckReport;
    expect(report.passed).toBe(true);
    expect(report.probes.filter((p) => p.verdict !== "pass")).toEqual([]);
    // the genuine ones (a late retry too), each once (the duplicate acknowledged, not handled again); nothing forged
    const genuine = report.probes.filter((p) => ["valid", "late_retry", "out_of_order", "unknown_event", "large_body"].includes(p.probe));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(handled.map((n) => n.notification_id).sort()).toEqual(genuine.flatMap((p) => p.sends.map((s) => s.notification_id)).sort());
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}, 60_000);
