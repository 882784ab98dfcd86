// A real Redis for the shared-store tests and the bench: Debian's redis-server, started on a free
// port with its own folder (append-only file on, fsync every second as Redis does by default, so a
// restart keeps what was written), stopped at the end. startRedisCluster() starts three of them as
// a Redis Cluster (three masters, no replicas, nothing persisted) for tests and the bench.
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer, Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const REDIS_SERVER = "/usr/bin/redis-server";
export const REDIS_CLI = "/usr/bin/redis-cli";
export const HAS_REDIS = existsSync(REDIS_SERVER);

export interface TestRedis {
  url: string;
  port: number;
  /** stops it (SIGTERM: the append-only file is flushed) */
  stop(): Promise<void>;
  /** starts it again on the same port and folder */
  start(): Promise<void>;
  /** stops it for good and removes its folder */
  close(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/**
 * Resolves once something answers +PONG on the port (a Redis loading what it held answers LOADING
 * until it is done). The deadline only turns a Redis that never comes into an error: a loaded
 * machine, or millions of keys to load, make it slow, and that is no failure.
 */
async function answering(port: number, timeoutMs = 60_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = new Socket();
      socket.once("error", () => resolve(false));
      socket.connect(port, "127.0.0.1", () => socket.write("PING\r\n"));
      socket.once("data", (data) => {
        socket.destroy();
        resolve(data.toString().startsWith("+PONG"));
      });
    });
    if (ok) return;
    if (Date.now() > until) throw new Error(`redis-server did not answer on port ${port}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Starts redis-server with these arguments on 127.0.0.1:port and resolves once it answers. */
async function spawnRedis(port: number, args: string[]): Promise<ChildProcess> {
  const child = spawn(REDIS_SERVER, ["--port", String(port), "--bind", "127.0.0.1", ...args], { stdio: "ignore" });
  try {
    await answering(port);
  } catch (error) {
    await stopChild(child);
    throw error;
  }
  return child;
}

/** SIGTERM, then waits for the exit. */
async function stopChild(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  await new Promise<void>((resolve) => {
    child.once("exit", () => resolve());
    child.kill("SIGTERM");
  });
}

export async function startRedis(): Promise<TestRedis> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "sandgate-redis-"));
  let child: ChildProcess | undefined;
  const start = async () => {
    child = await spawnRedis(port, ["--dir", dir, "--appendonly", "yes", "--save", ""]);
  };
  const stop = async () => {
    const running = child;
    child = undefined;
    await stopChild(running);
  };
  await start();
  return {
    url: `redis://127.0.0.1:${port}/0`,
    port,
    stop,
    start,
    async close() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface TestRedisCluster {
  /** the first node (its announced port, if any); a cluster client finds the others from it */
  url: string;
  ports: number[];
  /** stops node i (SIGTERM: its append-only file is flushed); the others go on serving their slots */
  stop(i: number): Promise<void>;
  /** starts node i again on its port, folder and cluster config: it rejoins with its slots and data */
  start(i: number): Promise<void>;
  /** resolves once every node says cluster_state:ok (after a restart of every node, about 2 s) */
  ok(): Promise<void>;
  /** stops every node and removes their folders */
  close(): Promise<void>;
}

/** Whether something can listen on 127.0.0.1:port right now. */
async function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

/** A port P in 20000–29999 with P and its cluster bus port P + 10000 both free, and not in `taken`. */
export async function clusterPort(taken: number[]): Promise<number> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * 10_000);
    if (taken.includes(port)) continue;
    if ((await canListen(port)) && (await canListen(port + 10_000))) return port;
  }
  throw new Error("no free port pair (P, P + 10000) found in 20000–29999");
}

async function redisCli(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(REDIS_CLI, args, { timeout: 10_000 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`redis-cli ${args.join(" ")} failed: ${error.message}\n${stdout}${stderr}`));
      else resolve(stdout);
    });
  });
}

/** Resolves once every node reports cluster_state:ok. */
async function clusterOk(ports: number[], timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const infos = await Promise.all(ports.map((port) => redisCli(["-p", String(port), "cluster", "info"]).catch(() => "")));
    const notOk = ports.filter((_, i) => !infos[i]!.includes("cluster_state:ok"));
    if (notOk.length === 0) return;
    if (Date.now() > until) throw new Error(`Redis Cluster not ok after ${timeoutMs} ms on port(s) ${notOk.join(", ")}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * `announce`: the port each node tells clients to reach it on (a proxy in front of it, as the fault
 * tests put there), given its own; the cluster's own traffic goes to each node's bus port directly.
 */
export async function startRedisCluster(options: { announce?: (port: number) => Promise<number> } = {}): Promise<TestRedisCluster> {
  const announced: number[] = [];
  const ports: number[] = [];
  const dirs: string[] = [];
  const nodes: (ChildProcess | undefined)[] = [];
  const close = async () => {
    await Promise.all(nodes.map(stopChild));
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  };
  // append-only, so a node stopped and started keeps its data; the others serve their slots while
  // one is down (cluster-require-full-coverage no), as a cluster of masters without replicas can
  const spawnNode = (i: number) =>
    spawnRedis(ports[i]!, [
      ...[
        "--cluster-enabled",
        "yes",
        "--cluster-config-file",
        `nodes-${ports[i]}.conf`,
        "--cluster-node-timeout",
        "2000",
        "--cluster-require-full-coverage",
        "no",
      ],
      ...["--dir", dirs[i]!, "--appendonly", "yes", "--save", ""],
      ...(options.announce ? ["--cluster-announce-port", String(announced[i]), "--cluster-announce-bus-port", String(ports[i]! + 10_000)] : []),
    ]);
  try {
    for (let i = 0; i < 3; i++) {
      ports.push(await clusterPort(ports));
      if (options.announce) announced.push(await options.announce(ports[i]!));
      dirs.push(mkdtempSync(join(tmpdir(), "sandgate-redis-cluster-")));
      nodes.push(await spawnNode(i));
    }
    await redisCli(["--cluster", "create", ...ports.map((port) => `127.0.0.1:${port}`), "--cluster-replicas", "0", "--cluster-yes"]);
    await clusterOk(ports);
  } catch (error) {
    await close();
    throw error;
  }
  return {
    url: `redis://127.0.0.1:${announced[0] ?? ports[0]}`,
    ports,
    async stop(i) {
      const running = nodes[i];
      nodes[i] = undefined;
      await stopChild(running);
    },
    async start(i) {
      nodes[i] = await spawnNode(i);
    },
    ok: () => clusterOk(ports),
    close,
  };
}
