// `sandgate listen` as a developer runs it, and the receiver on their laptop: for the listen suites
// (one process, and replicas).
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { spawnSandgate, type SandgateProcess } from "../scripts/sandgate-process.js";
import { listenHeaders } from "../src/notify/listen-auth.js";
import { until } from "./waiting.js";

export interface Got {
  headers: Record<string, string | string[] | undefined>;
  body: string;
}
export interface LocalReceiver {
  url: string;
  got: Got[];
  close(): Promise<void>;
}

/** A developer's receiver on their laptop: keeps every request as received; `answer` picks the status. */
export async function localReceiver(answer: (got: Got, index: number) => number = () => 200, delayMs = 0): Promise<LocalReceiver> {
  const got: Got[] = [];
  const server: Server = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (d: string) => (body += d));
    req.on("end", () => {
      const entry = { headers: req.headers, body };
      got.push(entry);
      const status = answer(entry, got.length - 1);
      setTimeout(() => res.writeHead(status, { "content-type": "text/plain" }).end(status < 300 ? "ok" : "no"), delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/notify`,
    got,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** `sandgate listen …` as a developer runs it, once it says it is ready (or has exited). */
export async function listener(args: string[], env: Record<string, string> = {}): Promise<SandgateProcess> {
  const proc = spawnSandgate(["listen", ...args], { env });
  await Promise.race([until(() => proc.stderr().includes("ready:"), 20_000), proc.exited]);
  return proc;
}

export interface OpenStream {
  status: number;
  /** everything the stream has said so far (a refusal's body when it was refused) */
  text(): string;
  /** the id its ready event names, for its goodbye */
  listenerId(): string;
  /** settles when Sandgate ends the stream */
  ended: Promise<void>;
  close(): void;
}

/** A merchant's notification stream opened by hand (signed with its key), once its ready event has come. */
export async function openStream(url: string, merchant: string, key: string): Promise<OpenStream> {
  const path = "/__sandbox/listen";
  const abort = new AbortController();
  const res = await fetch(`${url}${path}`, { headers: listenHeaders(merchant, key, "GET", path), signal: abort.signal });
  let text = "";
  let ended: Promise<void> = Promise.resolve();
  if (res.status === 200) {
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    ended = (async () => {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        text += decoder.decode(value, { stream: true });
      }
    })().catch(() => undefined);
    await until(() => text.includes("event: ready"));
  } else text = await res.text();
  const listenerId = () => String((JSON.parse(/event: ready\ndata: (.*)/.exec(text)![1]!) as { listener_id: string }).listener_id);
  return { status: res.status, text: () => text, listenerId, ended, close: () => abort.abort() };
}
