import { defineConfig } from "vitest/config";
import { HAS_REDIS } from "./scripts/redis-server.js";

/**
 * The suites that also run on two Sandgate processes sharing one Redis (requests alternating between
 * them): what differs on Redis, the store's contract (every transition committed and read back),
 * units and turns (races, over-refunds), shared scenario state (bindings, nth counters), faults
 * (of the gateway's scenarios, of the network to Redis), cards at rest, bad input changing nothing (gateway-fuzz), a tenant's bounds (tenant-bounds, slow-clients,
 * fair-notifications), sandgate listen's stream on one replica and its answers on another. The shipped scenarios' decisions are the same code on any store: in process only.
 */
const ON_REPLICAS = [
  "test/lifecycle-transitions.test.ts",
  "test/concurrency.test.ts",
  "test/refunds.test.ts",
  "test/scenario-engine.test.ts",
  "test/replicas.test.ts",
  "test/redis-faults.test.ts",
  "test/cards-at-rest.test.ts",
  "test/gateway-fuzz.test.ts",
  "test/forged-signatures.test.ts",
  "test/tenant-bounds.test.ts",
  "test/ids-after-reset.test.ts",
  "test/card-in-any-field.test.ts",
  "test/slow-clients.test.ts",
  "test/fair-notifications.test.ts",
  "test/listen-replicas.test.ts",
];
/** Suites that need Redis and start Sandgate processes: never in process. */
const REPLICAS_ONLY = ["test/replicas.test.ts", "test/redis-faults.test.ts", "test/listen-replicas.test.ts"];
/**
 * On a Cluster what differs again is which node holds a merchant's keys: the same suites but the
 * transitions, which one Redis proves; slow sockets, which the HTTP layer refuses before any store
 * is asked; and fuzzed bodies, whose refusals are the core's on any store (one Redis shows that a
 * refusal writes nothing, through the same partition code a Cluster runs)
 */
const NOT_ON_CLUSTER = new Set(["test/lifecycle-transitions.test.ts", "test/slow-clients.test.ts", "test/gateway-fuzz.test.ts"]);
const ON_CLUSTER = ON_REPLICAS.filter((f) => !NOT_ON_CLUSTER.has(f));
/**
 * `npm run test:fast` (the edit loop) leaves out what packs, builds and installs the package (it
 * rewrites dist/ under a running `npm start`, and takes a fifth of the loop) and the load test whose
 * figures want a quiet machine; `npm test` runs them.
 */
/**
 * Suites whose bounds are latencies under a load they make themselves (20,000 refused account
 * attempts, 20,000 slow sockets, 160 hung receivers, a 20 MB hostile verify): run alone, after the
 * rest, so neither they nor a suite beside them measure the other's load. On one process only here; the
 * replicas projects run the first three (on Redis, on a Cluster) one file at a time already.
 */
const UNDER_LOAD = ["test/tenant-bounds.test.ts", "test/slow-clients.test.ts", "test/fair-notifications.test.ts", "test/heavy-work.test.ts"];
const NOT_IN_THE_EDIT_LOOP = process.env.SANDGATE_TEST_FAST
  ? ["test/published-types.test.ts", "test/npm-start.test.ts", "test/docker.test.ts", "test/install-paths.test.ts"]
  : [];
if (!HAS_REDIS) console.warn("redis-server not found (apt-get install redis-server): the replicas project does not run");

export default defineConfig({
  test: {
    testTimeout: 20_000,
    hookTimeout: 30_000,
    projects: [
      // the in-process suites first, on both cores (as `npm run test:fast` runs them); then the replica
      // suites one file at a time: their figures (gaps under load, leases) are taken on a quiet machine
      {
        extends: true,
        test: {
          name: "one process",
          include: ["test/**/*.test.ts"],
          exclude: [...REPLICAS_ONLY, ...UNDER_LOAD, ...NOT_IN_THE_EDIT_LOOP],
          maxWorkers: 2,
          sequence: { groupOrder: 0 },
        },
      },
      { extends: true, test: { name: "under load", include: UNDER_LOAD, maxWorkers: 1, sequence: { groupOrder: 3 } } },
      ...(HAS_REDIS
        ? [
            {
              extends: true as const,
              test: { name: "replicas", include: ON_REPLICAS, globalSetup: ["test/replica-setup.ts"], maxWorkers: 1, sequence: { groupOrder: 1 } },
            },
            // the same suites on a 3-master Redis Cluster (each merchant's keys on the node of its hash slot)
            {
              extends: true as const,
              test: {
                name: "replicas (cluster)",
                include: ON_CLUSTER,
                globalSetup: ["test/replica-cluster-setup.ts"],
                maxWorkers: 1,
                sequence: { groupOrder: 2 },
              },
            },
          ]
        : []),
    ],
  },
});
