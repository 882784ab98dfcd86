// Global setup of the "replicas" test project: one real Redis for the run, and a private build of
// Sandgate for the processes the tests start (dist/ itself is rebuilt by the packaging test while
// tests run, so the replicas run from their own copy, beside links to data/, fixtures/, ...).
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { TestProject } from "vitest/node";
import { startRedis } from "../scripts/redis-server.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** the run's Redis (replicas project only) */
    redisUrl: string;
    /** main.js of the private build */
    sandgateMain: string;
  }
}

export default async function setup(project: TestProject) {
  const root = resolve(import.meta.dirname, "..");
  const copy = mkdtempSync(join(tmpdir(), "sandgate-build-"));
  for (const name of ["package.json", "node_modules", "data", "assets", "fixtures", "scenarios"]) symlinkSync(join(root, name), join(copy, name));
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  execFileSync(process.execPath, [tsc, "-p", join(root, "tsconfig.build.json"), "--outDir", join(copy, "dist"), "--declaration", "false"], { stdio: "inherit" });
  const redis = await startRedis();
  project.provide("redisUrl", redis.url);
  project.provide("sandgateMain", join(copy, "dist", "main.js"));
  return async () => {
    await redis.close();
    rmSync(copy, { recursive: true, force: true });
  };
}
