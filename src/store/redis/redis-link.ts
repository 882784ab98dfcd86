// A replica's connection to Redis (one client: one connection, or one per node of a Cluster), and
// what happens to the commands on it when it fails. A network can drop a connection after Redis ran
// a command and before its reply arrived, cut a command in half, or go silent without closing
// (half-open). The client (ioredis) fails every command that was on a lost connection; this file
// decides what happens next, so that a lost reply costs a slower answer, not a 503:
// - the connection is made again at once; backoff only while Redis refuses connections;
// - a connection silent for SILENT_MS while a reply is awaited is given up (half-open); on a
//   Cluster the other nodes' connections are asked at once whether they still answer;
// - on a Cluster, a command is sent again once there is a connection to every master (the client
//   sends a command for a node missing from its pool to any node, perhaps a silent one);
// - again(send): a command that may safely run twice (a read, a write of whole values, a script
//   that checks what it changes) is sent again once the connection is back. The one command that
//   may not, a merchant's COMMIT, is not sent through it: redis-partition.ts asks its fence whether
//   it landed before sending it again;
// - while Redis refuses connections (it is down), a command fails at once: 503 I0050, as before;
//   while it loads its data after a restart, the connection asks every DOWN_RETRY_MS whether it is done.
import type { Socket } from "node:net";
import { performance } from "node:perf_hooks";
import { Cluster, Redis, ReplyError } from "ioredis";
import { StoreError, StoreUnavailable } from "../store.js";

/** A connection that has not answered for this long while a reply is awaited is given up. */
const SILENT_MS = 1_000;
/** ... but one made for a long script (Link.bulk) for this long. */
const BULK_SILENT_MS = 30_000;
/** How long a command waits for the connection to be back before it fails (Redis down: at once). */
const RECONNECT_MS = 2_000;
/** How often one command is sent in all, each time on a new connection. */
const ATTEMPTS = 5;
/** On a Cluster, a command is sent again after this pause (20 ms in all over its attempts). */
const CLUSTER_PAUSE_MS = 5;
/** While Redis is down, a connection is tried this often. */
const DOWN_RETRY_MS = 200;
/** After a refused connection, Redis counts as down this long unless a connection is made. */
const DOWN_FOR_MS = 1_000;
/** Connections in a row to one address that close before they are ready: Redis is down behind a proxy. */
const UNREADY_IS_DOWN = 3;
/** After one connection went silent, another that does not answer a PING this soon is given up too. */
const PROBE_MS = 250;
/** A cluster node's connection on its way (a command sent to it now would fail at once). */
const CONNECTING = new Set(["connecting", "connect", "reconnecting"]);
/** Errors of a connection that could not be made: Redis (or its host) is not there. */
const REFUSED = new Set(["ECONNREFUSED", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "ENOTFOUND", "EAI_AGAIN"]);

export interface Link {
  readonly client: Redis | Cluster;
  /**
   * Runs one long script (a merchant of tens of thousands of records installed) on a connection of
   * its own, which may stay silent BULK_SILENT_MS: on the link, a second of silence is a lost Redis.
   * Made for the call and closed after it; safe only for a script that may be sent twice.
   */
  bulk(lua: string, keys: string[], args: (string | number)[]): Promise<unknown>;
  /** sends `send()`'s command, and again on the new connection when the one it was on was lost */
  again<T>(send: () => Promise<T>): Promise<T>;
  /**
   * After a command sent on connection `sentOn` failed with `err` on its `attempt`: resolves once
   * it is worth sending again (the connection is back); rejects with `err` when it is not (Redis
   * answered with an error, Redis is down, or the command had its attempts).
   */
  recover(err: unknown, attempt: number, sentOn: number): Promise<void>;
  /** the connection commands go on now: given to recover() as the one a failed command was sent on */
  readonly connection: number;
}

export interface LinkOptions {
  url: string;
  cluster?: boolean | undefined;
}

export function connect(options: LinkOptions): Link {
  // what each connection is made with: one Redis's, and every node's of a Cluster
  const perConnection = {
    maxRetriesPerRequest: 0,
    connectTimeout: RECONNECT_MS,
    socketTimeout: SILENT_MS,
    // a connection made while Redis loads its data asks again this often, not after Redis's own
    // estimate of the load (ioredis's default: seconds after the load ended)
    maxLoadingRetryTime: DOWN_RETRY_MS,
  };
  const common = {
    lazyConnect: true,
    // a command is sent at once or fails at once (again() decides what then), never queued unsent
    enableOfflineQueue: false,
    ...perConnection,
  };
  // a lost connection is made again at once, up to three times in a row (Redis down behind a proxy
  // is known within milliseconds); while Redis refuses, every 200 ms (back within 200 ms of its restart)
  const retry = (times: number) => (times <= UNREADY_IS_DOWN ? 0 : DOWN_RETRY_MS);
  // (no auto-pipelining: ioredis keeps one such pipeline in flight per node, so every request's
  // commands would wait for the previous request's answer; commands are sent at once without it)
  let client: Redis | Cluster;
  if (!options.cluster) client = coalesceWrites(new Redis(options.url, { ...common, retryStrategy: retry }));
  else {
    const url = new URL(options.url);
    client = new Cluster([{ host: url.hostname, port: Number(url.port || 6379) }], {
      ...common,
      clusterRetryStrategy: retry,
      // a command whose connection closed is not sent again by the client itself: again() decides
      retryDelayOnFailover: 0,
      redisOptions: {
        username: url.username || undefined,
        password: decodeURIComponent(url.password) || undefined,
        ...perConnection,
      },
    });
  }
  const bulk = async (lua: string, keys: string[], args: (string | number)[]): Promise<unknown> => {
    const own = { lazyConnect: false, enableOfflineQueue: true, socketTimeout: BULK_SILENT_MS };
    const long =
      client instanceof Cluster
        ? client.duplicate(undefined, {
            enableOfflineQueue: true,
            lazyConnect: false,
            redisOptions: { ...client.options.redisOptions, socketTimeout: BULK_SILENT_MS },
          })
        : client.duplicate(own);
    long.on("error", () => undefined);
    try {
      return await (long as unknown as { eval(lua: string, n: number, keys: string[], args: (string | number)[]): Promise<unknown> }).eval(
        lua,
        keys.length,
        keys,
        args,
      );
    } catch (err) {
      throw err instanceof ReplyError ? err : new StoreUnavailable(`Redis did not finish a long script: ${(err as Error).message}`);
    } finally {
      long.disconnect();
    }
  };
  // (assigned, not spread: `connection` is a getter)
  return Object.assign(linked(client), { bulk });
}

/** The health of `client`'s connections, and the retries that follow from it. */
function linked(client: Redis | Cluster): Omit<Link, "bulk"> {
  let refusedAt = -Infinity;
  let readyAt = performance.now();
  /** +1 each time a connection is ready (one Redis: a new connection) */
  let connection = 0;
  /** a cluster: how many masters its slots name (a command for a node missing from the pool goes to any node, maybe a silent one) */
  let masters = 0;
  /** a cluster's pool holds a connection to every master its slots name */
  const everyMaster = (cluster: Cluster) => cluster.nodes("master").length >= masters;
  /**
   * One Redis: a connection made since `sentOn` (the one it was sent on may say "ready" a moment
   * after it was lost). A cluster: a connection to every master, none of them on its way.
   */
  const usable = (sentOn: number) => {
    if (client.status !== "ready") return false;
    if (client instanceof Cluster) return everyMaster(client) && !client.nodes("master").some((node) => CONNECTING.has(node.status));
    return connection !== sentOn;
  };
  /** commands waiting for the connection: each goes on once usable (a connection ready), or fails once Redis refuses */
  let waiting: { sentOn: number; resolve(): void; reject(): void }[] = [];
  const wake = (ready: boolean) => {
    const woken = waiting.filter((w) => !ready || usable(w.sentOn));
    waiting = waiting.filter((w) => !woken.includes(w));
    for (const w of woken) (ready ? w.resolve : w.reject)();
  };
  const ready = () => {
    connection++;
    readyAt = performance.now();
    wake(true);
  };
  const refused = () => {
    refusedAt = performance.now();
    wake(false);
  };
  const failed = (err: Error & { code?: string }) => {
    if (REFUSED.has(err.code ?? "") || /connect ETIMEDOUT/.test(err.message)) refused();
  };
  /**
   * Three connections in a row that close before they are ready count as refused: what a proxy in
   * front of a stopped Redis does (it accepts, then closes). One or two may be lost replies to a
   * connection's own first command.
   */
  const unready = new Map<string, number>(); // by address: a cluster makes a new connection to a node each time
  const watch = (connection: Redis) => {
    const address = `${connection.options.host}:${connection.options.port}`;
    let wasReady = false;
    connection.on("ready", () => {
      wasReady = true;
      unready.delete(address);
    });
    connection.on("close", () => {
      const times = wasReady ? 0 : (unready.get(address) ?? 0) + 1;
      if (times) unready.set(address, times);
      if (times >= UNREADY_IS_DOWN) refused();
      wasReady = false;
    });
  };
  client.on("ready", ready);
  client.on("error", failed);
  if (client instanceof Cluster) {
    const cluster = client;
    /**
     * One of a cluster's connections went silent: the others, made at the same time through the
     * same network, may have gone with it (a firewall or NAT that forgot them all). Each is asked at
     * once; one that does not answer within PROBE_MS is made again now, not when a command next
     * waits SILENT_MS on it.
     */
    let probing = false;
    const probe = () => {
      if (probing || cluster.status !== "ready") return;
      probing = true;
      const asked = cluster.nodes("all").map((node) => {
        let timer: NodeJS.Timeout | undefined;
        const silent = new Promise<boolean>((resolve) => (timer = setTimeout(resolve, PROBE_MS, true)));
        const answered = node.ping().then(
          () => false,
          () => false, // it failed by itself: gone already
        );
        return Promise.race([answered, silent]).then((gone) => {
          clearTimeout(timer);
          if (gone) node.disconnect();
        });
      });
      void Promise.all(asked).finally(() => (probing = false));
    };
    client.on("node error", (err: Error & { code?: string }) => {
      failed(err);
      if (err.message.startsWith("Socket timeout")) setImmediate(probe);
    });
    client.on("refresh", () => {
      masters = new Set(cluster.slots.map((keys) => keys[0]).filter(Boolean)).size;
      wake(true);
    });
    // a node's connection lost: the slots are asked again (on a connection of their own), which
    // makes the node's connection again; again after a refresh that was under way. A refresh that
    // no node answered on a new connection: Redis is down (as a refused connection says)
    const mend = () => {
      if (cluster.status !== "ready" || everyMaster(cluster)) return;
      cluster.refreshSlotsCache((err) => {
        if (!err) return mend();
        refused();
        setTimeout(mend, DOWN_RETRY_MS);
      });
    };
    client.on("-node", mend);
    client.on("+node", (node: Redis) => {
      coalesceWrites(node);
      watch(node);
      node.on("ready", ready);
    });
  } else watch(client);
  const down = () => refusedAt > readyAt && performance.now() - refusedAt < DOWN_FOR_MS;
  /** Resolves once commands can be sent again after one failed on connection `sentOn`. */
  const back = (sentOn: number) =>
    new Promise<void>((resolve, reject) => {
      if (usable(sentOn)) return resolve();
      if (down()) return reject(new Error("down"));
      const timer = setTimeout(() => {
        waiting = waiting.filter((w) => w !== waiter);
        reject(new Error("not back"));
      }, RECONNECT_MS);
      const waiter = {
        sentOn,
        resolve: () => (clearTimeout(timer), resolve()),
        reject: () => (clearTimeout(timer), reject(new Error("down"))),
      };
      waiting.push(waiter);
    });

  async function recover(err: unknown, attempt: number, sentOn: number): Promise<void> {
    // Redis's own answer (an error reply) and the store's verdicts are final; anything else is the connection's
    if (err instanceof ReplyError || err instanceof StoreError || err instanceof StoreUnavailable || attempt >= ATTEMPTS || down()) throw err;
    await back(sentOn).catch(() => Promise.reject(err));
    // a cluster may not know the node's new connection yet (it finds it by a redirection): a moment more
    if (client instanceof Cluster) await new Promise((resolve) => setTimeout(resolve, CLUSTER_PAUSE_MS));
  }
  return {
    client,
    get connection() {
      return connection;
    },
    recover,
    again<T>(send: () => Promise<T>): Promise<T> {
      // (the first send is the path of every request: no async frame around it)
      const retried =
        (attempt: number, sentOn: number) =>
        (err: unknown): Promise<T> =>
          recover(err, attempt, sentOn).then(() => {
            const on = connection;
            return send().catch(retried(attempt + 1, on));
          });
      return send().catch(retried(1, connection));
    },
  };
}

/**
 * The commands a replica sends while the event loop handles one round of I/O leave in one write
 * (one system call) when that round ends, not one write each: ioredis writes every command to its
 * socket at once, and those calls were the largest single cost of a request on Redis. A request's
 * turn and settings check go together, its commit and index writes too, and so do the commands of
 * requests that arrived together. Nothing waits: the socket is uncorked before the loop sleeps.
 */
function coalesceWrites(redis: Redis): Redis {
  redis.on("connect", () => {
    const socket = (redis as unknown as { stream?: Socket }).stream;
    if (!socket || corked.has(socket)) return;
    corked.add(socket);
    const write = socket.write;
    let pending = false;
    const flush = () => {
      pending = false;
      socket.uncork();
    };
    socket.write = function (this: Socket, ...args: Parameters<Socket["write"]>) {
      if (!pending) {
        pending = true;
        socket.cork();
        setImmediate(flush);
      }
      return write.apply(this, args);
    } as Socket["write"];
  });
  return redis;
}
const corked = new WeakSet<Socket>();

/** The address without its password, for messages. */
export const shown = (url: string) => url.replace(/\/\/([^@/]*)@/, "//***@");
