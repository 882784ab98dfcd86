// `sandgate migrate --redis-url <url> [--dry-run]`: brings a team sandbox on Redis to the layout this
// Sandgate writes, with every replica stopped, and says what it moved. A replica does the same on
// start (store/redis-layout.ts); this is the step to run on its own, before starting the new
// replicas, and --dry-run says what it would do. Exit 0: done or nothing to do; 1: refused (a
// replica of the earlier layout still runs, or the sandbox is of a newer Sandgate); 2: bad flags.
import { command, parseFlags } from "./command.js";
import { DEFAULTS } from "../config/config.js";
import { defaultFixturesDir } from "../base/paths.js";
import { REDIS_LAYOUT } from "../store/redis/redis-layout.js";
import { openRedisStore, type RedisStoreOptions } from "../store/redis/redis-store.js";
import { inspectRedisStore } from "../store/redis/inspect-store.js";

interface Flags {
  redisUrl?: string;
  redisPrefix: string;
  redisCluster?: boolean;
  dryRun?: boolean;
}

const total = (records: Record<string, number>) => Object.values(records).reduce((a, b) => a + b, 0);
const listed = (records: Record<string, number>) =>
  Object.entries(records)
    .filter(([, n]) => n > 0)
    .map(([c, n]) => `${n} ${c}`)
    .join(", ");

export async function run(args: string[]): Promise<number> {
  const program = command("sandgate migrate", `bring a sandbox on Redis to layout ${REDIS_LAYOUT} (the one this Sandgate writes), every replica stopped`)
    .option("--redis-url <url>", "the Redis of the sandbox [env REDIS_URL]")
    .option("--redis-prefix <prefix>", "prefix of its keys [env REDIS_PREFIX]", process.env.REDIS_PREFIX ?? DEFAULTS.redisPrefix)
    .option("--redis-cluster", "--redis-url is a node of a Redis Cluster")
    .option("--dry-run", "say what it would move, and change nothing");
  const flags = parseFlags<Flags>(program, args);
  if (typeof flags === "number") return flags;
  const url = flags.redisUrl ?? process.env.REDIS_URL;
  if (!url) {
    process.stderr.write("sandgate migrate: --redis-url (or REDIS_URL) names the Redis of the sandbox\n");
    return 2;
  }
  const options: RedisStoreOptions = {
    url,
    prefix: flags.redisPrefix,
    cluster: flags.redisCluster,
    fixturesDir: process.env.FIXTURES ?? defaultFixturesDir,
    seed: undefined,
  };
  const say = (line: string) => process.stdout.write(`${line}\n`);
  try {
    const found = await inspectRedisStore(options);
    if (found.layout === 0) say(`no sandbox under prefix "${options.prefix}": nothing to migrate`);
    else if (found.layout === REDIS_LAYOUT)
      say(`the sandbox under prefix "${options.prefix}" is in layout ${REDIS_LAYOUT} already (${found.merchants} merchants): nothing to migrate`);
    else if (found.layout > REDIS_LAYOUT) {
      process.stderr.write(`sandgate migrate: the sandbox is in layout ${found.layout}, written by a newer Sandgate; this one writes layout ${REDIS_LAYOUT}\n`);
      return 1;
    } else if (found.layout === 1 && found.running) {
      process.stderr.write(`sandgate migrate: a replica of the earlier Sandgate still uses this sandbox (layout 1): stop every replica first\n`);
      return 1;
    } else if (flags.dryRun) {
      if (found.layout === 2) say(`would mark the sandbox as layout ${REDIS_LAYOUT} (${found.merchants} merchants; layout 2 has the same keys)`);
      else say(`would move ${total(found.records!)} records (${listed(found.records!)}) from layout 1 to layout ${REDIS_LAYOUT}`);
    } else {
      const store = await openRedisStore({ ...options, report: (_level, message) => say(message) });
      await store.close();
      if (found.layout === 2) say(`marked the sandbox as layout ${REDIS_LAYOUT} (${found.merchants} merchants; layout 2 has the same keys)`);
    }
    return 0;
  } catch (err) {
    process.stderr.write(`sandgate migrate: ${(err as Error).message}\n`);
    return 1;
  }
}
