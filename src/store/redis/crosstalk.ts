// What replicas say to each other outside units (store.ts's Crosstalk), on the shared Redis:
// - marks: one hash, "<name> <replica tag>" → until (ms). Every 2 s each replica writes its own
//   (until: 6 s on), removes its names it no longer holds and anyone's that lapsed (a replica that
//   died without a word), and reads the others';
// - messages: one pub/sub channel on a connection of its own (a subscribed connection takes no other
//   command). Each message carries its sender's tag: a replica does not hear itself. A message sent
//   while the channel's connection is being made again is lost: what is said on it must survive that
//   (sandgate listen: an attempt nobody answers fails and is retried). A subscribed connection sends
//   nothing of its own, so one gone half-open would go unnoticed for good: every 2 s each replica
//   also says it is there, and hears it back, or makes the connection again (once 6 s went by unheard).
import { Cluster, Redis } from "ioredis";
import type { Link } from "./redis-link.js";
import type { Crosstalk } from "../store.js";

const EVERY_MS = 2_000;
const LAPSE_MS = 6_000;
/** how soon the channel's connection is made again once lost */
const RECONNECT_MS = 500;

export interface OpenCrosstalk extends Crosstalk {
  stop(): Promise<void>;
}

export async function openCrosstalk({ client }: Link, keys: { marks: string; crosstalk: string }, tag: string): Promise<OpenCrosstalk> {
  let names: (() => Iterable<string>) | undefined;
  let elsewhere = new Set<string>();
  const hearers: ((message: unknown) => void)[] = [];

  const beat = async () => {
    const mine = new Set(names?.() ?? []);
    if (mine.size) await client.hset(keys.marks, Object.fromEntries([...mine].map((n) => [`${n} ${tag}`, String(Date.now() + LAPSE_MS)])));
    const now = Date.now();
    const next = new Set<string>();
    const drop: string[] = [];
    for (const [field, until] of Object.entries(await client.hgetall(keys.marks))) {
      const cut = field.lastIndexOf(" ");
      const name = field.slice(0, cut);
      const own = field.slice(cut + 1) === tag;
      if (own ? !mine.has(name) : !(Number(until) > now)) drop.push(field);
      else if (!own) next.add(name);
    }
    if (drop.length) await client.hdel(keys.marks, ...drop);
    elsewhere = next;
  };
  /** when this replica last heard itself on the channel */
  let heardSelf = Date.now();
  const heard = (text: string) => {
    let said: { from?: unknown; message?: unknown };
    try {
      said = JSON.parse(text) as typeof said;
    } catch {
      return;
    }
    if (said.from === tag) return void (heardSelf = Date.now());
    if (!("message" in said)) return;
    for (const hear of hearers) {
      try {
        hear(said.message);
      } catch {
        // a message a hearer cannot take (another version's, say) is dropped, not thrown into ioredis
      }
    }
  };
  // The channel's own connection: a plain one, made at once and made again every half second once
  // lost (its messages may wait; a replica's requests must not share a busy reconnect). On a Cluster
  // it goes to one node (a PUBLISH reaches every node's subscribers), the next one each time it is
  // made anew: ioredis's own Cluster subscriber, with every node away, tried them again at once, over
  // and over (with Redis stopped, a replica refused a third fewer requests in the same 5 s).
  let nodeTurn = 0;
  /** a new channel connection; none while a Cluster's nodes are not known yet (the next beat tries again) */
  const openSub = (): Redis | undefined => {
    const own = { enableOfflineQueue: true, lazyConnect: false, retryStrategy: () => RECONNECT_MS };
    let made: Redis;
    if (client instanceof Cluster) {
      const nodes = client.nodes("master");
      if (!nodes.length) return undefined;
      const { host, port } = nodes[nodeTurn++ % nodes.length]!.options;
      made = new Redis({ ...client.options.redisOptions, ...own, host, port });
    } else made = client.duplicate(own);
    made.on("error", () => undefined);
    made.on("message", (_channel: string, text: string) => heard(text));
    // subscribed each time the connection is ready (made, or made again): not awaited, so a replica
    // opening while Redis is away does not wait for it here
    made.on("ready", () => void made.subscribe(keys.crosstalk).catch(() => undefined));
    return made;
  };
  let sub = openSub();
  const beatAndCheck = async () => {
    if (!sub || Date.now() - heardSelf > LAPSE_MS) {
      heardSelf = Date.now();
      sub?.disconnect();
      sub = openSub();
    }
    await client.publish(keys.crosstalk, JSON.stringify({ from: tag }));
    await beat();
  };
  const say = () => void beatAndCheck().catch(() => undefined);
  const beating = setInterval(say, EVERY_MS);
  beating.unref();
  await beat().catch(() => undefined);

  return {
    mark(given) {
      names = given;
      say();
      return { now: say, stop: () => ((names = undefined), say()) };
    },
    markedElsewhere: (name) => elsewhere.has(name),
    tell(message) {
      client.publish(keys.crosstalk, JSON.stringify({ from: tag, message })).catch(() => undefined);
    },
    hear(hearer) {
      hearers.push(hearer);
    },
    async stop() {
      clearInterval(beating);
      names = undefined;
      await beat().catch(() => undefined);
      sub?.disconnect();
    },
  };
}
