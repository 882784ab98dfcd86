// The roll call: every running replica says the layout it writes, every 2 s, so that a later
// Sandgate can tell whether replicas of an earlier layout still run; the entries of replicas that
// stopped without a word are dropped once a minute old.
import type { Link } from "./redis-link.js";

const EVERY_MS = 2_000;
const GONE_AFTER_MS = 60_000;

/** Answers `me` (host, process, tag) under `key` now and every 2 s until stopped; stopped, says it is gone. */
export async function answerRollCall({ client }: Link, key: string, me: string, says: { layout: number; version: string }): Promise<{ stop(): Promise<void> }> {
  const beat = async () => {
    await client.hset(key, me, JSON.stringify({ ...says, seen_at: Date.now() }));
    const all = await client.hgetall(key);
    const gone = Object.entries(all).filter(([, v]) => !((JSON.parse(v) as { seen_at?: number }).seen_at! > Date.now() - GONE_AFTER_MS));
    if (gone.length) await client.hdel(key, ...gone.map(([k]) => k));
  };
  const beating = setInterval(() => void beat().catch(() => undefined), EVERY_MS);
  beating.unref();
  await beat().catch(() => undefined);
  return {
    stop: async () => {
      clearInterval(beating);
      await client.hdel(key, me).catch(() => undefined);
    },
  };
}
