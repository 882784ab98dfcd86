// --notify-allow (issue 27): notifications, resends, triggers and receiver checks go only to the
// hosts it lists; a notify_url outside it is recorded as failed with the reason and nothing is sent.
// Refused hosts are names under .invalid or addresses nothing listens on, so no traffic leaves the
// machine; an allowed one is a real receiver on 127.0.0.1. And the warning at start.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { ConfigError, resolveConfig } from "../src/config/config.js";
import { parseAllowList } from "../src/config/notify-allow-list.js";
import { spawnSandgate } from "../scripts/sandgate-process.js";
import { ACME, directPayment, makeApp, postAuthorise, storedNotifications } from "./helpers.js";

let receiver: Server;
let receiverUrl = "";
const received: string[] = [];
beforeAll(async () => {
  receiver = createServer((req, res) => {
    received.push(req.url ?? "");
    res.writeHead(200).end("ok");
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
});
afterAll(() => receiver.close());

describe("the list", () => {
  test("hosts, wildcard hosts, addresses and ranges, matched as the URL writes its host (no DNS)", () => {
    const list = parseAllowList(" Hooks.Example.com, *.ci.example.com ,10.0.0.0/8, 192.168.1.20, fd00::/8 ");
    for (const host of ["hooks.example.com", "HOOKS.example.com.", "a.ci.example.com", "x.y.ci.example.com", "10.2.3.4", "192.168.1.20", "[fd00::1]"])
      expect(list.allows(host), host).toBe(true);
    for (const host of [
      "example.com",
      "ci.example.com",
      "hooks.example.com.evil.test",
      "evilci.example.com",
      "11.0.0.1",
      "192.168.1.21",
      "[fe80::1]",
      "localhost",
    ])
      expect(list.allows(host), host).toBe(false);
  });

  test.each([" , ", "http://hooks.example.com", "10.0.0.0/33", "10.0.0.0/8/1", "hooks example.com", "*.", "a/b"])(
    "%j is refused at start with what is expected",
    (text) => {
      expect(() => resolveConfig({ notifyAllow: text }, {})).toThrow(ConfigError);
      expect(() => resolveConfig({}, { NOTIFY_ALLOW: text })).toThrow(/--notify-allow/);
    },
  );
});

describe("sending", () => {
  const ALLOW = "hooks.invalid,*.allowed.invalid,127.0.0.0/8";

  test("a payment's notification to a host outside the list: failed with the reason, nothing sent; inside it: delivered", async () => {
    const { app } = await makeApp({ notifyAllow: ALLOW });
    const before = received.length;
    await postAuthorise(app, directPayment({ order_no: "ALLOW-OUT", notify_url: "http://elsewhere.invalid/hook" })).expect(200);
    await postAuthorise(app, directPayment({ order_no: "ALLOW-IP", notify_url: "http://10.9.8.7:9/hook" })).expect(200);
    await postAuthorise(app, directPayment({ order_no: "ALLOW-IN", notify_url: `${receiverUrl}/in` })).expect(200);
    await request(app).post("/__sandbox/notifications/deliver").expect(200);
    const all = await storedNotifications(app);
    const of = (order: string) => all.find((n) => (n.payload.data as { order_no?: string }).order_no === order)!;
    for (const [order, host] of [
      ["ALLOW-OUT", "elsewhere.invalid"],
      ["ALLOW-IP", "10.9.8.7"],
    ]) {
      const n = of(order!);
      expect(n.state).toBe("failed");
      expect(n.attempts).toHaveLength(1); // not retried: another try would be refused the same
      expect(n.attempts[0]).toMatchObject({
        http_status: null,
        error: `refused: notify_url host ${host} is not in --notify-allow (${ALLOW}); nothing was sent`,
      });
    }
    expect(of("ALLOW-IN").state).toBe("delivered");
    expect(received.slice(before)).toEqual(["/in"]);
  });

  test("a resend and an operator trigger outside the list are refused the same way", async () => {
    const { app } = await makeApp({ notifyAllow: ALLOW });
    const triggered = await request(app)
      .post("/__sandbox/notifications/trigger")
      .send({ merchant_id: ACME.merchant_id, url: "https://api.elsewhere.invalid/hook" })
      .expect(201);
    expect(triggered.body.notification).toMatchObject({
      state: "failed",
      attempts: [{ http_status: null, error: expect.stringContaining("api.elsewhere.invalid is not in --notify-allow") }],
    });
    const resent = await request(app).post(`/__sandbox/notifications/${triggered.body.notification.notification_id}/resend`).expect(200);
    expect(resent.body.notification.attempts).toHaveLength(2);
    expect(resent.body.notification.attempts[1]).toMatchObject({
      reason: "resend",
      http_status: null,
      error: expect.stringContaining("is not in --notify-allow"),
    });
  });

  test("a receiver check of a URL outside the list is refused before anything is made or sent", async () => {
    const { app } = await makeApp({ notifyAllow: ALLOW });
    const res = await request(app)
      .post("/__sandbox/receiver-checks")
      .send({ url: "http://receiver.elsewhere.invalid/hook", merchant_id: ACME.merchant_id })
      .expect(400);
    expect(res.body).toMatchObject({ error: "invalid_url", message: expect.stringContaining("receiver.elsewhere.invalid is not in --notify-allow") });
    expect(await storedNotifications(app)).toEqual([]);
  });
});

describe("the warning at start", () => {
  async function started(args: string[], env: Record<string, string> = {}) {
    const proc = spawnSandgate(["--port", "0", ...args], { env });
    await proc.url;
    proc.child.kill("SIGTERM");
    await proc.exited;
    return proc.stderr();
  }

  test("beyond loopback without ADMIN_TOKEN or --notify-allow it says, once, what is open", async () => {
    const both = await started(["--host", "0.0.0.0"]);
    expect(both.match(/sandgate: warning: listening on 0\.0\.0\.0, beyond this machine/g)).toHaveLength(1);
    expect(both).toContain("without ADMIN_TOKEN, anyone who reaches it can use the dashboard");
    expect(both).toContain("without --notify-allow, it sends notifications and receiver checks to any host");
    expect(both).toContain("docs/security.md");
    const tokenOnly = await started(["--host", "0.0.0.0"], { ADMIN_TOKEN: "a-long-enough-admin-token" });
    expect(tokenOnly).not.toContain("ADMIN_TOKEN");
    expect(tokenOnly).toContain("without --notify-allow");
    // random merchant keys are read by anyone when nothing guards the operator API
    expect(await started(["--host", "0.0.0.0", "--merchant-keys", "random"])).toContain(
      "read every merchant's random key (--merchant-keys random isolates nothing without it)",
    );
  });

  test("no warning on loopback, or with both set", async () => {
    expect(await started(["--host", "127.0.0.1"])).not.toContain("warning");
    expect(await started(["--host", "0.0.0.0", "--notify-allow", "hooks.invalid"], { ADMIN_TOKEN: "a-long-enough-admin-token" })).not.toContain("warning");
  });
});
