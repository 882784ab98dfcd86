// Slow clients cost their own socket only (docs/security.md): a request whose headers or body do
// not arrive in time is answered 408 and closed, an idle keep-alive socket is closed, and sockets
// past the caps (per client address, in all) are answered 503 with Retry-After at once. With 20,000
// slow sockets from two other loopback addresses, health keeps answering from this one.
import { spawn } from "node:child_process";
import { connect, type Socket } from "node:net";
import { afterAll, describe, expect, test } from "vitest";
import { spawnSandgate, type SandgateProcess } from "../scripts/sandgate-process.js";
import { startSandbox, type Sandbox } from "../src/server/sandbox.js";
import { STORE_NAME, storeFlags, storeOptions } from "./replica-helpers.js";

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

/** What the server sends on the socket until it closes it, and after how long. */
function untilClosed(socket: Socket): Promise<{ text: string; ms: number }> {
  const started = performance.now();
  let text = "";
  socket.on("data", (d: Buffer) => (text += d.toString()));
  return new Promise((resolve) => socket.once("close", () => resolve({ text, ms: performance.now() - started })));
}

describe(`deadlines and caps (${STORE_NAME})`, () => {
  test("headers or a body that do not come in time: 408 and closed; an idle keep-alive socket closed; a normal request on time answered", async () => {
    const sandbox = await startSandbox({
      port: 0,
      host: "127.0.0.1",
      logLevel: "silent",
      ...storeOptions(),
      headerTimeoutMs: 1_000,
      bodyTimeoutMs: 1_000,
      idleTimeoutMs: 1_000,
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
    expect(headers.ms).toBeLessThan(3_000);
    expect(body.text).toMatch(/^HTTP\/1\.1 408/);
    expect(body.ms).toBeLessThan(4_000);
    expect(kept.text).toMatch(/^HTTP\/1\.1 200/);
    expect(kept.ms).toBeLessThan(3_000);
    expect(again.text).toMatch(/^HTTP\/1\.1 \d{3} [\s\S]*HTTP\/1\.1 408/);
    expect(again.ms).toBeLessThan(4_500);
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
    await new Promise((r) => setTimeout(r, 100));
    const again = await socketTo(sandbox.port, "127.0.0.2");
    again.write("GET /__sandbox/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    expect((await untilClosed(again)).text).toMatch(/^HTTP\/1\.1 200/);
  });

  test("past the cap in all: 503 for any address", async () => {
    const sandbox = await startSandbox({ port: 0, host: "127.0.0.1", logLevel: "silent", ...storeOptions(), maxConnections: 10 });
    running.push(sandbox);
    await Promise.all(Array.from({ length: 10 }, (_, i) => socketTo(sandbox.port, `127.0.0.${3 + (i % 3)}`)));
    const over = await socketTo(sandbox.port);
    expect((await untilClosed(over)).text).toMatch(/^HTTP\/1\.1 503/);
  });
});

/** A child process that opens `count` slow sockets from `from` (headers, Content-Length 100, one byte) and holds them: prints how many it opened and how many the server refused. */
const SLOW_CLIENT = `
const net = require("node:net");
const [port, from, count] = process.argv.slice(1).map((v, i) => (i === 1 ? v : Number(v)));
let opened = 0, refused = 0, failed = 0;
const sockets = [];
let reported = false;
const report = () => { if (!reported) console.log(JSON.stringify({ opened, refused, failed })); reported = true; };
// said once every socket is settled and the server's 503s are in (all but its cap of this address,
// or 15 s after the last socket settled: a loaded machine opens them more slowly, not the server)
const settled = () => { if (opened + failed === count) { wait(); setTimeout(report, 15000); } };
const wait = () => (refused + failed >= count - 500 ? report() : setTimeout(wait, 100));
function one() {
  const s = net.connect({ port, host: "127.0.0.1", localAddress: from }, () => {
    opened++;
    s.write("POST /v1/authorise HTTP/1.1\\r\\nHost: x\\r\\nContent-Length: 100\\r\\n\\r\\n{");
    settled();
  });
  s.on("data", (d) => { if (d.toString().startsWith("HTTP/1.1 503")) refused++; });
  s.on("error", () => { if (!s.connecting) return; failed++; settled(); });
  sockets.push(s);
}
let i = 0;
const tick = setInterval(() => { for (let k = 0; k < 100 && i < count; k++, i++) one(); if (i >= count) clearInterval(tick); }, 50);
setTimeout(report, 60000);
setInterval(() => {}, 1000);
`;

describe(`20,000 slow sockets (${STORE_NAME})`, () => {
  test(
    "from two other addresses, 10,000 each: all but the caps' refused at once, and health's p99 stays under 100 ms throughout",
    { timeout: 120_000 },
    async () => {
      const proc = spawnSandgate(["--port", "0", "--host", "127.0.0.1", ...storeFlags()]);
      running.push(proc);
      const url = await proc.url;
      const port = Number(new URL(url).port);
      const clients = ["127.0.0.2", "127.0.0.3"].map((from) => {
        const child = spawn(process.execPath, ["-e", SLOW_CLIENT, String(port), from, "10000"], { stdio: ["ignore", "pipe", "inherit"] });
        let out = "";
        child.stdout.on("data", (d: Buffer) => (out += d.toString()));
        const said = new Promise<{ opened: number; refused: number; failed: number }>((resolve) =>
          child.stdout.on("data", () => out.includes("}") && resolve(JSON.parse(out))),
        );
        return { child, said };
      });
      const times: number[] = [];
      let counted: { opened: number; refused: number; failed: number }[] | undefined;
      void Promise.all(clients.map((c) => c.said)).then((r) => (counted = r));
      // health every 20 ms while the sockets open, then for 3 s while they are held
      let heldSince: number | undefined;
      while (heldSince === undefined || performance.now() - heldSince < 3_000) {
        const started = performance.now();
        const res = await fetch(`${url}/__sandbox/health`);
        await res.arrayBuffer();
        expect(res.status).toBe(200);
        times.push(performance.now() - started);
        if (counted && heldSince === undefined) heldSince = performance.now();
        await new Promise((r) => setTimeout(r, 20));
      }
      for (const c of clients) c.child.kill("SIGKILL");
      const total = counted!.reduce((a, c) => ({ opened: a.opened + c.opened, refused: a.refused + c.refused, failed: a.failed + c.failed }), {
        opened: 0,
        refused: 0,
        failed: 0,
      });
      times.sort((a, b) => a - b);
      const p99 = times[Math.floor(times.length * 0.99)]!;
      console.log(`20,000 slow sockets: ${JSON.stringify(total)}; health p99 ${p99.toFixed(1)} ms over ${times.length} checks`);
      expect(total.opened + total.failed).toBe(20_000);
      // each address keeps its 500 (the default cap); the rest were told 503
      expect(total.refused).toBeGreaterThanOrEqual(20_000 - 2 * 500 - total.failed);
      expect(p99).toBeLessThan(100);
    },
  );
});
