// A TCP proxy in front of a Redis node that makes a network's faults on demand, for the shared
// store's fault tests and `npm run bench:faults`. It passes bytes as they come, each way, except:
// - loseReply: the chunks Redis sends back that a seeded schedule names are lost: the proxy drops
//   each and closes both sides, as a network that fails after Redis ran the commands and before
//   their replies arrive (the commands happened; the client never hears of it);
// - resetMidCommand: the chunks the client sends that a seeded schedule names are cut: the first
//   half goes on, then both sides are reset (Redis discards the half command; whole ones before it ran);
// - delayMs: every chunk, each way, is held this long (in order: none overtakes one ahead of it);
// - next: the next chunk of commands that `matches`, once: its reply lost as above ("lose reply"),
//   or the chunk cut as above ("cut"): a fault aimed at one command (a commit, say);
// - halfOpen(): the connections open now pass nothing more, either way, and are never closed by
//   the proxy (a connection whose other end is gone without a word); new connections work.
// Redis Cluster nodes announce the proxy's port (startRedisCluster's `announce`), so a cluster
// client finds every node through its proxy.
//
// In a process of its own (the benches: `node --import tsx scripts/fault-proxy.ts <listen port, 0
// for any> <target port> [delay ms]`) it prints "listening on <port>" and takes lines on stdin:
// "<ms>" sets the delay, answered "delay <ms>" (chunks already held keep their time); a JSON object
// sets the faults (a FaultPlan), answered "faults"; "half-open" answers "half-open";
// "counts" answers "counts <JSON>".
import { spawn } from "node:child_process";
import { createServer, connect, type Server, type Socket } from "node:net";
import { resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { startRedis, startRedisCluster } from "./redis-server.js";

/**
 * Where faults fall, drawn from a seed: the gaps between faults (in chunks) are drawn uniformly
 * from 1 to 2 × `every` − 1, so one chunk in `every` is faulted on average, and the same seed puts
 * fault N on the same chunk K every time. After `count` faults (none: no end) it makes no more, so
 * a test that runs until `made` reaches `count` made exactly that many, and a failure names its seed.
 */
export interface SchedulePlan {
  seed: number;
  every: number;
  count?: number;
}

export interface Schedule extends Required<SchedulePlan> {
  /** the faults made so far */
  readonly made: number;
  /** the next chunk goes by: true when the schedule names it */
  next(): boolean;
}

export function faultSchedule({ seed, every, count = Infinity }: SchedulePlan): Schedule {
  // mulberry32: a small seeded generator, enough to spread faults and repeat them
  let state = seed >>> 0;
  const random = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const gap = () => 1 + Math.floor(random() * (2 * every - 1));
  let left = gap();
  let made = 0;
  return {
    seed,
    every,
    count,
    get made() {
      return made;
    },
    next() {
      if (made >= count || --left > 0) return false;
      made++;
      left = gap();
      return true;
    },
  };
}

export interface Faults {
  /** one schedule may be shared by several proxies: it then counts the chunks of all of them */
  loseReply?: Schedule;
  resetMidCommand?: Schedule;
  delayMs?: number;
  next?: { matches: (commands: Buffer) => boolean; fault: "lose reply" | "cut" };
}

export interface FaultProxy {
  port: number;
  /** the faults from now on (each unset one: none) */
  set(faults: Faults): void;
  halfOpen(): void;
  /** what the proxy did so far */
  readonly counts: { connections: number; lostReplies: number; resets: number; halfOpen: number };
  close(): Promise<void>;
}

interface Pair {
  client: Socket;
  upstream: Socket;
  frozen: boolean;
  /** the reply to a command sent is to be lost (Faults.next) */
  loseNext: boolean;
}

/** Starts a proxy on 127.0.0.1 (`port`, or any free one) to 127.0.0.1:`target`. */
export async function startFaultProxy(target: number, port = 0): Promise<FaultProxy> {
  let faults: Faults = {};
  const counts = { connections: 0, lostReplies: 0, resets: 0, halfOpen: 0 };
  const pairs = new Set<Pair>();
  /** every socket open on either side, half-open ones too (a pair leaves `pairs` once one side has gone) */
  const sockets = new Set<Socket>();

  /** the fault aimed at this chunk of commands, if any (once) */
  const aimedAt = (chunk: Buffer) => {
    const next = faults.next;
    if (!next?.matches(chunk)) return undefined;
    faults = { ...faults, next: undefined };
    return next.fault;
  };

  /** from → to, through the faults; `replies`: this direction carries Redis's replies */
  function pipe(pair: Pair, from: Socket, to: Socket, replies: boolean): void {
    const held: { due: number; chunk: Buffer | null }[] = [];
    let timer: NodeJS.Timeout | undefined;
    const pass = (chunk: Buffer | null) => {
      if (pair.frozen || to.destroyed) return;
      if (chunk === null) return void to.end();
      if (replies && (pair.loseNext || faults.loseReply?.next())) {
        counts.lostReplies++;
        pair.client.destroy();
        pair.upstream.destroy();
        return;
      }
      const aimed = replies ? undefined : aimedAt(chunk);
      if (aimed === "lose reply") pair.loseNext = true;
      if (!replies && chunk.length > 1 && (aimed === "cut" || faults.resetMidCommand?.next())) {
        counts.resets++;
        to.write(chunk.subarray(0, chunk.length >> 1), () => {
          pair.upstream.resetAndDestroy();
          pair.client.resetAndDestroy();
        });
        return;
      }
      to.write(chunk);
    };
    const flush = () => {
      timer = undefined;
      const now = performance.now();
      while (held.length && held[0]!.due <= now) pass(held.shift()!.chunk);
      if (held.length) timer = setTimeout(flush, held[0]!.due - now);
    };
    const hold = (chunk: Buffer | null) => {
      const delay = faults.delayMs ?? 0;
      if (delay <= 0 && !held.length) return pass(chunk);
      const due = Math.max(performance.now() + delay, held.at(-1)?.due ?? 0);
      held.push({ due, chunk });
      timer ??= setTimeout(flush, due - performance.now());
    };
    from.on("data", hold);
    from.on("end", () => hold(null));
    from.on("close", () => clearTimeout(timer));
  }

  const server: Server = createServer((client) => {
    counts.connections++;
    const upstream = connect(target, "127.0.0.1");
    const pair: Pair = { client, upstream, frozen: false, loseNext: false };
    pairs.add(pair);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.once("close", () => sockets.delete(socket));
    }
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    pipe(pair, client, upstream, false);
    pipe(pair, upstream, client, true);
    // one side gone: the other goes too (unless half-open, where nothing more is said)
    const gone = (other: Socket) => () => {
      pairs.delete(pair);
      if (!pair.frozen) other.destroy();
    };
    client.on("close", gone(upstream));
    upstream.on("close", gone(client));
    client.on("error", () => undefined);
    upstream.on("error", () => undefined);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve());
  });

  return {
    port: (server.address() as { port: number }).port,
    set(next) {
      faults = { ...next };
    },
    halfOpen() {
      for (const pair of pairs) {
        if (pair.frozen) continue;
        pair.frozen = true;
        counts.halfOpen++;
        // Redis's side goes once its client has gone for good (kept here, it would hold the connection open forever)
        pair.client.once("close", () => pair.upstream.destroy());
      }
    },
    counts,
    async close() {
      // every socket, the half-open ones too: the server's close waits for each to end
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The faults a line of a spawned proxy's stdin (or `spawnFaultProxy().set`) asks for: each schedule as its plan. */
export interface FaultPlan {
  loseReply?: SchedulePlan;
  resetMidCommand?: SchedulePlan;
  delayMs?: number;
}

/** The faults of a plan, each schedule starting from its seed. */
const planned = ({ loseReply, resetMidCommand, delayMs }: FaultPlan): Faults => ({
  ...(loseReply ? { loseReply: faultSchedule(loseReply) } : {}),
  ...(resetMidCommand ? { resetMidCommand: faultSchedule(resetMidCommand) } : {}),
  ...(delayMs !== undefined ? { delayMs } : {}),
});

/** The proxy in a process of its own (what the benches use: the load generator's process stays the load generator's), driven through its stdin. */
export async function spawnFaultProxy(target: number) {
  const child = spawn(process.execPath, ["--import", "tsx", fileURLToPath(import.meta.url), "0", String(target)], { stdio: ["pipe", "pipe", "inherit"] });
  const lines = createInterface({ input: child.stdout });
  const said = (re: RegExp) =>
    new Promise<RegExpExecArray>((resolve, reject) => {
      const exited = () => reject(new Error("fault-proxy.ts exited"));
      const heard = (line: string) => {
        const m = re.exec(line);
        if (!m) return;
        lines.off("line", heard);
        child.off("exit", exited);
        resolve(m);
      };
      lines.on("line", heard);
      child.once("exit", exited);
    });
  const ask = async (line: string, answer: RegExp) => {
    const heard = said(answer);
    child.stdin.write(`${line}\n`);
    return heard;
  };
  const port = Number((await said(/^listening on (\d+)$/))[1]);
  return {
    port,
    url: `redis://127.0.0.1:${port}/0`,
    delay: (ms: number) => ask(String(ms), new RegExp(`^delay ${ms}$`)).then(() => undefined),
    set: (faults: FaultPlan) => ask(JSON.stringify(faults), /^faults$/).then(() => undefined),
    halfOpen: () => ask("half-open", /^half-open$/).then(() => undefined),
    counts: async () => JSON.parse((await ask("counts", /^counts (.*)$/))[1]!) as FaultProxy["counts"],
    close: () => new Promise<void>((done) => (child.exitCode !== null ? done() : (child.once("exit", () => done()), child.stdin.end()))),
  };
}

/**
 * A Redis of its own (one, or a 3-master Cluster whose nodes announce their proxy's port) with
 * every node behind a proxy that `proxy` starts in front of the node's port (in this process, or
 * its own): the address clients use, the proxies, and every node to stop and start again.
 */
export async function redisBehindProxies<P extends { port: number; close(): Promise<void> }>(cluster: boolean, proxy: (port: number) => Promise<P>) {
  const proxies: P[] = [];
  const proxied = async (port: number) => {
    const started = await proxy(port);
    proxies.push(started);
    return started.port;
  };
  const closeProxies = () => Promise.all(proxies.map((p) => p.close()));
  if (cluster) {
    const redis = await startRedisCluster({ announce: proxied });
    const every = (run: (i: number) => Promise<void>) => Promise.all(redis.ports.map((_, i) => run(i))).then(() => undefined);
    return {
      url: redis.url,
      proxies,
      stop: () => every(redis.stop),
      /** every node started again; resolves once the cluster serves (every node says cluster_state:ok) */
      start: () => every(redis.start).then(redis.ok),
      close: async () => (await closeProxies(), await redis.close()),
    };
  }
  const redis = await startRedis();
  return {
    url: `redis://127.0.0.1:${await proxied(redis.port)}/0`,
    proxies,
    stop: redis.stop,
    start: redis.start,
    close: async () => (await closeProxies(), await redis.close()),
  };
}

/** What a line on stdin asks of the proxy, and the line it answers. */
function command(proxy: FaultProxy, line: string): string {
  if (line === "half-open") {
    proxy.halfOpen();
    return "half-open";
  }
  if (line === "counts") return `counts ${JSON.stringify(proxy.counts)}`;
  if (line.startsWith("{")) {
    proxy.set(planned(JSON.parse(line) as FaultPlan));
    return "faults";
  }
  proxy.set({ delayMs: Number(line) });
  return `delay ${Number(line)}`;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [listen = "0", target, delay = "0"] = process.argv.slice(2);
  if (!target) throw new Error("usage: fault-proxy.ts <listen port> <target port> [delay ms]");
  const proxy = await startFaultProxy(Number(target), Number(listen));
  proxy.set({ delayMs: Number(delay) });
  process.stdout.write(`listening on ${proxy.port}\n`);
  createInterface({ input: process.stdin }).on("line", (line) => process.stdout.write(`${command(proxy, line)}\n`));
  process.stdin.on("end", () => process.exit(0));
  process.on("SIGTERM", () => process.exit(0));
}
