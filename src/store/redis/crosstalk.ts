// What replicas say to each other outside units (store.ts's Crosstalk), on the shared Redis: one
// pub/sub channel. Every 2 s each replica says on it that it is there and what it holds (its marks:
// the merchants whose listeners it holds); what another replica said lapses 6 s later (one that
// died without a word). Messages go on the same channel; each carries its sender's tag, and a
// replica does not hear itself but for its own "there" (below).
//
// The crosstalk has connections of its own, which no request shares: one subscribed (it takes no
// other command), one that publishes. Both are plain connections, made at once and made again every
// half second once lost; on a Cluster they go to one node (a PUBLISH reaches every node's
// subscribers), the next one each time they are made anew. The publishing one queues nothing while
// it is away: what is said meanwhile is lost, and what is said on the channel must survive that
// (marks are said again in 2 s; sandgate listen: an attempt nobody answers fails and is retried).
// Requests never wait behind the crosstalk, nor does a broken crosstalk connection set the
// requests' link reconnecting (on a Cluster under network faults, sharing it made the slowest
// request a quarter slower). A subscribed connection sends nothing of its own, so one gone
// half-open would go unnoticed for good: a replica that has not heard its own "there" for 6 s makes
// both connections again.
import { Cluster, Redis } from "ioredis";
import type { Link } from "./redis-link.js";
import type { Crosstalk } from "../store.js";

const EVERY_MS = 2_000;
const LAPSE_MS = 6_000;
/** how soon a crosstalk connection is made again once lost */
const RECONNECT_MS = 500;
/** how long stopping waits to say that this replica holds nothing any more */
const LAST_WORD_MS = 500;

export interface OpenCrosstalk extends Crosstalk {
  stop(): Promise<void>;
}

/** What goes on the channel: a replica's "there" (with what it holds), or a message. */
interface Said {
  from?: unknown;
  holds?: unknown;
  message?: unknown;
}

export async function openCrosstalk({ client }: Link, channel: string, tag: string): Promise<OpenCrosstalk> {
  let names: (() => Iterable<string>) | undefined;
  /** what each other replica last said it holds, and until when that counts */
  const others = new Map<string, { holds: Set<string>; until: number }>();
  const hearers: ((message: unknown) => void)[] = [];
  /** when this replica last heard its own "there" */
  let heardSelf = Date.now();

  const heard = (text: string) => {
    let said: Said;
    try {
      said = JSON.parse(text) as Said;
    } catch {
      return;
    }
    if (typeof said.from !== "string") return;
    if (said.from === tag) return void (heardSelf = Date.now());
    if (Array.isArray(said.holds)) {
      const holds = new Set(said.holds.filter((n): n is string => typeof n === "string"));
      if (holds.size) others.set(said.from, { holds, until: Date.now() + LAPSE_MS });
      else others.delete(said.from);
    }
    if (!("message" in said)) return;
    for (const hear of hearers) {
      try {
        hear(said.message);
      } catch {
        // a message a hearer cannot take (another version's, say) is dropped, not thrown into ioredis
      }
    }
  };

  let nodeTurn = 0;
  /** a new plain connection of the crosstalk's; none while a Cluster's nodes are not known yet (the next beat tries again) */
  const plain = (queue: boolean): Redis | undefined => {
    const own = { enableOfflineQueue: queue, lazyConnect: false, retryStrategy: () => RECONNECT_MS };
    let made: Redis;
    if (client instanceof Cluster) {
      const nodes = client.nodes("master");
      if (!nodes.length) return undefined;
      const { host, port } = nodes[nodeTurn++ % nodes.length]!.options;
      made = new Redis({ ...client.options.redisOptions, ...own, host, port });
    } else made = client.duplicate(own);
    made.on("error", () => undefined);
    return made;
  };
  const openSub = () => {
    // its SUBSCRIBE waits for the connection (queued), and is made again each time it is ready
    const made = plain(true);
    made?.on("message", (_channel: string, text: string) => heard(text));
    // not awaited, so a replica opening while Redis is away does not wait for it here
    made?.on("ready", () => void made.subscribe(channel).catch(() => undefined));
    return made;
  };
  let sub = openSub();
  let pub = plain(false);
  const publish = (said: Omit<Said, "from">): Promise<unknown> =>
    pub?.publish(channel, JSON.stringify({ from: tag, ...said })).catch(() => undefined) ?? Promise.resolve();

  const beat = () => {
    if (!sub || !pub || Date.now() - heardSelf > LAPSE_MS) {
      heardSelf = Date.now();
      sub?.disconnect();
      pub?.disconnect();
      sub = openSub();
      pub = plain(false);
    }
    const now = Date.now();
    for (const [from, said] of others) if (said.until <= now) others.delete(from);
    void publish({ holds: [...new Set(names?.() ?? [])] });
  };
  const beating = setInterval(beat, EVERY_MS);
  beating.unref();

  return {
    mark(given) {
      names = given;
      beat();
      return { now: beat, stop: () => ((names = undefined), beat()) };
    },
    markedElsewhere: (name) => {
      const now = Date.now();
      for (const said of others.values()) if (said.until > now && said.holds.has(name)) return true;
      return false;
    },
    tell(message) {
      void publish({ message });
    },
    hear(hearer) {
      hearers.push(hearer);
    },
    async stop() {
      clearInterval(beating);
      names = undefined;
      // the others forget this replica's marks at once rather than in 6 s (unless Redis is away)
      await Promise.race([publish({ holds: [] }), new Promise((resolve) => setTimeout(resolve, LAST_WORD_MS).unref())]);
      sub?.disconnect();
      pub?.disconnect();
    },
  };
}
