import { defineConfig } from "vitest/config";

/**
 * `npm run test:packaging`: what builds, packs and installs the package as its users get it (the
 * published types, `npm start` on a fresh copy, the install paths, the Docker image, compose.yaml and
 * sandgate/testcontainers).
 * Minutes of builds that prove the package, not Sandgate's behaviour: out of `npm test`'s edit loop,
 * run by `.ci/run` after it.
 */
export const PACKAGING = [
  "test/published-types.test.ts",
  "test/npm-start.test.ts",
  "test/install-paths.test.ts",
  "test/docker.test.ts",
  "test/testcontainers.test.ts",
];

export default defineConfig({
  test: {
    testTimeout: 20_000,
    hookTimeout: 30_000,
    reporters: ["default", "./test/slowest-files.ts"],
    include: PACKAGING,
    maxWorkers: 2,
  },
});
