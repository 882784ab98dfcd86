// Sandgate processes sharing one Redis (the "replicas" test project): started with the private
// build, answering through one address that sends each request to the next replica in turn.
import { spawn, type ChildProcess } from "node:child_process";
import type { AddressInfo } from "node:net";
import { createServer, request as httpRequest, type IncomingMessage, type RequestListener, type ServerResponse } from "node:http";
import { Redis, Cluster } from "ioredis";
import { afterAll, inject } from "vitest";
import { OPTIONS, type Config } from "../src/config/config.js";
import type { SandboxOptions } from "../src/server/sandbox.js";

/** Set in the replicas project: the lifecycle, concurrency and scenario suites then run on two processes sharing Redis. */
export const REPLICA_MODE = Boolean(inject("redisUrl"));

export interface Replica {
  url: string;
  child: ChildProcess;
  /** stderr so far (a start that failed says why there) */
  stderr(): string;
}

const running = new Set<ChildProcess>();
afterAll(() => {
  for (const child of running) child.kill("SIGKILL");
  running.clear();
});

/** Starts `node dist/main.js` (the private build) with these flags; resolves with its address. */
export function spawnSandgate(args: string[], env: Record<string, string> = {}): Promise<Replica> {
  const child = spawn(process.execPath, [inject("sandgateMain"), "--port", "0", "--host", "127.0.0.1", "--log-level", "warn", ...args], {
    env: { PATH: process.env.PATH ?? "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  running.add(child);
  child.once("exit", () => running.delete(child));
  let out = "";
  let err = "";
  child.stderr!.on("data", (d: Buffer) => (err += d.toString()));
  return new Promise((resolve, reject) => {
    child.stdout!.on("data", (d: Buffer) => {
      out += d.toString();
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve({ url: m[1]!, child, stderr: () => err });
    });
    child.once("exit", (code) => reject(new Error(`sandgate exited ${code} before listening: ${err}`)));
  });
}

/** The flags that put a Sandgate on the run's Redis (a Redis Cluster in "replicas (cluster)"), under `prefix`. */
export const redisFlags = (prefix: string, url = inject("redisUrl"), cluster = inject("redisCluster")) => [
  "--redis-url",
  url,
  ...(cluster ? ["--redis-cluster"] : []),
  "--redis-prefix",
  prefix,
];

let prefixes = 0;
/** A Redis key prefix no other sandbox of this run uses. */
export const freshPrefix = () => `t${process.pid}-${++prefixes}:`;

/** Where a suite that runs on every store keeps its sandbox: the run's Redis on a fresh prefix in the replicas projects, memory otherwise. */
export const storeOptions = (): Pick<SandboxOptions, "redisUrl" | "redisPrefix" | "redisCluster"> =>
  REPLICA_MODE ? { redisUrl: inject("redisUrl"), redisPrefix: freshPrefix(), redisCluster: inject("redisCluster") } : {};
/** The same as a process's flags. */
export const storeFlags = (): string[] => (REPLICA_MODE ? redisFlags(freshPrefix()) : []);
/** Which store a suite runs on, for its names. */
export const STORE_NAME = !REPLICA_MODE ? "in memory" : inject("redisCluster") ? "on a Cluster" : "on Redis";

/** Flags for the options a test would pass to createDeps; what a process cannot take (a test clock) fails the test. */
function flagsOf(options: SandboxOptions): string[] {
  const flags: string[] = [];
  for (const [key, value] of Object.entries(options)) {
    if (value === undefined || key === "logLevel" || key === "logger" || key === "watchScenarios") continue;
    const spec = OPTIONS.find((o) => o.key === (key as keyof Config));
    if (!spec) throw new Error(`makeApp({ ${key} }) cannot be given to a separate process (replicas project)`);
    if (spec.kind === "boolean") flags.push(`${spec.flag}`);
    else flags.push(spec.flag, String(value));
  }
  return flags;
}

/** Two replicas on a fresh prefix of the run's Redis. */
async function replicaPair(options: SandboxOptions = {}): Promise<[Replica, Replica]> {
  const args = [...redisFlags(freshPrefix()), ...flagsOf(options)];
  // started together: whichever takes the first turn seeds the prefix, the other loads it
  return Promise.all([spawnSandgate(args), spawnSandgate(args)]);
}

/** One handler in front of the replicas: each request goes to the next one in turn (what supertest is given as `app`). */
function alternating(replicas: Replica[]): RequestListener {
  let next = 0;
  return forwarding(() => replicas[next++ % replicas.length]!);
}

/**
 * A load balancer's handler: each request goes to the replica `pick` names. As a real one does, an
 * answer cut off by its replica (killed mid-stream, say) cuts the client's connection too.
 */
export function forwarding(pick: () => Replica): RequestListener {
  return (req: IncomingMessage, res: ServerResponse) => {
    const target = new URL(req.url ?? "/", pick().url);
    const forward = httpRequest(target, { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
      answer.on("close", () => {
        if (!answer.complete) res.destroy();
      });
    });
    forward.on("error", (err) => {
      if (res.headersSent) return void res.destroy();
      res.writeHead(502, { "content-type": "text/plain" });
      res.end(`replica unreachable: ${err.message}`);
    });
    req.pipe(forward);
  };
}

/** What makeApp answers in the replicas project: the alternating front, and no in-process deps. */
export async function replicaApp(options: SandboxOptions) {
  const pair = await replicaPair(options);
  return { app: alternating(pair), replicas: pair };
}

const prefixOfKey = new Map<string, string>();

/**
 * Two replicas behind one listening address (each request to the next replica), on the prefix
 * named by `key`: a second call with the same key after close() is a restart on the same state.
 */
export async function replicaSandbox(key: string, flags: string[] = []): Promise<{ url: string; replicas: Replica[]; close(): Promise<void> }> {
  let prefix = prefixOfKey.get(key);
  if (!prefix) prefixOfKey.set(key, (prefix = freshPrefix()));
  const args = [...redisFlags(prefix), "--seed", "replicas", ...flags];
  const pair = await Promise.all([spawnSandgate(args), spawnSandgate(args)]);
  const front = createServer(alternating(pair));
  await new Promise<void>((resolve) => front.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(front.address() as AddressInfo).port}`,
    replicas: pair,
    async close() {
      front.closeAllConnections();
      await new Promise((resolve) => front.close(resolve));
      await Promise.all(
        pair.map(
          ({ child }) =>
            new Promise<void>((resolve) => {
              if (child.exitCode !== null || child.signalCode !== null) return resolve();
              child.once("exit", () => resolve());
              child.kill("SIGTERM");
            }),
        ),
      );
    },
  };
}

/** A client of the run's Redis (the cluster in "replicas (cluster)"). */
export async function redisClient(): Promise<Redis | Cluster> {
  if (!inject("redisCluster")) return new Redis(inject("redisUrl"));
  const url = new URL(inject("redisUrl"));
  const cluster = new Cluster([{ host: url.hostname, port: Number(url.port) }]);
  await new Promise((resolve) => cluster.once("ready", resolve));
  return cluster;
}

/** Every key under the prefix with its value, as text: from the one Redis, or from every master of the cluster. */
export async function redisDump(prefix: string): Promise<string> {
  const url = new URL(inject("redisUrl"));
  const nodes = inject("redisCluster")
    ? await (async () => {
        const cluster = new Cluster([{ host: url.hostname, port: Number(url.port) }]);
        await new Promise((resolve) => cluster.once("ready", resolve));
        const masters = cluster.nodes("master").map((n) => new Redis({ host: n.options.host!, port: n.options.port! }));
        cluster.disconnect();
        return masters;
      })()
    : [new Redis(inject("redisUrl"))];
  let out = "";
  try {
    for (const redis of nodes) {
      for (const key of await redis.keys(`${prefix}*`)) {
        const type = await redis.type(key);
        const value =
          type === "string"
            ? await redis.get(key)
            : type === "hash"
              ? await redis.hgetall(key)
              : type === "stream"
                ? await redis.xrange(key, "-", "+")
                : type === "zset"
                  ? await redis.zrange(key, "0", "-1")
                  : type === "set"
                    ? await redis.smembers(key)
                    : `(${type})`;
        out += `${key} ${JSON.stringify(value)}\n`;
      }
    }
  } finally {
    nodes.forEach((n) => n.disconnect());
  }
  return out;
}
