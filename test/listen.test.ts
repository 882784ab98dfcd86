// `sandgate listen` on a shared Sandgate: each developer's listener (its own process, as they run it)
// gets only its merchant's notifications and delivers them to a receiver Sandgate cannot reach; a
// wrong key gets nothing; connections cut mid-stream lose and double nothing; the receiver's 500 is
// retried as any delivery is.
import { readFileSync } from "node:fs";
import { createServer as createTcpServer, connect, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import request from "supertest";
import { startSandbox, type Sandbox } from "../src/server/sandbox.js";
import type { SandgateProcess } from "../scripts/sandgate-process.js";
import { listener, localReceiver, openStream, type Got } from "./listen-helpers.js";
import { until } from "./waiting.js";
import { listenHeaders } from "../src/notify/listen-auth.js";
import { createListeners } from "../src/notify/listeners.js";
import { timing } from "../src/config/timings.js";
import { signatureFields, signatureOf } from "../src/domain/signature.js";
import { ACME, directPayment, makeApp } from "./helpers.js";
import type { Notification } from "../src/domain/types.js";

const HARBOR = { merchant_id: "M10002", account_id: "A20001", key: "harbor_test_key_51d0e8b6" } as const;
/** a notify_url nothing answers at: only a listener can deliver these */
const UNREACHABLE = "http://127.0.0.1:9/notify";
/** data/signature-fields.json's list for notifications, which a receiver verifies with */
const SIGNED = (signatureFields as unknown as Record<string, { response: string[] }>).notification!.response;

/** A TCP proxy in front of Sandgate whose connections can all be cut at once (a flaky network). */
async function cuttingProxy(target: number): Promise<{ url: string; cut(): number; close(): Promise<void> }> {
  const open = new Set<Socket>();
  const server = createTcpServer((client) => {
    const upstream = connect(target, "127.0.0.1");
    for (const s of [client, upstream]) {
      open.add(s);
      s.on("close", () => open.delete(s));
      s.on("error", () => undefined);
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    cut() {
      const n = open.size;
      for (const s of open) s.destroy();
      return n;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of open) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** docs/notifications.md's `sandgate listen` line, as arguments: its --url and --forward-to replaced, $SANDGATE_MERCHANT_KEY from `env` */
function documentedArgs(url: string, forwardTo: string): string[] {
  const line = readFileSync("docs/notifications.md", "utf8")
    .split("\n")
    .find((l) => l.startsWith("npx sandgate listen --url"))!;
  const words = line.replace("npx sandgate listen ", "").split(" ");
  expect(words).toEqual([
    "--url",
    "https://sandgate.team",
    "--merchant",
    ACME.merchant_id,
    "--key",
    '"$SANDGATE_MERCHANT_KEY"',
    "--forward-to",
    "http://localhost:3000/notify",
  ]);
  return words.map((w, i) => (words[i - 1] === "--url" ? url : words[i - 1] === "--forward-to" ? forwardTo : w === '"$SANDGATE_MERCHANT_KEY"' ? ACME.key : w));
}

let sandbox: Sandbox;
const running: SandgateProcess[] = [];

async function pay(merchant: { merchant_id: string; account_id: string }): Promise<string> {
  const res = await fetch(`${sandbox.url}/v1/authorise`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(directPayment({ merchant_id: merchant.merchant_id, account_id: merchant.account_id, notify_url: UNREACHABLE })),
  });
  const xml = await res.text();
  return /<transaction_id>(\d+)<\/transaction_id>/.exec(xml)![1]!;
}

async function notifications(merchant: string): Promise<Notification[]> {
  const res = await fetch(`${sandbox.url}/__sandbox/notifications?merchant_id=${merchant}`);
  return ((await res.json()) as { notifications: Notification[] }).notifications;
}

const bodyOf = (g: Got) => JSON.parse(g.body) as Record<string, unknown>;
const idsOf = (got: Got[]) => got.map((g) => String(bodyOf(g).notification_id));

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, host: "127.0.0.1", logLevel: "silent", seed: "listen", notifySchedule: "fast" });
});
afterAll(async () => {
  for (const p of running) p.child.kill("SIGTERM");
  await Promise.all(running.map((p) => p.exited));
  await sandbox.close();
});

describe("sandgate listen", () => {
  it("a wrong key is refused, told nothing, and gets nothing: the notifications keep Sandgate's own delivery", async () => {
    const mine = await localReceiver();
    const proc = await listener(["--url", sandbox.url, "--merchant", HARBOR.merchant_id, "--key", "not_the_key", "--forward-to", mine.url]);
    expect(await proc.exited).toBe(2);
    expect(proc.stderr()).toContain("listen_refused");
    const before = (await notifications(HARBOR.merchant_id)).length;
    await pay(HARBOR);
    await until(async () => {
      const n = (await notifications(HARBOR.merchant_id)).slice(before);
      return n.length === 1 && n[0]!.attempts.length > 0;
    });
    const [n] = (await notifications(HARBOR.merchant_id)).slice(before);
    expect(n!.attempts[0]).not.toHaveProperty("via");
    expect(n!.attempts[0]!.error).toMatch(/could not deliver/);
    expect(mine.got).toEqual([]);

    // the refusal is the same for a wrong key, an unknown merchant, a stale time and no headers at all
    const path = "/__sandbox/listen";
    const refusals = await Promise.all([
      request(sandbox.url)
        .get(path)
        .set(listenHeaders(HARBOR.merchant_id, "not_the_key", "GET", path)),
      request(sandbox.url)
        .get(path)
        .set(listenHeaders("M99999", "sk_test_M99999x", "GET", path)),
      request(sandbox.url)
        .get(path)
        .set(listenHeaders(HARBOR.merchant_id, HARBOR.key, "GET", path, Date.now() - 301_000)),
      request(sandbox.url).get(path),
      // a signature made for the answers call does not open the stream
      request(sandbox.url)
        .get(path)
        .set(listenHeaders(HARBOR.merchant_id, HARBOR.key, "POST", `${path}/answers`)),
    ]);
    for (const r of refusals) {
      expect(r.status).toBe(401);
      expect(r.body).toEqual(refusals[0]!.body);
      // nothing in it is a signature that would have worked
      expect(r.text).not.toMatch(/[0-9a-f]{64}/);
    }
    expect(refusals[0]!.body.error).toBe("listen_refused");
    await mine.close();
  });

  it("two developers on one Sandgate each receive exactly their own merchant's notifications, byte for byte as signed", async () => {
    const acme = await localReceiver();
    const harbor = await localReceiver();
    // the first one exactly as docs/notifications.md shows it, with this Sandgate and receiver
    running.push(await listener(documentedArgs(sandbox.url, acme.url), { SANDGATE_MERCHANT_KEY: ACME.key }));
    // the key from the environment, as a CI secret gives it
    running.push(
      await listener(["--url", sandbox.url, "--merchant", HARBOR.merchant_id, "--forward-to", harbor.url, "--print"], { SANDGATE_MERCHANT_KEY: HARBOR.key }),
    );
    // a notification made before (the wrong key's, still retrying) comes through the new listener too: only this test's are counted
    const earlier = new Set([...(await notifications(ACME.merchant_id)), ...(await notifications(HARBOR.merchant_id))].map((n) => n.notification_id));
    const ours = (got: Got[]) => got.filter((g) => !earlier.has(String(bodyOf(g).notification_id)));
    const acmePaid = [await pay(ACME), await pay(ACME), await pay(ACME)];
    const harborPaid = [await pay(HARBOR), await pay(HARBOR)];
    await until(() => ours(acme.got).length >= 3 && ours(harbor.got).length >= 2);
    // nothing more comes: Sandgate holds every one of them delivered, so none is tried again
    const ourRecords = async () =>
      [...(await notifications(ACME.merchant_id)), ...(await notifications(HARBOR.merchant_id))].filter((n) => !earlier.has(n.notification_id));
    await until(async () => (await ourRecords()).every((n) => n.state === "delivered"));

    const paidIn = (got: Got[]) =>
      ours(got)
        .map((g) => (bodyOf(g).data as { transaction_id: string }).transaction_id)
        .sort();
    expect(paidIn(acme.got)).toEqual([...acmePaid].sort());
    expect(paidIn(harbor.got)).toEqual([...harborPaid].sort());
    for (const [got, m] of [
      [ours(acme.got), ACME],
      [ours(harbor.got), HARBOR],
    ] as const) {
      for (const g of got) {
        const body = bodyOf(g);
        expect(body.merchant_id).toBe(m.merchant_id);
        // the signature verifies over the body as the receiver got it, with its merchant's key
        expect(body.encryption_data).toBe(signatureOf(SIGNED, body, m.key));
        expect(g.headers["x-sandbox-notification-id"]).toBe(body.notification_id);
        expect(g.headers["x-sandbox-event"]).toBe(body.event);
        expect(g.headers["x-sandbox-attempt"]).toBe("1");
        expect(g.headers["user-agent"]).toBe("Sandgate-Notifications/1");
        expect(g.headers["content-type"]).toBe("application/json");
      }
    }
    // Sandgate recorded each as delivered through the listener, with the receiver's answer
    for (const n of [...(await notifications(ACME.merchant_id)), ...(await notifications(HARBOR.merchant_id))].filter((n) => !earlier.has(n.notification_id))) {
      expect(n.state).toBe("delivered");
      expect(n.attempts).toEqual([expect.objectContaining({ http_status: 200, error: "", via: "listen", response_body: "ok" })]);
    }
    // --print wrote one JSON line per notification, with the body and the answer
    const printed = running[1]!
      .stdout()
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { notification_id: string; answer: { http_status: number } });
    expect(printed.map((p) => p.notification_id).sort()).toEqual(idsOf(harbor.got).sort());
    expect(printed).toHaveLength(harbor.got.length);
    expect(printed.every((p) => p.answer.http_status === 200)).toBe(true);
    for (const p of running.splice(0)) {
      p.child.kill("SIGINT");
      expect(await p.exited).toBe(0);
    }
    await acme.close();
    await harbor.close();
  });

  it("cut mid-stream five times, the listener loses and doubles nothing", async () => {
    // a receiver that takes 40 ms an answer: 30 notifications, two at a time, stream for ~600 ms
    const receiver = await localReceiver(() => 200, 40);
    const proxy = await cuttingProxy(sandbox.port);
    const proc = await listener(["--url", proxy.url, "--merchant", ACME.merchant_id, "--key", ACME.key, "--forward-to", receiver.url]);
    running.push(proc);
    const before = new Set((await notifications(ACME.merchant_id)).map((n) => n.notification_id));
    const ours = () => receiver.got.filter((g) => !before.has(String(bodyOf(g).notification_id)));
    await Promise.all(Array.from({ length: 30 }, () => pay(ACME)));
    await until(() => ours().length > 0);
    let cuts = 0;
    const receivedAtCuts: number[] = [];
    const readies = () => proc.stderr().split("ready:").length - 1;
    for (let round = 0; round < 5; round++) {
      // connected again since the last cut
      await until(() => readies() === round + 1 && sandbox.deps.notifier.listeners.connected()[ACME.merchant_id] === 1);
      // and streaming again: cut after every 3 more received (no more than the two under way arrive while it is away, so
      // however slow the machine, the fifth cut comes with half of the 30 still to come)
      await until(() => ours().length >= 3 * (round + 1));
      if (proxy.cut() > 0) cuts++;
      receivedAtCuts.push(ours().length);
    }
    // mid-stream: the last cut came before the last notification was received
    expect(receivedAtCuts.at(-1)).toBeLessThan(30);
    expect(cuts).toBe(5);
    const fresh = async () => (await notifications(ACME.merchant_id)).filter((n) => !before.has(n.notification_id));
    await until(async () => (await fresh()).every((n) => n.state === "delivered"), 30_000);
    const sent = await fresh();
    expect(sent).toHaveLength(30);
    // counted on the receiving side: every notification once, and nothing else
    expect(idsOf(ours()).sort()).toEqual(sent.map((n) => n.notification_id).sort());
    for (const n of sent) expect(n.attempts).toEqual([expect.objectContaining({ http_status: 200, via: "listen" })]);
    expect(proc.stderr()).toContain("connection lost");
    proc.child.kill("SIGTERM");
    await proc.exited;
    running.splice(running.indexOf(proc), 1);
    await proxy.close();
    await receiver.close();
  });

  it("stopped with Ctrl-C, the listener says goodbye: the merchant's next notification goes to its notify_url at once, not after the grace period", async () => {
    const laptop = await localReceiver();
    const direct = await localReceiver();
    const proc = await listener(["--url", sandbox.url, "--merchant", HARBOR.merchant_id, "--key", HARBOR.key, "--forward-to", laptop.url]);
    expect(sandbox.deps.notifier.listeners.connected()[HARBOR.merchant_id]).toBe(1);
    proc.child.kill("SIGINT");
    expect(await proc.exited).toBe(0);
    expect(proc.stderr()).toContain(`stopped: ${HARBOR.merchant_id}'s notifications go to their notify_url again`);
    expect(sandbox.deps.notifier.listeners.has(HARBOR.merchant_id)).toBe(false);
    const res = await fetch(`${sandbox.url}/v1/authorise`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(directPayment({ merchant_id: HARBOR.merchant_id, account_id: HARBOR.account_id, notify_url: direct.url })),
    });
    expect(await res.text()).toContain("0000");
    await until(() => direct.got.length === 1);
    expect(laptop.got).toEqual([]);
    // posted by Sandgate itself on its first attempt: not held for a listener in its grace period
    // (that attempt would have been offered to the stream, `via: "listen"`, and the post a retry)
    const posted = async () => (await notifications(HARBOR.merchant_id)).find((x) => x.url === direct.url);
    await until(async () => (await posted())?.state === "delivered");
    const n = await posted();
    expect(n!.attempts).toHaveLength(1);
    expect(n!.attempts[0]).not.toHaveProperty("via");
    await laptop.close();
    await direct.close();
  });

  it("the goodbye is the merchant's own: it needs the key, and ends no other listener", async () => {
    const stream = await openStream(sandbox.url, HARBOR.merchant_id, HARBOR.key);
    const id = stream.listenerId();
    expect(id).toMatch(/^lst_[0-9a-f]{24}$/);
    const path = `/__sandbox/listen/${id}`;
    // unsigned, or signed for another path: 401; signed with another merchant's key: it has no listener of that id. The stream stays
    const refused = await Promise.all([
      request(sandbox.url).delete(path),
      request(sandbox.url)
        .delete(path)
        .set(listenHeaders(ACME.merchant_id, ACME.key, "DELETE", path)),
      request(sandbox.url)
        .delete(path)
        .set(listenHeaders(HARBOR.merchant_id, HARBOR.key, "DELETE", "/__sandbox/listen")),
    ]);
    expect(refused.map((r) => r.status)).toEqual([401, 200, 401]);
    expect(refused[1]!.body).toEqual({ ended: false });
    expect(sandbox.deps.notifier.listeners.connected()[HARBOR.merchant_id]).toBe(1);
    const bye = await request(sandbox.url)
      .delete(path)
      .set(listenHeaders(HARBOR.merchant_id, HARBOR.key, "DELETE", path));
    expect(bye.status).toBe(200);
    expect(bye.body).toEqual({ ended: true });
    // the stream ends
    await stream.ended;
    expect(sandbox.deps.notifier.listeners.has(HARBOR.merchant_id)).toBe(false);
  });

  it("the receiver's 500 is retried on Sandgate's schedule, through the listener", async () => {
    const seen = new Set<string>();
    // the first request of each notification fails; the retry is acknowledged
    const receiver = await localReceiver((g) => {
      const id = String(bodyOf(g).notification_id);
      if (seen.has(id)) return 200;
      seen.add(id);
      return 500;
    });
    const proc = await listener(["--url", sandbox.url, "--merchant", HARBOR.merchant_id, "--key", HARBOR.key, "--forward-to", receiver.url]);
    running.push(proc);
    const before = (await notifications(HARBOR.merchant_id)).length;
    await pay(HARBOR);
    await until(async () => (await notifications(HARBOR.merchant_id)).slice(before)[0]?.state === "delivered");
    const [n] = (await notifications(HARBOR.merchant_id)).slice(before);
    expect(n!.attempts.map((a) => [a.attempt, a.reason, a.http_status, a.via])).toEqual([
      [1, "first", 500, "listen"],
      [2, "retry", 200, "listen"],
    ]);
    expect(n!.attempts[0]!.error).toBe("the receiver answered HTTP 500 (a 2xx acknowledges)");
    // --notify-schedule fast: the retry came a second (of the sandbox clock) after the failure
    expect(Date.parse(n!.attempts[1]!.at) - Date.parse(n!.attempts[0]!.at)).toBeGreaterThanOrEqual(1_000);
    const mine = receiver.got.filter((g) => bodyOf(g).notification_id === n!.notification_id);
    expect(mine.map((g) => g.headers["x-sandbox-attempt"])).toEqual(["1", "2"]);
    proc.child.kill("SIGTERM");
    await proc.exited;
    running.splice(running.indexOf(proc), 1);
    await receiver.close();
  });

  it("a receiver check from the shared Sandgate reaches the laptop's receiver through the listener", async () => {
    const receiver = await localReceiver();
    const proc = await listener(["--url", sandbox.url, "--merchant", ACME.merchant_id, "--key", ACME.key, "--forward-to", receiver.url]);
    running.push(proc);
    // the URL is the laptop's, out of the Sandgate's reach: without the listener nothing would arrive
    const report = await sandbox.admin.checkReceiver({ url: UNREACHABLE, merchant_id: ACME.merchant_id });
    const probes = (await (await fetch(`${sandbox.url}/__sandbox/notifications?check=${report.check}`)).json()) as { notifications: Notification[] };
    const attempts = probes.notifications.flatMap((n) => n.attempts);
    expect(attempts.length).toBeGreaterThan(10);
    expect(attempts.map((a) => [a.via, a.http_status, a.error])).toEqual(attempts.map(() => ["listen", 200, ""]));
    // every probe request arrived, as the check built it (the malformed ones too)
    expect(receiver.got).toHaveLength(attempts.length);
    expect(receiver.got.some((g) => String(g.headers["content-type"]).startsWith("text/plain"))).toBe(true);
    // a receiver that acknowledges everything fails the forged probes: the check judged what the laptop answered
    expect(report.passed).toBe(false);
    proc.child.kill("SIGTERM");
    await proc.exited;
    running.splice(running.indexOf(proc), 1);
    await receiver.close();
  });

  it("a receiver check through the listener stops at once when the laptop's receiver is not running, as it does on a direct check", async () => {
    // a port nothing listens on: the listener's POST is refused
    const closed = await localReceiver();
    await closed.close();
    const proc = await listener(["--url", sandbox.url, "--merchant", ACME.merchant_id, "--key", ACME.key, "--forward-to", closed.url]);
    running.push(proc);
    const report = await sandbox.admin.checkReceiver({ url: UNREACHABLE, merchant_id: ACME.merchant_id });
    // the first probe found it unreachable: no probe is judged, and the rest are not sent
    expect(report.stopped).toBe("receiver unreachable: ECONNREFUSED");
    expect(report.probes).toHaveLength(0);
    expect(report.not_run.length).toBeGreaterThan(5);
    proc.child.kill("SIGTERM");
    await proc.exited;
    running.splice(running.indexOf(proc), 1);
  });

  it("an answer for another merchant's attempt, or one already answered, records nothing", async () => {
    const path = "/__sandbox/listen/answers";
    const answer = (m: { merchant_id: string; key: string }, offer: string) =>
      request(sandbox.url)
        .post(path)
        .set(listenHeaders(m.merchant_id, m.key, "POST", path))
        .send({ offer, http_status: 200 });
    const n = (await notifications(ACME.merchant_id))[0]!;
    expect((await answer(HARBOR, `${n.notification_id}.1`)).body).toEqual({ recorded: false });
    expect((await answer(ACME, `${n.notification_id}.1`)).body).toEqual({ recorded: false });
    const bad = await request(sandbox.url)
      .post(path)
      .set(listenHeaders(ACME.merchant_id, ACME.key, "POST", path))
      .send({ offer: "x", http_status: 99 });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe("invalid_answer");
  });
});

describe("a listener's bounds and its stream", () => {
  it("a merchant may hold 4 listeners: the fifth is refused 429, and taken once one has gone", async () => {
    // a merchant provisioned by its id (--merchant-keys id), which no other test listens for
    const [merchant, key] = ["M70001", "sk_test_M70001"];
    const open = await Promise.all([1, 2, 3, 4].map(() => openStream(sandbox.url, merchant, key)));
    expect(open.map((o) => o.status)).toEqual([200, 200, 200, 200]);
    const fifth = await openStream(sandbox.url, merchant, key);
    expect(fifth.status).toBe(429);
    expect(JSON.parse(fifth.text())).toMatchObject({ error: "too_many_listeners" });
    expect(JSON.parse(fifth.text()).message).toContain("4 listeners");
    // another merchant is not held back by it
    const other = await openStream(sandbox.url, "M70002", "sk_test_M70002");
    expect(other.status).toBe(200);
    other.close();
    open[0]!.close();
    await until(async () => {
      const again = await openStream(sandbox.url, merchant, key);
      again.close();
      return again.status === 200;
    });
    for (const o of open) o.close();
  });

  it("a process takes 256 listeners in all", () => {
    const hub = createListeners();
    const stream = { send: () => undefined, end: () => undefined };
    for (let i = 0; i < 256; i++) expect(hub.connect(`M${Math.floor(i / 4)}`, stream)).toHaveProperty("close");
    expect(hub.connect("M999", stream)).toEqual({ refused: "this Sandgate has 256 listeners connected, the most it takes" });
  });

  it("an attempt the listener leaves unanswered fails after its allowance and is retried; the stream says it is alive every heartbeat", async () => {
    // the production allowance is 15 s (a receiver's 5 s and 10 s for the listener) and the heartbeat 15 s: shrunk here
    vi.stubEnv("SANDGATE_TIMINGS", JSON.stringify({ notifyTimeoutMs: 200, listenSlackMs: 300, listenHeartbeatMs: 100 }));
    // a Sandgate of its own: no other test's listener of the merchant answers for this one
    const own = await startSandbox({ port: 0, host: "127.0.0.1", logLevel: "silent", seed: "listen-silent" });
    try {
      const stream = await openStream(own.url, HARBOR.merchant_id, HARBOR.key);
      expect(stream.status).toBe(200);
      const res = await fetch(`${own.url}/v1/authorise`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(directPayment({ merchant_id: HARBOR.merchant_id, account_id: HARBOR.account_id, notify_url: UNREACHABLE })),
      });
      expect(await res.text()).toContain("0000:Success");
      await until(() => stream.text().includes("event: notification"));
      const notification = async () => {
        const r = await fetch(`${own.url}/__sandbox/notifications?merchant_id=${HARBOR.merchant_id}`);
        return ((await r.json()) as { notifications: Notification[] }).notifications[0]!;
      };
      await until(async () => (await notification()).attempts.length > 0);
      const n = await notification();
      const [first] = n.attempts;
      expect(first).toMatchObject({
        attempt: 1,
        via: "listen",
        http_status: null,
        error: "no answer through sandgate listen within 0.5 s (the listener was connected)",
      });
      // a failed attempt as any other: the notification waits for its retry
      expect(n).toMatchObject({ state: "pending", failures: 1 });
      expect(Date.parse(n.due_at!)).toBeGreaterThan(Date.parse(first!.at));
      expect(first!.duration_ms).toBeGreaterThanOrEqual(500);
      await until(() => stream.text().includes(": still here\n\n"));
      stream.close();
    } finally {
      await own.close();
      vi.unstubAllEnvs();
    }
  });

  it("a browser page under a foreign Host cannot open a merchant's stream, even with its headers", async () => {
    const { app } = await makeApp({ allowedHosts: "sandbox.corp.example" });
    const path = "/__sandbox/listen";
    const res = await request(app)
      .get(path)
      .set({
        ...listenHeaders(ACME.merchant_id, ACME.key, "GET", path),
        host: "rebind.test:8080",
        origin: "http://rebind.test:8080",
        "sec-fetch-site": "same-origin",
        "sec-fetch-mode": "cors",
      });
    expect(res.status).toBe(403);
    expect(res.body.error).toBe("host_not_allowed");
  });
});

describe("sandgate listen beside ADMIN_TOKEN", () => {
  it("needs the merchant's key, not the token: the token alone is refused, the key alone is taken", async () => {
    const { app } = await makeApp({ adminToken: "a-team-token-of-enough-length" });
    const path = "/__sandbox/listen/answers";
    const withKey = await request(app)
      .post(path)
      .set(listenHeaders(ACME.merchant_id, ACME.key, "POST", path))
      .send({ offer: "ntf_x.1", http_status: 200 });
    expect(withKey.status).toBe(200);
    expect(withKey.body).toEqual({ recorded: false });
    const withToken = await request(app).post(path).set("authorization", "Bearer a-team-token-of-enough-length").send({ offer: "ntf_x.1", http_status: 200 });
    expect(withToken.status).toBe(401);
    expect(withToken.body.error).toBe("listen_refused");
    // and the key opens nothing else
    const other = await request(app)
      .get("/__sandbox/notifications")
      .set(listenHeaders(ACME.merchant_id, ACME.key, "GET", "/__sandbox/notifications"));
    expect(other.status).toBe(401);
    expect(other.body.error).toBe("unauthorised");
  });
});

describe("listeners", () => {
  it("a merchant whose listener went keeps its notifications for the grace period, then Sandgate delivers them itself", () => {
    let now = 1_000_000;
    const hub = createListeners({ now: () => now });
    expect(hub.has("M1")).toBe(false);
    const c = hub.connect("M1", { send: () => undefined, end: () => undefined });
    expect(hub.has("M1")).toBe(true);
    if ("close" in c) c.close();
    now += timing("listenGraceMs") - 1;
    expect(hub.has("M1")).toBe(true);
    now += 1;
    expect(hub.has("M1")).toBe(false);
  });

  it("a listener that says goodbye leaves no grace period; another merchant's listener id ends nothing", () => {
    const hub = createListeners({ now: () => 1_000_000 });
    let ended = 0;
    const a = hub.connect("M1", { send: () => undefined, end: () => ended++ });
    const b = hub.connect("M2", { send: () => undefined, end: () => ended++ });
    if (!("id" in a) || !("id" in b)) throw new Error("refused");
    expect(a.id).not.toBe(b.id);
    // M2 cannot end M1's listener with its id, nor M1 with an id it does not have
    expect(hub.leave("M2", a.id)).toBe(false);
    expect(hub.leave("M1", "lst_0")).toBe(false);
    expect(ended).toBe(0);
    expect(hub.leave("M1", a.id)).toBe(true);
    expect(ended).toBe(1);
    // gone at once, not in 10 s; its connection's end afterwards changes nothing
    expect(hub.has("M1")).toBe(false);
    a.close();
    expect(hub.has("M1")).toBe(false);
    expect(hub.leave("M1", a.id)).toBe(false);
    expect(hub.connected()).toEqual({ M2: 1 });
  });

  it("an attempt waiting while the listener is away is sent to it when it is back", async () => {
    const hub = createListeners();
    const offer = { id: "ntf_1.1", notification_id: "ntf_1", attempt: 1, event: "e", url: "u", headers: {}, body: "{}", timeout_ms: 5_000 };
    const outcome = hub.offer("M1", offer, 5_000);
    const sent: string[] = [];
    hub.connect("M1", { send: (o) => sent.push(o.id), end: () => undefined });
    expect(sent).toEqual(["ntf_1.1"]);
    expect(await hub.answer("M1", "ntf_1.1", { http_status: 204, error: "", duration_ms: 3, response_body: "" })).toBe(true);
    expect(await outcome).toMatchObject({ http_status: 204, error: "" });
    expect(await hub.answer("M1", "ntf_1.1", { http_status: 500, error: "", duration_ms: 3, response_body: "" })).toBe(false);
  });
});
