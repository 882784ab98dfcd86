// `sandgate ctl` as a CI script calls it, one process a call: spawn → exit of `node bin/sandgate.js
// ctl health` against a running Sandgate, beside Node's own start (`node -e ''`) measured in the
// same loop, interleaved, so a noisy machine moves both. Medians of `calls` each.
import { spawn } from "node:child_process";
import { join } from "node:path";
import { median } from "./run.js";
import { ROOT } from "./processes.js";

const timed = (args: string[]) =>
  new Promise<number>((done, fail) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, args, { cwd: ROOT, stdio: "ignore" });
    child.on("error", fail);
    child.on("exit", (code) => (code === 0 ? done(performance.now() - t0) : fail(new Error(`${args.join(" ")} exited ${code}`))));
  });

export async function benchCtl(url: string, calls = 20): Promise<{ ctl_ms: number; node_ms: number; calls: number }> {
  const ctl: number[] = [];
  const node: number[] = [];
  for (let i = 0; i < calls; i++) {
    ctl.push(await timed([join(ROOT, "bin", "sandgate.js"), "ctl", "health", "--url", url]));
    node.push(await timed(["-e", ""]));
  }
  return { ctl_ms: median(ctl), node_ms: median(node), calls };
}
