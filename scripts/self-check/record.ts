// Records Sandgate through `sandgate record`, with Sandgate as its own upstream: the self-check
// recording that `sandgate verify` must find no difference in. An upstream Sandgate (seed
// "self-check") and a merchant receiver run here; the recorder is its own process, as a merchant
// runs it. `npm run self-check:record` writes the shipped examples/recordings/self-check.har.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { startSandbox } from "../../src/server/sandbox.js";
import { spawnSandgate } from "../sandgate-process.js";
import { driveEveryOperation, type TrafficSummary } from "./traffic.js";

export const SHIPPED_RECORDING = fileURLToPath(new URL("../../examples/recordings/self-check.har", import.meta.url));

/** A merchant's notification receiver: answers 200 "ok" and counts what it got. */
async function startReceiver() {
  let received = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      received++;
      res.writeHead(200, { "content-type": "text/plain" }).end("ok");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/shop/notifications`, received: () => received, close: () => new Promise<void>((r) => server.close(() => r())) };
}

/**
 * Records the self-check traffic to `out`; the summary says what it covered. `waitMs`: how long to
 * leave the upstream running after the traffic, so what time brings (refunds settle 5 s after they
 * are accepted) happens inside the recording.
 */
export async function recordSelfCheck(out: string, waitMs = 0): Promise<TrafficSummary & { notifications: number }> {
  const upstream = await startSandbox({ port: 0, host: "127.0.0.1", logLevel: "silent", seed: "self-check", keepRunning: true });
  const receiver = await startReceiver();
  const recorder = spawnSandgate(["record", "--upstream", upstream.url, "--out", out, "--port", "0", "--notify-to", receiver.url]);
  try {
    const base = await recorder.url;
    const summary = await driveEveryOperation(base, { notifyUrl: receiver.url });
    if (waitMs) await new Promise((resolve) => setTimeout(resolve, waitMs));
    // every notification the traffic caused goes out now, through the recorder, to the receiver
    await upstream.deps.notifier.drain();
    recorder.child.kill("SIGTERM");
    const code = await recorder.exited;
    if (code !== 0) throw new Error(`sandgate record exited ${code}: ${recorder.stderr()}`);
    return { ...summary, notifications: receiver.received() };
  } finally {
    if (recorder.child.exitCode === null) recorder.child.kill("SIGKILL");
    await upstream.close();
    await receiver.close();
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const out = process.argv[2] ?? SHIPPED_RECORDING;
  const summary = await recordSelfCheck(out);
  process.stdout.write(`recorded ${summary.requests} requests and ${summary.notifications} notifications to ${out}\n`);
}
