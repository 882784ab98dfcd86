// docs/notifications.md and docs/security.md: one merchant's hung receiver delays only its own
// notifications. 160 of M10001's deliveries to a receiver that accepts and never answers; then
// TEAM-B pays with a notify_url that answers at once: ms from TEAM-B's payment answered (its
// notification due) to its first attempt arriving, beside the same with no hung receiver.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { pay, type SpeedPromise } from "../promise.js";
import { startSandgate } from "../processes.js";

async function receiver(handle: (req: IncomingMessage, res: ServerResponse) => void) {
  const server = createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/notify`,
    close: () => (server.closeAllConnections(), new Promise((resolve) => server.close(resolve))),
  };
}

/** Waits for `check` (every 5 ms), at most `ms`. */
async function until(check: () => boolean, ms: number) {
  for (const end = performance.now() + ms; !check() && performance.now() < end;) await sleep(5);
}

export const hungReceivers: SpeedPromise = {
  name: "hung-receivers",
  doc: "docs/notifications.md",
  promise: "with 160 of one merchant's deliveries hung, another merchant's first attempt leaves within 2 s of falling due",
  bound: 2_000,
  async measure() {
    let hungSeen = 0;
    const hung = await receiver((req) => (hungSeen++, req.resume()));
    const arrivals: number[] = [];
    const quick = await receiver((req, res) => (arrivals.push(performance.now()), req.resume(), res.end("OK")));
    const sandgate = await startSandgate();
    try {
      /** TEAM-B pays; ms until its notification arrives */
      const teamB = async () => {
        const before = arrivals.length;
        await pay(sandgate.url, "TEAM-B", "B1", { notify_url: quick.url });
        const due = performance.now();
        await until(() => arrivals.length > before, 30_000);
        return arrivals.length > before ? arrivals.at(-1)! - due : Infinity;
      };
      const quiet = await teamB();
      for (let i = 0; i < 160; i++) await pay(sandgate.url, "M10001", "A10001", { notify_url: hung.url });
      await until(() => hungSeen > 0, 10_000);
      const value = await teamB();
      return { value, unit: "ms", quiet, note: `${hungSeen} of M10001's attempts hanging` };
    } finally {
      await sandgate.stop();
      await hung.close();
      await quick.close();
    }
  },
};
