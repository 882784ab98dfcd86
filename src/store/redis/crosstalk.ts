// What replicas say to each other outside units (store.ts's Crosstalk), on the shared Redis:
// - marks: one hash, "<name> <replica tag>" → until (ms). Every 2 s each replica writes its own
//   (until: 6 s on), removes its names it no longer holds and anyone's that lapsed (a replica that
//   died without a word), and reads the others';
// - messages: one pub/sub channel on a connection of its own (a subscribed connection takes no other
//   command). Each message carries its sender's tag: a replica does not hear itself. A message sent
//   while the channel's connection is being made again is lost: what is said on it must survive that
//   (sandgate listen: an attempt nobody answers fails and is retried).
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
  const say = () => void beat().catch(() => undefined);
  const beating = setInterval(say, EVERY_MS);
  beating.unref();
  await beat().catch(() => undefined);

  // the channel's own connection: queued while it is made (the subscription is sent once it is up, and again after a reconnect)
  const sub: Redis | Cluster =
    client instanceof Cluster ? client.duplicate(undefined, { enableOfflineQueue: true }) : client.duplicate({ enableOfflineQueue: true });
  sub.on("error", () => undefined);
  sub.on("message", (_channel: string, text: string) => {
    let said: { from?: unknown; message?: unknown };
    try {
      said = JSON.parse(text) as typeof said;
    } catch {
      return;
    }
    if (said.from === tag) return;
    for (const hear of hearers) hear(said.message);
  });
  await sub.subscribe(keys.crosstalk).catch(() => undefined);

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
