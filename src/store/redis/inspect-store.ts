// `sandgate migrate --dry-run`: what Redis holds at a prefix, read without changing anything.
import { StoreError } from "../store.js";
import { connect, shown } from "./redis-link.js";
import { inspectLayoutOne, layoutAt } from "./redis-layout.js";
import { checkPrefix, globalKeys } from "./redis-scripts.js";
import type { RedisStoreOptions } from "./redis-store.js";

/** What Redis holds at the prefix, read without changing anything (`sandgate migrate --dry-run`). */
export async function inspectRedisStore(
  options: RedisStoreOptions,
): Promise<{ layout: number; merchants: number; records?: Record<string, number>; running?: boolean }> {
  checkPrefix(options);
  const global = globalKeys(options.prefix);
  const client = connect(options).client;
  client.on("error", () => undefined);
  try {
    await client
      .connect()
      .catch((err: Error) => Promise.reject(new StoreError(`cannot reach Redis at ${shown(options.url)} (${err.message}); start it, or check --redis-url`)));
    const layout = await layoutAt(client, options.prefix, global.settings);
    if (layout !== 1) return { layout, merchants: await client.scard(global.merchants) };
    const { records, running } = await inspectLayoutOne(client, options.prefix);
    return { layout, merchants: records.merchants ?? 0, records, running };
  } finally {
    client.disconnect();
  }
}
