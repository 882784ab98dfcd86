// docs/replicas.md: a replica killed (kill -9) delays only the merchants it was serving, for its
// lease (2 s) at most; every other merchant is answered with no gap over 250 ms; a replica stopped
// with SIGTERM hands its turns over at once, with no gap over 250 ms. Two replicas on one Redis,
// merchants paying through both under load (two loops each); the longest any loop waited for an
// answer after the stop, beside the longest before it.
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { startRedis } from "../../redis-server.js";
import { gapsOf, type SpeedPromise } from "../promise.js";
import { startSandgate } from "../processes.js";

/** `stop` applied to replica A while merchant X pays on A and B, and Y on B: each loop's longest gap before and after. */
async function stopUnderLoad(signal: "SIGKILL" | "SIGTERM") {
  const redis = await startRedis();
  const flags = ["--redis-url", redis.url, "--redis-prefix", `stops-${process.pid}:`];
  const [a, b] = await Promise.all([startSandgate(flags), startSandgate(flags)]);
  let stoppedAt = 0;
  const from = performance.now();
  const before = { x: gapsOf(b!.url, "MX", () => from), y: gapsOf(b!.url, "MY", () => from) };
  try {
    // the gaps before the stop (after a second of warming up, not counted)
    await sleep(1_000);
    before.x.reset();
    before.y.reset();
    await sleep(1_000);
    const quiet = await Promise.all([before.x.stop(), before.y.stop()]);
    const xOnA = gapsOf(a!.url, "MX", () => stoppedAt);
    const xOnB = gapsOf(b!.url, "MX", () => stoppedAt);
    const yOnB = gapsOf(b!.url, "MY", () => stoppedAt);
    await sleep(700);
    stoppedAt = performance.now();
    process.kill(a!.pid, signal);
    await sleep(3_000);
    const [, x, y] = await Promise.all([xOnA.stop(), xOnB.stop(), yOnB.stop()]);
    return { x, y, quiet: Math.max(quiet[0].longest, quiet[1].longest) };
  } finally {
    await Promise.all([a!.stop(), b!.stop()]);
    await redis.close();
  }
}

/** one kill -9 run, read by both of its promises */
let killed: ReturnType<typeof stopUnderLoad> | undefined;

export const replicaKilledOthers: SpeedPromise = {
  name: "replica-killed-others",
  doc: "docs/replicas.md",
  promise: "kill -9 a replica under load: every other merchant is answered with no gap over 250 ms",
  bound: 250,
  async measure() {
    const { y, quiet } = await (killed ??= stopUnderLoad("SIGKILL"));
    return { value: y.longest, unit: "ms", quiet, note: `failed: ${y.failed}` };
  },
};

export const replicaKilledOwn: SpeedPromise = {
  name: "replica-killed-own",
  doc: "docs/replicas.md",
  promise: "kill -9 a replica under load: the merchants it served wait for its lease (2 s) at most",
  bound: 2_250,
  async measure() {
    const { x, quiet } = await (killed ??= stopUnderLoad("SIGKILL"));
    return { value: x.longest, unit: "ms", quiet, note: `failed: ${x.failed}` };
  },
};

export const replicaTerminated: SpeedPromise = {
  name: "replica-sigterm",
  doc: "docs/replicas.md",
  promise: "SIGTERM a replica under load: it hands its turns over at once, the other answers with no gap over 250 ms",
  bound: 250,
  async measure() {
    const { x, y, quiet } = await stopUnderLoad("SIGTERM");
    return { value: Math.max(x.longest, y.longest), unit: "ms", quiet, note: `failed: ${x.failed + y.failed}` };
  },
};
