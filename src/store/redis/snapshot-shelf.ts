// QA snapshots on the shared store: one hash, name → state file, shared by every replica; beside it
// each one's first and last line, for lists.
import { endsOf, type Shelf } from "../store.js";
import type { Link } from "./redis-link.js";
import type { globalKeys } from "./redis-scripts.js";

export function snapshotShelf({ client, again }: Link, global: ReturnType<typeof globalKeys>): Shelf {
  return {
    async put(name, text) {
      const { first, last } = endsOf(name, text);
      await again(() =>
        client
          .multi()
          .hset(global.snapshots, name, text)
          .hset(global.snapshotEnds, name, JSON.stringify([first, last]))
          .exec(),
      );
    },
    get: async (name) => (await again(() => client.hget(global.snapshots, name))) ?? undefined,
    async ends() {
      const [names, kept] = await again(() => Promise.all([client.hkeys(global.snapshots), client.hgetall(global.snapshotEnds)]));
      const ends = await Promise.all(
        names.map(async (name) => {
          if (kept[name]) {
            const [first, last] = JSON.parse(kept[name]) as [string, string];
            return { name, first, last };
          }
          // saved before their ends were kept beside them: read whole, once
          const text = await again(() => client.hget(global.snapshots, name));
          return text === null ? undefined : endsOf(name, text);
        }),
      );
      return ends.filter((e) => e !== undefined).sort((a, b) => (a.name < b.name ? -1 : 1));
    },
    async remove(name) {
      const [[, removed]] = (await again(() => client.multi().hdel(global.snapshots, name).hdel(global.snapshotEnds, name).exec())) as [[Error | null, number]];
      return removed > 0;
    },
  };
}
