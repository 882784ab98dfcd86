// docs/security.md: attempts past a merchant's account cap cost what any refusal costs. In five
// rounds (so a noisy moment of the machine falls on both sides): TEAM-B's payments beside 1,000
// cheap refusals of the attacker (an empty capture, I0031), then beside 4,000 new accounts of the
// attacker past its cap of 100 (I0015). The figure: TEAM-B's p99 beside the account attempts over
// its p99 beside the other refusals.
import { pay, percentile, timed, type SpeedPromise } from "../promise.js";
import { startSandgate } from "../processes.js";

const ENVELOPE = { encryption_data: "a".repeat(64), merchant_id: "ATTACKER" };

export const accountFlood: SpeedPromise = {
  name: "account-flood",
  doc: "docs/security.md",
  promise: "20,000 account attempts past the cap: another merchant's payment p99 within 2× of its p99 beside the same rate of other refusals",
  bound: 2,
  async measure() {
    const sandgate = await startSandgate();
    const post = async (path: string, body: object) => {
      const res = await fetch(`${sandgate.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
      await res.arrayBuffer();
    };
    /** TEAM-B pays one payment after another until `until` settles (50 at least): each payment's ms */
    const teamB = async (until: Promise<unknown>) => {
      let done = false;
      void until.then(() => (done = true));
      const times: number[] = [];
      while (!done || times.length < 50) times.push(await timed(() => pay(sandgate.url, "TEAM-B", "B1")));
      return times;
    };
    /** `total` requests of the attacker, two at a time */
    const flood = async (total: number, body: () => [string, object]) => {
      let sent = 0;
      const one = async () => {
        while (sent++ < total) await post(...body());
      };
      await Promise.all([one(), one()]);
    };
    try {
      const account = (i: number) => `ACC-${i}-`.padEnd(64, "x");
      for (let i = 0; i < 100; i++) await post("/v1/retrievalTrans", { ...ENVELOPE, account_id: account(i) });
      await teamB(Promise.resolve()); // warm up
      const control: number[] = [];
      const attack: number[] = [];
      let next = 0;
      for (let round = 0; round < 5; round++) {
        control.push(...(await teamB(flood(1_000, () => ["/v1/capture", { ...ENVELOPE, account_id: account(1), capture_orders: [] }]))));
        attack.push(...(await teamB(flood(4_000, () => ["/v1/retrievalTrans", { ...ENVELOPE, account_id: `NEW-${next++}` }]))));
      }
      const [quiet, during] = [percentile(control, 99), percentile(attack, 99)];
      return {
        value: during / quiet,
        unit: "×",
        note: `TEAM-B p99 ${during.toFixed(1)} ms beside 20,000 account attempts, ${quiet.toFixed(1)} ms beside 5,000 other refusals`,
      };
    } finally {
      await sandgate.stop();
    }
  },
};
