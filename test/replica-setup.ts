// Global setup of the "replicas" test projects: a real Redis for the run (one redis-server, or a
// 3-master Redis Cluster for "replicas (cluster)"), and a private build of Sandgate for the
// processes the tests start (dist/ itself is rebuilt by the packaging test while tests run, so the
// replicas run from their own copy, beside links to data/, fixtures/, ...).
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { TestProject } from "vitest/node";
import { startRedis, startRedisCluster } from "../scripts/redis-server.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** the run's Redis (replicas projects only): a node of the cluster in "replicas (cluster)" */
    redisUrl: string;
    /** true in "replicas (cluster)": Sandgate is started with --redis-cluster */
    redisCluster: boolean;
    /** main.js of the private build */
    sandgateMain: string;
  }
}

export async function setupReplicas(project: TestProject, cluster: boolean) {
  const root = resolve(import.meta.dirname, "..");
  const copy = mkdtempSync(join(tmpdir(), "sandgate-build-"));
  for (const name of ["package.json", "node_modules", "data", "assets", "fixtures", "scenarios"]) symlinkSync(join(root, name), join(copy, name));
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  execFileSync(process.execPath, [tsc, "-p", join(root, "tsconfig.build.json"), "--outDir", join(copy, "dist"), "--declaration", "false"], {
    stdio: "inherit",
  });
  const redis = cluster ? await startRedisCluster() : await startRedis();
  project.provide("redisUrl", redis.url);
  project.provide("redisCluster", cluster);
  project.provide("sandgateMain", join(copy, "dist", "main.js"));
  return async () => {
    await redis.close();
    rmSync(copy, { recursive: true, force: true });
  };
}

export default (project: TestProject) => setupReplicas(project, false);
