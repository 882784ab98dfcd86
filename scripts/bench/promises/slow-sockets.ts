// docs/security.md: a slow client costs its own socket only. 20,000 slow sockets from two other
// loopback addresses (10,000 each, past the default cap of 500 per address): health's p99 from
// this address while they open and for 3 s while they are held, beside its p99 with none.
import { spawn } from "node:child_process";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { health, percentile, sampled, type SpeedPromise } from "../promise.js";
import { ROOT, startSandgate } from "../processes.js";

export const slowSockets: SpeedPromise = {
  name: "slow-sockets",
  doc: "docs/security.md",
  promise: "20,000 slow sockets from two addresses: health's p99 from another stays under 100 ms",
  bound: 100,
  async measure() {
    const sandgate = await startSandgate();
    try {
      const quiet = await sampled(
        () => health(sandgate.url),
        () => true,
        { atLeast: 150 },
      );
      const port = new URL(sandgate.url).port;
      const clients = ["127.0.0.2", "127.0.0.3"].map((from) => {
        const child = spawn(process.execPath, [join(ROOT, "scripts/bench/slow-client.mjs"), port, from, "10000"], { stdio: ["ignore", "pipe", "inherit"] });
        const said = new Promise<{ opened: number; refused: number }>((resolve) => {
          let out = "";
          child.stdout.on("data", (d: Buffer) => {
            out += d.toString();
            if (out.includes("}")) resolve(JSON.parse(out) as { opened: number; refused: number });
          });
        });
        return { child, said };
      });
      let heldSince = 0;
      let counts: { opened: number; refused: number }[] = [];
      void Promise.all(clients.map((c) => c.said)).then((r) => ((counts = r), (heldSince = performance.now())));
      const during = await sampled(
        () => health(sandgate.url),
        () => heldSince > 0 && performance.now() - heldSince > 3_000,
      );
      for (const c of clients) c.child.kill("SIGKILL");
      const opened = counts.reduce((n, c) => n + c.opened, 0);
      const refused = counts.reduce((n, c) => n + c.refused, 0);
      return {
        value: percentile(during, 99),
        unit: "ms",
        quiet: percentile(quiet, 99),
        note: `${opened} opened, ${refused} refused 503, ${during.length} health checks`,
      };
    } finally {
      await sandgate.stop();
    }
  },
};
