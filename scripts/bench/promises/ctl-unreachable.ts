// docs/ctl.md: a Sandgate out of reach is said at once (exit 3 with the reason), not after the call's
// 60 s timeout. The figure: spawn → exit of `sandgate ctl scenario list` against a closed port,
// beside `sandgate ctl --version` (the CLI's own start) in the same loop; medians of 10.
import { spawn } from "node:child_process";
import { join } from "node:path";
import { freePort } from "../../redis-server.js";
import { timed, type SpeedPromise } from "../promise.js";
import { ROOT } from "../processes.js";
import { median } from "../run.js";

const ctl = (args: string[]) =>
  timed(
    () =>
      new Promise<void>((done, fail) => {
        const child = spawn(process.execPath, [join(ROOT, "bin", "sandgate.js"), ...args], { cwd: ROOT, stdio: "ignore" });
        child.on("error", fail);
        child.on("exit", () => done());
      }),
  );

export const ctlUnreachable: SpeedPromise = {
  name: "ctl-unreachable",
  doc: "docs/ctl.md",
  promise: "a closed port exits 3 at once (under 2 s), not after the 60 s call timeout",
  bound: 2_000,
  async measure() {
    const url = `http://127.0.0.1:${await freePort()}`;
    const closed: number[] = [];
    const start: number[] = [];
    for (let i = 0; i < 10; i++) {
      closed.push(await ctl(["ctl", "scenario", "list", "--url", url]));
      start.push(await ctl(["--version"]));
    }
    return { value: median(closed), unit: "ms", quiet: median(start), note: "quiet: sandgate --version" };
  },
};
