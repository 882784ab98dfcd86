// The shell commands of docs/replicas.md, run as written in a merchant's project (see
// doc-project.ts) with only ports and folders swapped: the replicas started on one Redis are one
// sandbox (a payment authorised through one is found through another, and `--workers auto` serves
// the same payments), and the Redis Cluster recipe (three daemonized nodes, `redis-cli --cluster
// create`, Sandgate with `--redis-cluster --workers 2`) makes a cluster Sandgate pays and queries on.
// (The docker-compose block is docker's, not run here.)
import { execFile } from "node:child_process";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { clusterPort, freePort, HAS_REDIS, REDIS_CLI, startRedis, type TestRedis } from "../scripts/redis-server.js";
import { docPages, fencedBlocks } from "./docs-helpers.js";
import { docProject, untilHealthy, withPorts, type DocProject } from "./doc-project.js";
import { ACME, ANY_SIGNATURE, directPayment, parseXml, textOf } from "./helpers.js";

const blocks = fencedBlocks(
  docPages().find((p) => p.path === "docs/replicas.md")!,
  ["sh"],
);
/** the lines of the block whose first line starts so */
const block = (first: string) => {
  const found = blocks.filter((b) => b.text.startsWith(first));
  expect(found, `docs/replicas.md: one sh block starting ${first}`).toHaveLength(1);
  return found[0]!.text.split("\n");
};

let project: DocProject;

/** Authorises a direct payment of M10001 through the port; returns its order_no and transaction_id. */
async function pay(port: number) {
  const payment = directPayment();
  const res = await fetch(`http://127.0.0.1:${port}/v1/authorise`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(payment),
  });
  const xml = parseXml(await res.text());
  expect(res.status).toBe(200);
  expect(textOf(xml.order_status), JSON.stringify(xml)).toBe("1");
  return { orderNo: String(payment.order_no), transactionId: textOf(xml.transaction_id) };
}

/** POST /v1/retrievalTrans through the port: the payment is found, with its transaction_id. */
async function expectFound(port: number, paid: { orderNo: string; transactionId: string }) {
  const body = { merchant_id: ACME.merchant_id, account_id: ACME.account_id, order_no: paid.orderNo, encryption_data: ANY_SIGNATURE };
  const res = await fetch(`http://127.0.0.1:${port}/v1/retrievalTrans`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
  const { orders_list } = (await res.json()) as { orders_list: Record<string, unknown>[] };
  expect(orders_list).toEqual([expect.objectContaining({ order_no: paid.orderNo, transaction_id: paid.transactionId, query_result: "1" })]);
}

beforeAll(() => {
  project = docProject();
});
afterAll(() => project.close());

describe.skipIf(!HAS_REDIS)("docs/replicas.md", () => {
  describe("replicas on one Redis", () => {
    let redis: TestRedis;
    beforeAll(async () => {
      redis = await startRedis();
    });
    afterAll(() => redis?.close());

    test("two replicas on ports and one with --workers auto are one sandbox: a payment made through one is found through the others", async () => {
      const lines = block("npx sandgate --redis-url redis://127.0.0.1:6379/0 --port 8081 &");
      expect(lines[2]).toContain("--workers auto");
      const [a, b, workers] = [await freePort(), await freePort(), await freePort()];
      // the first three lines: two replicas in the background, the --workers one (no --port) in front
      const script = withPorts(lines.slice(0, 3).join("\n"), { 6379: redis.port, 8081: a, 8082: b });
      const run = project.start(script, { env: { PORT: String(workers) }, timeoutMs: 240_000 });
      try {
        await Promise.all([a, b, workers].map((port) => untilHealthy(port, run.done)));
        const paid = await pay(a);
        await expectFound(b, paid);
        await expectFound(workers, paid);
        const paidOnWorkers = await pay(workers);
        await expectFound(workers, paidOnWorkers);
        await expectFound(a, paidOnWorkers);
      } finally {
        await run.stop();
      }
    }, 180_000);
  });

  describe("a Redis Cluster for trying it out", () => {
    const nodes: number[] = [];
    afterAll(async () => {
      const shutdown = (port: number) => new Promise((done) => execFile(REDIS_CLI, ["-p", String(port), "shutdown", "nosave"], { timeout: 10_000 }, done));
      await Promise.all(nodes.map(shutdown));
    });

    test("three nodes, `redis-cli --cluster create`, then Sandgate --redis-cluster --workers 2 pays and finds the payment", async () => {
      const lines = block("for port in 7000 7001 7002; do");
      while (nodes.length < 3) nodes.push(await clusterPort(nodes));
      const ports = Object.fromEntries([7000, 7001, 7002].map((p, i) => [p, nodes[i]!]));
      const script = withPorts(lines.join("\n"), ports).replaceAll("/tmp/cluster", join(project.dir, "cluster")).split("\n");
      const create = script.findIndex((l) => l.startsWith("redis-cli --cluster create"));
      expect(create, "the block creates the cluster before Sandgate starts").toBe(script.length - 2);
      // the nodes (daemonized: they outlive the script) and the cluster
      const made = await project.run(script.slice(0, create + 1).join("\n"), { timeoutMs: 60_000 });
      expect(made.code, made.stdout + made.stderr).toBe(0);
      expect(made.stdout).toContain("[OK] All 16384 slots covered");
      // Sandgate on the cluster (--workers 2, no --port)
      const sandgate = await freePort();
      const run = project.start(script[create + 1]!, { env: { PORT: String(sandgate) }, timeoutMs: 240_000 });
      try {
        await untilHealthy(sandgate, run.done);
        const paid = await pay(sandgate);
        await expectFound(sandgate, paid);
      } finally {
        await run.stop();
      }
    }, 240_000);
  });
});
