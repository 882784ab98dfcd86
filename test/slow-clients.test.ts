// Slow clients cost their own socket only (docs/security.md): a request whose headers or body do
// not arrive in time is answered 408 and closed, an idle keep-alive socket is closed, and sockets
// past the caps (per client address, in all) are answered 503 with Retry-After. With slow sockets
// from two other loopback addresses past their caps, health keeps answering from this one. The
// deadlines are settings, shrunk here; how fast health answers beside 20,000 slow sockets is
// `npm run bench`'s "slow sockets" scenario.
import { spawn } from "node:child_process";
import { connect, type Socket } from "node:net";
import { afterAll, describe, expect, test } from "vitest";
import { spawnSandgate, type SandgateProcess } from "../scripts/sandgate-process.js";
import { startSandbox, type Sandbox } from "../src/server/sandbox.js";
import { STORE_NAME, storeFlags, storeOptions } from "./replica-helpers.js";
import { until } from "./waiting.js";

const opened: Socket[] = [];
const running: (Sandbox | SandgateProcess)[] = [];
afterAll(async () => {
  for (const s of opened) s.destroy();
  for (const r of running) await ("close" in r ? r.close() : (r.child.kill("SIGKILL"), Promise.resolve()));
});

/** A socket from `from` (a loopback address) to the sandbox; resolves once connected. */
function socketTo(port: number, from = "127.0.0.1"): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: "127.0.0.1", localAddress: from }, () => resolve(socket));
    socket.on("error", reject);
    opened.push(socket);
  });
}

/** What the server sends on the socket until it closes it. */
function untilClosed(socket: Socket): Promise<{ text: string }> {
  let text = "";
  socket.on("data", (d: Buffer) => (text += d.toString()));
  return new Promise((resolve) => socket.once("close", () => resolve({ text })));
}

describe(`deadlines and caps (${STORE_NAME})`, () => {
  test("headers or a body that do not come in time: 408 and closed; an idle keep-alive socket closed; a normal request on time answered", async () => {
    const sandbox = await startSandbox({
      port: 0,
      host: "127.0.0.1",
      logLevel: "silent",
      ...storeOptions(),
      headerTimeoutMs: 200,
      bodyTimeoutMs: 200,
      idleTimeoutMs: 200,
    });
    running.push(sandbox);
    const slowHeaders = await socketTo(sandbox.port);
    slowHeaders.write("POST /v1/authorise HTTP/1.1\r\nHost: x\r\n");
    const slowBody = await socketTo(sandbox.port);
    slowBody.write("POST /v1/authorise HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{");
    const idle = await socketTo(sandbox.port);
    idle.write("GET /__sandbox/health HTTP/1.1\r\nHost: x\r\n\r\n");
    // a second request on a kept-alive socket, right behind a first that came whole: its own body has its own deadline
    const slowSecond = await socketTo(sandbox.port);
    const second = untilClosed(slowSecond);
    slowSecond.write(
      "POST /__sandbox/health HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}" +
        "POST /v1/authorise HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{",
    );
    const [headers, body, kept, again] = await Promise.all([untilClosed(slowHeaders), untilClosed(slowBody), untilClosed(idle), second]);
    expect(headers.text).toMatch(/^HTTP\/1\.1 408/);
    expect(body.text).toMatch(/^HTTP\/1\.1 408/);
    expect(kept.text).toMatch(/^HTTP\/1\.1 200/);
    expect(again.text).toMatch(/^HTTP\/1\.1 \d{3} [\s\S]*HTTP\/1\.1 408/);
    expect((await fetch(`${sandbox.url}/__sandbox/health`)).status).toBe(200);
  });

  test("past the cap of one client address: 503 with Retry-After, closed at once; other addresses served; a closed socket frees its place", async () => {
    const sandbox = await startSandbox({ port: 0, host: "127.0.0.1", logLevel: "silent", ...storeOptions(), maxConnectionsPerClient: 20 });
    running.push(sandbox);
    const held = await Promise.all(Array.from({ length: 20 }, () => socketTo(sandbox.port, "127.0.0.2")));
    const over = await socketTo(sandbox.port, "127.0.0.2");
    const refused = await untilClosed(over);
    expect(refused.text).toMatch(/^HTTP\/1\.1 503 .*\r\nRetry-After: 1\r\n/s);
    expect(refused.text).toContain("too_many_connections");
    expect((await fetch(`${sandbox.url}/__sandbox/health`)).status).toBe(200);
    held[0]!.destroy();
    // its place is freed once the server has seen it close: asked again until a new socket is served
    await until(async () => {
      const again = await socketTo(sandbox.port, "127.0.0.2");
      again.write("GET /__sandbox/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
      return /^HTTP\/1\.1 200/.test((await untilClosed(again)).text);
    });
  });

  test("past the cap in all: 503 for any address", async () => {
    const sandbox = await startSandbox({ port: 0, host: "127.0.0.1", logLevel: "silent", ...storeOptions(), maxConnections: 10 });
    running.push(sandbox);
    await Promise.all(Array.from({ length: 10 }, (_, i) => socketTo(sandbox.port, `127.0.0.${3 + (i % 3)}`)));
    const over = await socketTo(sandbox.port);
    expect((await untilClosed(over)).text).toMatch(/^HTTP\/1\.1 503/);
  });
});

/**
 * A child process that opens `count` slow sockets from `from` (headers, Content-Length 100, one byte)
 * and holds them; it prints what became of them once each has connected or failed and all but `cap`
 * were closed: how many opened, were told 503, or failed to connect.
 */
const SLOW_CLIENT = `
const net = require("node:net");
const [port, from, count, cap] = process.argv.slice(1).map((v, i) => (i === 1 ? v : Number(v)));
let opened = 0, refused = 0, failed = 0, closed = 0, reported = false;
const report = () => {
  if (reported || opened + failed < count || closed < count - cap - failed) return;
  reported = true;
  console.log(JSON.stringify({ opened, refused, failed }));
};
for (let i = 0; i < count; i++) {
  const s = net.connect({ port, host: "127.0.0.1", localAddress: from }, () => {
    opened++;
    s.write("POST /v1/authorise HTTP/1.1\\r\\nHost: x\\r\\nContent-Length: 100\\r\\n\\r\\n{");
    report();
  });
  s.on("data", (d) => { if (d.toString().startsWith("HTTP/1.1 503")) { refused++; } });
  s.on("close", () => { if (!s.connecting) { closed++; report(); } });
  s.on("error", () => { if (s.connecting) { failed++; report(); } });
}
setInterval(() => {}, 1000);
`;

describe(`slow sockets past their address's cap (${STORE_NAME})`, () => {
  test(
    "from two other addresses, 300 each under a cap of 100: the rest refused 503, and health answers from this address throughout",
    { timeout: 60_000 },
    async () => {
      const CAP = 100;
      const EACH = 300;
      const proc = spawnSandgate(["--port", "0", "--host", "127.0.0.1", "--max-connections-per-client", String(CAP), ...storeFlags()]);
      running.push(proc);
      const url = await proc.url;
      const port = Number(new URL(url).port);
      const clients = ["127.0.0.2", "127.0.0.3"].map((from) => {
        const child = spawn(process.execPath, ["-e", SLOW_CLIENT, String(port), from, String(EACH), String(CAP)], { stdio: ["ignore", "pipe", "inherit"] });
        let out = "";
        const said = new Promise<{ opened: number; refused: number; failed: number }>((resolve) =>
          child.stdout.on("data", (d: Buffer) => {
            out += d.toString();
            if (out.includes("}")) resolve(JSON.parse(out));
          }),
        );
        return { child, said };
      });
      // health from this address while the sockets open and are refused: every check answered
      let counted: { opened: number; refused: number; failed: number }[] | undefined;
      void Promise.all(clients.map((c) => c.said)).then((r) => (counted = r));
      let checks = 0;
      while (!counted || checks < 10) {
        const res = await fetch(`${url}/__sandbox/health`);
        await res.arrayBuffer();
        expect(res.status).toBe(200);
        checks++;
      }
      for (const c of clients) c.child.kill("SIGKILL");
      for (const c of counted) {
        expect(c.opened + c.failed).toBe(EACH);
        // the address keeps its cap; each socket past it was told 503
        expect(c.refused).toBe(EACH - CAP - c.failed);
      }
    },
  );
});
