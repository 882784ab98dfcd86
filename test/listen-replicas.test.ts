// `sandgate listen` on a team sandbox of replicas: the listener's stream is held by one replica, and
// its answers, the merchant's payments and the operator's calls reach either one (a front sends
// each request to the next). Every notification still comes through the listener, once, recorded
// `via: listen`, whichever replica sends it. Runs in the replicas projects (real redis-server).
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { ACME, directPayment } from "./helpers.js";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { forwarding, replicaSandbox, type Replica } from "./replica-helpers.js";
import { listener, localReceiver, openStream, type Got, type LocalReceiver } from "./listen-helpers.js";
import { until } from "./waiting.js";
import type { SandgateProcess } from "../scripts/sandgate-process.js";
import type { Notification } from "../src/domain/types.js";
import { listenHeaders } from "../src/notify/listen-auth.js";

const HARBOR = { merchant_id: "M10002", account_id: "A20001", key: "harbor_test_key_51d0e8b6" } as const;

/** a notify_url nothing answers at: only the listener can deliver these */
const UNREACHABLE = "http://127.0.0.1:9/notify";

let sandbox: { url: string; replicas: Replica[]; close(): Promise<void> };
let laptop: LocalReceiver;
let listening: SandgateProcess;

beforeAll(async () => {
  sandbox = await replicaSandbox("listen", ["--notify-schedule", "fast"]);
  laptop = await localReceiver();
  listening = await listener(["--url", sandbox.url, "--merchant", ACME.merchant_id, "--key", ACME.key, "--forward-to", laptop.url]);
});
afterAll(async () => {
  listening?.child.kill("SIGTERM");
  await listening?.exited;
  await laptop?.close();
  await sandbox?.close();
});

const idOf = (g: Got) => String((JSON.parse(g.body) as { notification_id: string }).notification_id);

async function notifications(url: string, merchant: string = ACME.merchant_id): Promise<Notification[]> {
  const res = await fetch(`${url}/__sandbox/notifications?merchant_id=${merchant}`);
  return ((await res.json()) as { notifications: Notification[] }).notifications;
}

describe("sandgate listen across replicas", () => {
  test("payments on either replica are delivered through the listener one replica holds, each once; answers reaching the other replica count", async () => {
    expect(listening.stderr()).toContain("ready:");
    for (let i = 0; i < 10; i++) {
      const res = await fetch(`${sandbox.url}/v1/authorise`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(directPayment({ notify_url: UNREACHABLE })),
      });
      expect(await res.text()).toContain("<result_info>0000:Success</result_info>");
    }
    await until(() => laptop.got.length >= 10);
    // nothing more comes: both replicas read every one of them delivered, so none is tried again
    for (const replica of sandbox.replicas) await until(async () => (await notifications(replica.url)).every((n) => n.state === "delivered"));
    const ids = laptop.got.map(idOf);
    expect(new Set(ids).size).toBe(10);
    expect(ids).toHaveLength(10);
    // every attempt was the listener's answer, the first one, as both replicas read the store
    for (const replica of sandbox.replicas) {
      const sent = await notifications(replica.url);
      expect(sent).toHaveLength(10);
      for (const n of sent) {
        expect(n.state).toBe("delivered");
        expect(n.attempts).toHaveLength(1);
        expect(n.attempts[0]).toMatchObject({ http_status: 200, via: "listen" });
      }
    }
  });

  test("an operator's resend on each replica, the one holding the stream and the other, reaches the laptop through the listener", async () => {
    const [first] = await notifications(sandbox.url);
    for (const replica of sandbox.replicas) {
      const before = laptop.got.length;
      const res = await fetch(`${replica.url}/__sandbox/notifications/${first!.notification_id}/resend`, { method: "POST" });
      expect(res.status).toBe(200);
      await until(() => laptop.got.length > before, 10_000);
      expect(idOf(laptop.got.at(-1)!)).toBe(first!.notification_id);
    }
    const [again] = (await notifications(sandbox.replicas[0]!.url)).filter((n) => n.notification_id === first!.notification_id);
    expect(again!.attempts.map((a) => [a.reason, a.via, a.http_status])).toEqual([
      ["first", "listen", 200],
      ["resend", "listen", 200],
      ["resend", "listen", 200],
    ]);
  });
});

describe("a listener's goodbye across replicas", () => {
  /** a payment of Blue Harbor's on `url`, notifying `notifyUrl` */
  const payHarbor = async (url: string, notifyUrl: string) => {
    const res = await fetch(`${url}/v1/authorise`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(directPayment({ merchant_id: HARBOR.merchant_id, account_id: HARBOR.account_id, notify_url: notifyUrl })),
    });
    expect(await res.text()).toContain("<result_info>0000:Success</result_info>");
  };
  /**
   * Blue Harbor's notifications to `notifyUrl` were each posted there by Sandgate on its first attempt,
   * as both replicas read them: none was held for a listener in its grace period (that attempt would
   * have been offered to a stream, `via: "listen"`, and the post a retry)
   */
  const postedAtOnce = async (notifyUrl: string) => {
    for (const replica of sandbox.replicas) {
      const postedThere = async () => (await notifications(replica.url, HARBOR.merchant_id)).filter((n) => n.url === notifyUrl);
      await until(async () => (await postedThere()).filter((n) => n.state === "delivered").length === 2);
      const posted = await postedThere();
      expect(posted).toHaveLength(2);
      for (const n of posted) expect(n.attempts.map((a) => ({ http_status: a.http_status, via: a.via }))).toEqual([{ http_status: 200, via: undefined }]);
    }
  };

  test("said to the replica that does not hold the stream, it ends the stream where it is held", async () => {
    const [holder, other] = sandbox.replicas as [Replica, Replica];
    const stream = "/__sandbox/listen";
    const opened = await openStream(holder.url, HARBOR.merchant_id, HARBOR.key);
    const id = opened.listenerId();
    const bye = `${stream}/${id}`;
    const answer = await fetch(`${other.url}${bye}`, { method: "DELETE", headers: listenHeaders(HARBOR.merchant_id, HARBOR.key, "DELETE", bye) });
    // not held there: told to the replica that holds it, which ends it
    expect(await answer.json()).toEqual({ ended: false });
    await opened.ended;
    // and neither replica keeps Blue Harbor's notifications for a listener any more
    const direct = await localReceiver();
    for (const replica of sandbox.replicas) await payHarbor(replica.url, direct.url);
    await until(() => direct.got.length === 2);
    await postedAtOnce(direct.url);
    await direct.close();
  });

  test("sandgate listen stopped with Ctrl-C through the front: both replicas send the merchant's next notifications to notify_url at once", async () => {
    const direct = await localReceiver();
    const harborLaptop = await localReceiver();
    const harbor = await listener(["--url", sandbox.url, "--merchant", HARBOR.merchant_id, "--key", HARBOR.key, "--forward-to", harborLaptop.url]);
    expect(harbor.stderr()).toContain("ready:");
    harbor.child.kill("SIGINT");
    expect(await harbor.exited).toBe(0);
    expect(harbor.stderr()).toContain(`stopped: ${HARBOR.merchant_id}'s notifications go to their notify_url again`);
    for (const replica of sandbox.replicas) await payHarbor(replica.url, direct.url);
    await until(() => direct.got.length === 2);
    await postedAtOnce(direct.url);
    expect(harborLaptop.got).toEqual([]);
    await direct.close();
    await harborLaptop.close();
  });
});

describe("sandgate listen when the replica holding its stream dies", () => {
  test(
    "the listener reconnects through the load balancer to the other replica; what that replica sent meanwhile, and after, comes through it once",
    { timeout: 60_000 },
    async () => {
      const own = await replicaSandbox("listen-moves", ["--notify-schedule", "fast"]);
      const receiver = await localReceiver();
      // the load balancer: everything to the first replica, until it is gone
      let to = 0;
      const front = createServer(forwarding(() => own.replicas[to]!));
      await new Promise<void>((resolve) => front.listen(0, "127.0.0.1", resolve));
      const frontUrl = `http://127.0.0.1:${(front.address() as AddressInfo).port}`;
      const moving = await listener(["--url", frontUrl, "--merchant", ACME.merchant_id, "--key", ACME.key, "--forward-to", receiver.url]);
      const [holder, other] = own.replicas as [Replica, Replica];
      const pay = async () => {
        const res = await fetch(`${other.url}/v1/authorise`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(directPayment({ notify_url: UNREACHABLE })),
        });
        expect(await res.text()).toContain("<result_info>0000:Success</result_info>");
      };
      try {
        expect(moving.stderr()).toContain("ready:");
        await pay();
        await until(() => receiver.got.length === 1, 15_000);
        // recorded before the first replica goes: whichever replica claimed the attempt (either may), the
        // listener's answer reached the one waiting for it (an attempt the dying replica had claimed is
        // sent again once its claim lapses: docs/replicas.md)
        await until(async () => (await notifications(other.url))[0]?.state === "delivered", 10_000);
        holder.child.kill("SIGKILL");
        to = 1;
        await pay(); // while no replica holds a stream: kept for the listener (10 s of grace)
        await until(() => moving.stderr().includes("connection lost"), 10_000);
        await until(() => moving.stderr().split("ready:").length > 2, 15_000);
        await pay(); // to the stream it holds now
        await until(() => receiver.got.length >= 3);
        // nothing more comes: the replica left reads all three delivered, so none is tried again
        await until(async () => (await notifications(other.url)).every((n) => n.state === "delivered"));
        expect(new Set(receiver.got.map(idOf)).size).toBe(3);
        expect(receiver.got).toHaveLength(3);
        const sent = await notifications(other.url);
        expect(sent).toHaveLength(3);
        for (const n of sent)
          expect({ state: n.state, attempts: n.attempts }).toMatchObject({ state: "delivered", attempts: [{ http_status: 200, via: "listen" }] });
      } finally {
        moving.child.kill("SIGTERM");
        await moving.exited;
        front.closeAllConnections();
        await new Promise((resolve) => front.close(resolve));
        await receiver.close();
        await own.close();
      }
    },
  );
});
