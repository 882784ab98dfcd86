// `sandgate verify` on a recording of 1,000 exchanges (the bound: under 10 s here). The
// recording is made as a merchant makes one: `sandgate record` in front of a Sandgate, with the
// notifications relayed: 250 rounds of authorise → capture → refund → query, plus what they notify.
// Measured, each rep: `node dist/sandgate.js verify` as a process (wall time, and its CPU: the
// in-process Sandgate's included), a recording of one exchange (what starting costs), and the
// floor: the same 1,000 requests sent one at a time to a fresh Sandgate process, nothing compared.
import { spawn } from "node:child_process";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { ROOT, startSandgate, started } from "./processes.js";
import { median } from "./run.js";
import { SIG } from "./workloads.js";

export interface VerifyFigures {
  exchanges: number;
  notifications: number;
  verify_s: number;
  verify_cpu_s: number;
  verify_one_s: number;
  floor_s: number;
}

const ROUNDS = 250;

async function receiver() {
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => res.writeHead(200).end("ok"));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/n`, close: () => new Promise<void>((r) => server.close(() => r())) };
}

const post = (base: string, path: string, body: object, form = false) =>
  fetch(`${base}${path}`, {
    method: "POST",
    headers: { "content-type": form ? "application/x-www-form-urlencoded" : "application/json" },
    body: form ? new URLSearchParams(body as Record<string, string>).toString() : JSON.stringify(body),
  }).then((r) => r.text());

/** 250 rounds through the recorder; returns the HAR's path. */
async function record(dir: string): Promise<string> {
  const upstream = await startSandgate();
  const notified = await receiver();
  const out = join(dir, "recording.har");
  const recorder = await started(["dist/sandgate.js", "record", "--upstream", upstream.url, "--out", out, "--port", "0", "--notify-to", notified.url]);
  try {
    const id = { merchant_id: "M10001", account_id: "A10001", encryption_data: SIG };
    for (let i = 0; i < ROUNDS; i++) {
      const order_no = `BENCH-V-${i}`;
      const xml = await post(recorder.url, "/v1/authorise", {
        ...id,
        order_no,
        currency: "USD",
        amount: "20.00",
        card: "4242424242424242",
        expiration_month: "12",
        expiration_year: "2030",
        security_code: "123",
        notify_url: "http://127.0.0.1:9/merchant",
      });
      const transaction_id = /<transaction_id>([^<]*)</.exec(xml)?.[1] ?? "";
      await post(recorder.url, "/v1/capture", { ...id, capture_orders: [{ transaction_id, order_no, currency: "USD", amount: "20.00" }] });
      await post(recorder.url, "/v1/refund", {
        ...id,
        refund_orders: [{ transaction_id, order_no, currency: "USD", amount: "20.00", refund_amount: "5.17", refund_reason: "bench" }],
      });
      await post(recorder.url, "/v1/retrievalTrans", { ...id, order_no }, true);
    }
    await fetch(`${upstream.url}/__sandbox/notifications/deliver`, { method: "POST" }).then((r) => r.text());
  } finally {
    await recorder.stop();
    await upstream.stop();
    await notified.close();
  }
  return out;
}

/** `node dist/sandgate.js verify <file>`: wall and CPU time, and its exit code. */
function timeVerify(file: string): Promise<{ s: number; cpuS: number; code: number | null }> {
  const cpuHook = fileURLToPath(new URL("./cpu-at-exit.mjs", import.meta.url));
  const t0 = performance.now();
  const child = spawn(process.execPath, ["--import", cpuHook, "dist/sandgate.js", "verify", file], { cwd: ROOT, stdio: ["ignore", "ignore", "pipe"] });
  let err = "";
  child.stderr.on("data", (d: Buffer) => (err += d.toString()));
  return new Promise((resolve) =>
    child.on("close", (code) => resolve({ s: (performance.now() - t0) / 1000, cpuS: Number(/cpu-micros (\d+)/.exec(err)?.[1]) / 1e6, code })),
  );
}

/** The floor: the recording's requests sent as they were, one at a time, to a fresh Sandgate process. */
async function timeFloor(file: string): Promise<number> {
  const entries = (
    JSON.parse(readFileSync(file, "utf8")) as {
      log: {
        entries: {
          request: { method: string; url: string; headers: { name: string; value: string }[]; postData?: { text?: string } };
          _sandgate?: { kind: string };
        }[];
      };
    }
  ).log.entries.filter((e) => e._sandgate?.kind !== "notification");
  const target = await startSandgate();
  try {
    const t0 = performance.now();
    for (const e of entries) {
      const type = e.request.headers.find((h) => h.name.toLowerCase() === "content-type")?.value ?? "application/json";
      await fetch(`${target.url}${new URL(e.request.url).pathname}`, {
        method: e.request.method,
        headers: { "content-type": type },
        body: e.request.postData?.text,
      }).then((r) => r.text());
    }
    return (performance.now() - t0) / 1000;
  } finally {
    await target.stop();
  }
}

export async function benchVerify(reps: number, log: (line: string) => void): Promise<VerifyFigures> {
  const dir = mkdtempSync(join(tmpdir(), "sandgate-bench-verify-"));
  try {
    log(`recording ${ROUNDS * 4} exchanges through sandgate record`);
    const file = await record(dir);
    const har = JSON.parse(readFileSync(file, "utf8")) as { log: { entries: { _sandgate?: { kind: string } }[] } };
    const notifications = har.log.entries.filter((e) => e._sandgate?.kind === "notification").length;
    const one = join(dir, "one.har");
    writeFileSync(one, JSON.stringify({ log: { ...har.log, entries: har.log.entries.slice(0, 1) } }));
    const runs: { s: number; cpuS: number }[] = [];
    const ones: number[] = [];
    const floors: number[] = [];
    for (let rep = 1; rep <= reps; rep++) {
      log(`verify rep ${rep}/${reps}`);
      const run = await timeVerify(file);
      if (run.code !== 0) throw new Error(`sandgate verify of the bench recording exited ${run.code}: it must find no difference`);
      runs.push(run);
      ones.push((await timeVerify(one)).s);
      floors.push(await timeFloor(file));
    }
    return {
      exchanges: har.log.entries.length - notifications,
      notifications,
      verify_s: median(runs.map((r) => r.s)),
      verify_cpu_s: median(runs.map((r) => r.cpuS)),
      verify_one_s: median(ones),
      floor_s: median(floors),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export function verifyTable(f: VerifyFigures): string {
  const perExchange = ((f.verify_s - f.verify_one_s) / Math.max(f.exchanges - 1, 1)) * 1000;
  return [
    `sandgate verify, ${f.exchanges} exchanges and ${f.notifications} notifications (medians): ${f.verify_s.toFixed(2)} s wall (bound: 10 s), ${f.verify_cpu_s.toFixed(2)} s CPU;`,
    `  starting and one exchange: ${f.verify_one_s.toFixed(2)} s; each further exchange ${perExchange.toFixed(2)} ms;`,
    `  the floor (the same requests sent one at a time to a fresh Sandgate, nothing compared): ${f.floor_s.toFixed(2)} s; verify × floor: ${(f.verify_s / f.floor_s).toFixed(2)}`,
  ].join("\n");
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const figures = await benchVerify(3, (line) => process.stderr.write(`${line}\n`));
  process.stdout.write(`${verifyTable(figures)}\n`);
}
