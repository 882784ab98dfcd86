// The processes the bench measures, each started as its own process (never in the load
// generator's): Sandgate as users run it (node dist/sandgate.js, the bundle `npm start` runs) and
// the Express floor.
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { availableParallelism } from "node:os";
import { readdirSync, readFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { resolve } from "node:path";
import { NODE_FLAGS } from "../node-flags.js";

export const ROOT = resolve(import.meta.dirname, "..", "..");

export interface Service {
  url: string;
  pid: number;
  /** resident set size now, in MB (Linux /proc) */
  rssMb(): number;
  /** CPU time the process has used so far (user + system, every thread), in µs (Linux /proc) */
  cpuMicros(): number;
  stop(): Promise<void>;
}

/** the CPU the servers run on, after pin() */
let serverCpu: string | undefined;

/**
 * `--pin`: every server started from now on runs on the last CPU, and this process (the load
 * generator, autocannon's thread included) on the others, so a server's latency is its own and not
 * the time it waited for the load generator to leave its core. Linux `taskset` (util-linux).
 */
export function pin(): void {
  const cpus = availableParallelism();
  if (cpus < 2) throw new Error("--pin needs at least 2 CPUs: one for the servers, one for the load generator");
  execFileSync("taskset", ["-a", "-p", "-c", `0-${cpus - 2}`, String(process.pid)], { stdio: "ignore" });
  serverCpu = String(cpus - 1);
}

function launch(args: string[]): { child: ChildProcess; listening: Promise<string> } {
  // the load generator's environment must not configure the server (vitest's BASE_URL, say)
  const { BASE_URL: _b, DATA_FILE: _d, PORT: _p, ...env } = process.env;
  // taskset execs node in its own process: the pid is the server's
  const child = spawn(serverCpu ? "taskset" : process.execPath, serverCpu ? ["-c", serverCpu, process.execPath, ...args] : args, {
    cwd: ROOT,
    env: { ...env, LOG_LEVEL: "silent" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  const listening = new Promise<string>((done, fail) => {
    child.stdout!.on("data", (d: Buffer) => {
      out += d.toString();
      const m = /listening on (http:\/\/[^\s,]+)/.exec(out);
      if (m) done(m[1]!);
    });
    child.stderr!.on("data", (d: Buffer) => (err += d.toString()));
    child.on("exit", (code) => fail(new Error(`${args.join(" ")} exited ${code}: ${err.slice(0, 500)}`)));
  });
  return { child, listening };
}

const rssOf = (pid: number) => {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Math.round(Number(m[1]) / 1024) : NaN;
};

const TICK_MICROS = 1_000_000 / 100; // USER_HZ is 100 on Linux
/**
 * CPU time of every thread of the process and of its children (`--workers`: the primary and its
 * workers), in µs: from each thread's schedstat (ns: a W2 run of ~150 ms is not 15 ticks ± 1), else
 * from /proc/<pid>/stat (10 ms ticks). The server's threads (its main thread, V8's and libuv's) and
 * workers live as long as it does, so none is missed for having ended.
 */
const cpuOf = (pid: number): number => ownCpuOf(pid) + childrenOf(pid).reduce((sum, child) => sum + cpuOf(child), 0);

const childrenOf = (pid: number) =>
  readdirSync(`/proc/${pid}/task`).flatMap((tid) => {
    try {
      return readFileSync(`/proc/${pid}/task/${tid}/children`, "utf8").split(" ").filter(Boolean).map(Number);
    } catch {
      return []; // a thread that ended, or a kernel without the file
    }
  });

const ownCpuOf = (pid: number) => {
  try {
    let ns = 0;
    for (const tid of readdirSync(`/proc/${pid}/task`)) ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[0]);
    if (Number.isFinite(ns)) return ns / 1000;
  } catch {
    // no schedstat on this kernel
  }
  // fields after the command name (which may hold spaces): utime and stime are the 12th and 13th
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) * TICK_MICROS;
};

/** `node <args>` (a script and its flags) started and listening; LOG_LEVEL silent, the caller's env otherwise. */
export async function started(args: string[]): Promise<Service> {
  const { child, listening } = launch(args);
  const url = await listening;
  return {
    url,
    pid: child.pid!,
    rssMb: () => rssOf(child.pid!),
    cpuMicros: () => cpuOf(child.pid!),
    stop: () =>
      new Promise<void>((done) => {
        if (child.exitCode !== null || child.signalCode !== null) return done(); // gone already (killed by a signal: no exit code)
        child.on("exit", () => done());
        child.kill("SIGTERM");
      }),
  };
}

/**
 * as `npm start` and the Docker image run it (with NODE_FLAGS, start-up flags: see scripts/node-flags.ts);
 * `bundle`: this checkout's by default, or another build's (bench --base)
 */
export const sandgateArgs = (extra: string[] = [], bundle = "dist/sandgate.js") => [
  ...NODE_FLAGS,
  bundle,
  "--port",
  "0",
  "--host",
  "127.0.0.1",
  "--seed",
  "bench",
  ...extra,
];
export const floorArgs = () => ["scripts/bench/floor.mjs", "--port", "0"];
/** the lowest floor: node:http alone (scripts/bench/floor-http.mjs) */
export const httpFloorArgs = () => ["scripts/bench/floor-http.mjs", "--port", "0"];

export const startSandgate = (extra: string[] = [], bundle?: string) => started(sandgateArgs(extra, bundle));
export const startFloor = () => started(floorArgs());
export const startHttpFloor = () => started(httpFloorArgs());

/** Spawn → first 200 answer to `probe` (a POST with that body), in ms; the process is then stopped. */
export async function coldStart(args: string[], probe: { path: string; body: string }): Promise<{ ms: number; rssMb: number }> {
  const t0 = performance.now();
  const { child } = launch(args);
  // the port is only known once it prints it; poll fast until the first answer
  let url = "";
  child.stdout!.on("data", (d: Buffer) => {
    const m = /listening on (http:\/\/[^\s,]+)/.exec(d.toString());
    if (m) url = m[1]!;
  });
  for (;;) {
    if (url) {
      const res = await fetch(`${url}${probe.path}`, { method: "POST", headers: { "content-type": "application/json" }, body: probe.body }).catch(
        () => undefined,
      );
      if (res?.status === 200) {
        await res.text();
        break;
      }
    }
    await new Promise((r) => setTimeout(r, 2));
  }
  const ms = performance.now() - t0;
  const rssMb = rssOf(child.pid!);
  await new Promise<void>((done) => {
    child.on("exit", () => done());
    child.kill("SIGTERM");
  });
  return { ms, rssMb };
}
