// Closing the sandbox lets notification attempts already on their way finish and be recorded.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { expect, test } from "vitest";
import { startSandbox } from "../src/server/sandbox.js";
import { directPayment } from "./helpers.js";

test("close() waits for an attempt in flight and records its answer", async () => {
  const receiver = createServer((_req, res) => setTimeout(() => res.end("ok"), 400));
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  const hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  const sandbox = await startSandbox({ port: 0, host: "127.0.0.1", logLevel: "silent", seed: "shutdown" });
  try {
    const res = await fetch(`${sandbox.url}/v1/authorise`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(directPayment({ notify_url: hook })),
    });
    expect(res.status).toBe(200);
    sandbox.deps.notifier.tick(); // the attempt starts and takes 400 ms
    await sandbox.close();
    const [notification] = sandbox.deps.store.data.notifications;
    expect(notification!.attempts.map((a) => a.http_status)).toEqual([200]);
    expect(notification!.state).toBe("delivered");
  } finally {
    receiver.close();
  }
});
