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
import { Cluster, type Redis } from "ioredis";
import type { Link } from "./redis-link.js";
import type { Crosstalk } from "../store.js";

const EVERY_MS = 2_000;
const LAPSE_MS = 6_000;

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
  const beatAndCheck = async () => {
    if (Date.now() - heardSelf > LAPSE_MS) {
      heardSelf = Date.now();
      sub.disconnect(true);
    }
    await client.publish(keys.crosstalk, JSON.stringify({ from: tag }));
    await beat();
  };
  // the channel's own connection, made at once (the link's own waits for its first command)
  const own = { enableOfflineQueue: true, lazyConnect: false };
  const sub: Redis | Cluster = client instanceof Cluster ? client.duplicate(undefined, own) : client.duplicate(own);
  sub.on("error", () => undefined);
  sub.on("message", (_channel: string, text: string) => {
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
  });
  // subscribed each time the connection is ready (made, or made again): not awaited, so a replica
  // opening while Redis is away does not wait for it here
  sub.on("ready", () => void sub.subscribe(keys.crosstalk).catch(() => undefined));
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
      sub.disconnect();
    },
  };
}
