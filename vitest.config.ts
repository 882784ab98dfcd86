import { defineConfig } from "vitest/config";
import { HAS_REDIS } from "./scripts/redis-server.js";
import { PACKAGING } from "./vitest.packaging.config.js";

/**
 * Which suites run where. Every suite runs in one process (the "one process" project, on both cores).
 * A suite runs again on Redis only where a shared store proves something one process does not:
 * - the store's contract: every transition committed and read back (lifecycle-transitions);
 * - units and races across replicas: one winner, never over-refunded (concurrency, refunds);
 * - shared scenario state: bindings and nth counters seen by the other replica (scenario-engine);
 * - what is kept in Redis: no card data (cards-at-rest), a merchant's stream bounded (tenant-bounds),
 *   ids that never come back (ids-after-reset), a rotated key refused on the other replica (forged-signatures);
 * - the replicas themselves, faults of the network to Redis, `sandgate listen` across replicas
 *   (replicas, redis-faults, listen-replicas: these need Redis, never in process).
 * Left in one process: what the HTTP layer refuses before any store is asked (slow sockets), bad input
 * whose refusal is the core's on any store (gateway-fuzz, card-in-any-field: cards-at-rest reads what
 * reached Redis), and each process's own delivery slots (fair-notifications).
 */
const ON_REPLICAS = [
  "test/lifecycle-transitions.test.ts",
  "test/concurrency.test.ts",
  "test/refunds.test.ts",
  "test/scenario-engine.test.ts",
  "test/cards-at-rest.test.ts",
  "test/tenant-bounds.test.ts",
  "test/ids-after-reset.test.ts",
  "test/forged-signatures.test.ts",
  "test/replicas.test.ts",
  "test/replica-partitions.test.ts",
  "test/replica-failures.test.ts",
  "test/redis-faults.test.ts",
  "test/listen-replicas.test.ts",
];
/** Suites that need Redis and start Sandgate processes: never in process. */
const REPLICAS_ONLY = [
  "test/replicas.test.ts",
  "test/replica-partitions.test.ts",
  "test/replica-failures.test.ts",
  "test/redis-faults.test.ts",
  "test/listen-replicas.test.ts",
];
/**
 * On a Cluster what differs again is which node holds a merchant's keys: merchants as partitions
 * (a killed replica's merchants, ids with braces as hash tags, a large install, leases), failures
 * (a node down holds up only its merchants), the network's faults on every node's connection, races
 * on a merchant's partition, ids and card data on every node, and listen's channel. What replicas
 * share through the settings' own slot (test/replicas.test.ts), the store's contract, scenario state
 * and each merchant's bounds run the same code as on one Redis.
 */
const ON_CLUSTER = [
  "test/replica-partitions.test.ts",
  "test/replica-failures.test.ts",
  "test/redis-faults.test.ts",
  "test/listen-replicas.test.ts",
  "test/concurrency.test.ts",
  "test/ids-after-reset.test.ts",
  "test/cards-at-rest.test.ts",
];
if (!HAS_REDIS) console.warn("redis-server not found (apt-get install redis-server): the replicas projects do not run");

// No suite measures a speed (npm run bench does), so none needs a quiet machine: every project runs
// two files at a time. The packaging suites (build, pack, install, Docker) are `npm run test:packaging`.
export default defineConfig({
  test: {
    testTimeout: 20_000,
    hookTimeout: 30_000,
    reporters: ["default", "./test/slowest-files.ts"],
    projects: [
      { extends: true, test: { name: "one process", include: ["test/**/*.test.ts"], exclude: [...REPLICAS_ONLY, ...PACKAGING], maxWorkers: 2 } },
      ...(HAS_REDIS
        ? [
            // on one Redis: two Sandgate processes on a fresh prefix per test, requests alternating between them
            { extends: true as const, test: { name: "replicas", include: ON_REPLICAS, globalSetup: ["test/replica-setup.ts"], maxWorkers: 2 } },
            // on a 3-master Redis Cluster (each merchant's keys on the node of its hash slot)
            {
              extends: true as const,
              test: { name: "replicas (cluster)", include: ON_CLUSTER, globalSetup: ["test/replica-cluster-setup.ts"], maxWorkers: 2 },
            },
          ]
        : []),
    ],
  },
});
