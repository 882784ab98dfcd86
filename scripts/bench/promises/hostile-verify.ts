// docs/security.md: one tester's heavy call cannot hold the team's sandbox. A 20 MB recording whose
// HTML answer opens 3.4 million forms and closes none, and three ordinary verifies, posted at once:
// health and a payment, one after the other every 20 ms, until all four are answered. The figure:
// the slower of health's and the payment's p99 meanwhile, beside the same loop with no verify.
// (`npm run bench:hostile-verify` gives the whole picture over several reps: p50, max, RSS, CPU.)
import { health, pay, percentile, sampled, type SpeedPromise } from "../promise.js";
import { startSandgate } from "../processes.js";
import { hostileRecordings } from "../hostile-recording.js";

export const hostileVerify: SpeedPromise = {
  name: "hostile-verify",
  doc: "docs/security.md",
  promise: "a 20 MB hostile recording and three more verifies hold neither health nor payments: their p99 stays under 250 ms",
  bound: 250,
  async measure() {
    const sandgate = await startSandgate();
    try {
      await pay(sandgate.url);
      const { normal, hostile } = await hostileRecordings(sandgate.url);
      const both = () => health(sandgate.url).then(() => pay(sandgate.url));
      const quiet = await sampled(both, () => true, { atLeast: 50 });
      const verify = (body: string) =>
        fetch(`${sandgate.url}/__sandbox/verify`, { method: "POST", headers: { "content-type": "application/json" }, body }).then((r) => r.status);
      let done = false;
      const statuses = Promise.all([verify(hostile), verify(normal), verify(normal), verify(normal)]).finally(() => (done = true));
      const during = await sampled(both, () => done);
      return {
        value: percentile(during, 99),
        unit: "ms",
        quiet: percentile(quiet, 99),
        note: `health and a payment, one after the other; verifies answered ${(await statuses).join(", ")}`,
      };
    } finally {
      await sandgate.stop();
    }
  },
};
