// Fair notification delivery (docs/notifications.md): the delivery slots are shared between
// merchants, so a merchant whose receiver accepts and never answers delays only its own
// notifications. With 160 of M10001's deliveries hung, TEAM-B's first attempt leaves within 2 s of
// falling due. A real listening Sandgate, with its own 1 s delivery timer.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, describe, expect, test } from "vitest";
import { startSandbox, type Sandbox } from "../src/server/sandbox.js";
import { createFairSlots } from "../src/base/slots.js";
import { directPayment } from "./helpers.js";
import { STORE_NAME, storeOptions } from "./replica-helpers.js";

const servers: Server[] = [];
let sandbox: Sandbox | undefined;
afterAll(async () => {
  for (const s of servers) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
  await sandbox?.close();
});

async function listen(handler: Parameters<typeof createServer>[1]): Promise<string> {
  const server = createServer(handler);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/notify`;
}

describe(`fair notification delivery (${STORE_NAME})`, () => {
  test(
    "160 hung deliveries of M10001: TEAM-B's first attempt leaves within 2 s of falling due, and M10001's hung ones are still being tried",
    { timeout: 60_000 },
    async () => {
      let hungSeen = 0;
      const hung = await listen((req) => {
        hungSeen++;
        req.resume(); // accepted, never answered
      });
      const arrived: number[] = [];
      const quick = await listen((req, res) => {
        arrived.push(performance.now());
        req.resume();
        res.end("OK");
      });
      sandbox = await startSandbox({ port: 0, host: "127.0.0.1", logLevel: "silent", ...storeOptions() });
      const pay = async (fields: Record<string, unknown>) => {
        const res = await fetch(`${sandbox!.url}/v1/authorise`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(directPayment(fields)),
        });
        expect(res.status).toBe(200);
      };
      for (let i = 0; i < 160; i++) await pay({ notify_url: hung });
      // the timer has started M10001's attempts: they hang
      for (const until = Date.now() + 5_000; hungSeen === 0 && Date.now() < until;) await new Promise((r) => setTimeout(r, 50));
      expect(hungSeen).toBeGreaterThan(0);
      const due = performance.now();
      await pay({ merchant_id: "TEAM-B", account_id: "B1", notify_url: quick });
      for (const until = Date.now() + 10_000; arrived.length === 0 && Date.now() < until;) await new Promise((r) => setTimeout(r, 20));
      expect(arrived.length, "TEAM-B's notification never arrived within 10 s").toBe(1);
      expect(arrived[0]! - due).toBeLessThan(2_000);
      // M10001 holds only its share of the slots: a quarter of the eight
      expect(hungSeen).toBeLessThanOrEqual(2);
    },
  );

  test("the slots: each key holds its share at most, and waiting keys take turns", async () => {
    const slots = createFairSlots(4, 2);
    const order: string[] = [];
    const take = (key: string) => slots.acquire(key).then(() => order.push(key));
    await Promise.all([take("A"), take("A")]);
    // A holds its share: a third A waits though two slots are free; B and C do not
    const waiting = [take("A"), take("A"), take("B"), take("C")];
    await new Promise((r) => setTimeout(r, 0));
    expect(order).toEqual(["A", "A", "B", "C"]);
    slots.release("A");
    await new Promise((r) => setTimeout(r, 0));
    expect(order).toEqual(["A", "A", "B", "C", "A"]);
    slots.release("B");
    slots.release("C");
    slots.release("A");
    await Promise.all(waiting);
    expect(order).toEqual(["A", "A", "B", "C", "A", "A"]);
  });
});
