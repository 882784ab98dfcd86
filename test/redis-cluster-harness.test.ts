// startRedisCluster() gives a working three-master Redis Cluster: keys sharing a hash tag go into
// one EVAL together, keys of different tags are spread over the masters. Skipped without redis-server.
import { Cluster } from "ioredis";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { HAS_REDIS, startRedisCluster, type TestRedisCluster } from "../scripts/redis-server.js";

describe.skipIf(!HAS_REDIS)("startRedisCluster", () => {
  let redis: TestRedisCluster;
  let cluster: Cluster;

  beforeAll(async () => {
    redis = await startRedisCluster();
    cluster = new Cluster([{ host: "127.0.0.1", port: redis.ports[0]! }]);
  });
  afterAll(async () => {
    await cluster?.quit();
    await redis?.close();
  });

  test("keys with one hash tag are used together in one EVAL; keys of two tags are refused", async () => {
    const script = "redis.call('SET', KEYS[1], ARGV[1]); redis.call('SET', KEYS[2], ARGV[2]); return redis.call('MGET', KEYS[1], KEYS[2])";
    expect(await cluster.eval(script, 2, "{M10001}:a", "{M10001}:b", "1", "2")).toEqual(["1", "2"]);
    expect(await cluster.mget("{M10001}:a", "{M10001}:b")).toEqual(["1", "2"]);
    await expect(cluster.eval(script, 2, "{M10001}:c", "{M10002}:c", "1", "2")).rejects.toThrow(/CROSSSLOT/);
  });

  test("three masters share the slots; keys of three tags land on more than one of them", async () => {
    const masters = cluster.nodes("master");
    expect(masters.map((node) => node.options.port).sort()).toEqual([...redis.ports].sort());

    const keys = ["{M10001}:x", "{M10002}:x", "{M10003}:x"];
    for (const key of keys) await cluster.set(key, "1");
    const owners = new Set<number>();
    for (const key of keys) {
      const slot = await cluster.cluster("KEYSLOT", key);
      const counts = await Promise.all(masters.map((node) => node.cluster("COUNTKEYSINSLOT", slot)));
      const holders = masters.filter((_, i) => counts[i]! > 0).map((node) => node.options.port!);
      expect(holders, key).toHaveLength(1);
      owners.add(holders[0]!);
    }
    expect(owners.size).toBeGreaterThan(1);
  });
});
