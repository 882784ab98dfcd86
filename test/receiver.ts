// A merchant's notification receiver for the tests: answers 200 "ok" and keeps every body it got
// (JSON, or a form's fields), on a port of its own (0: a free one).
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll } from "vitest";
import { startSandbox, type Sandbox, type SandboxOptions } from "../src/server/sandbox.js";

export interface Receiver {
  url: string;
  received: Record<string, unknown>[];
  close(): Promise<void>;
}

export async function startReceiver(port = 0, path = "/hook"): Promise<Receiver> {
  const received: Record<string, unknown>[] = [];
  const server = createServer((req, res) => {
    let text = "";
    req.on("data", (d: Buffer) => (text += d.toString()));
    req.on("end", () => {
      try {
        received.push(JSON.parse(text) as Record<string, unknown>);
      } catch {
        received.push(Object.fromEntries(new URLSearchParams(text)));
      }
      res.writeHead(200, { "content-type": "text/plain" }).end("ok");
    });
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`;
  return { url, received, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/**
 * For a test file: a sandbox on a free port (seeded with `seed`) and a receiver for its
 * notifications, started before the file's tests and closed after them.
 */
export function sandboxWithReceiver(seed: string, options: SandboxOptions = {}): { readonly sandbox: Sandbox; readonly receiver: Receiver } {
  const live = {} as { sandbox: Sandbox; receiver: Receiver };
  beforeAll(async () => {
    live.sandbox = await startSandbox({ port: 0, host: "127.0.0.1", logLevel: "silent", seed, ...options });
    live.receiver = await startReceiver();
  });
  afterAll(async () => {
    await live.sandbox.close();
    await live.receiver.close();
  });
  return live;
}
