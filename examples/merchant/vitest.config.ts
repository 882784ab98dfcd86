import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    // one Sandgate for the whole run, started before the first test file and stopped after the last
    globalSetup: ["test/global-setup.ts"],
    projects: [
      // the shop's flows first; then, once they are all done, the coverage gate over what they reached
      { test: { name: "shop", include: ["test/**/*.test.ts"], exclude: ["test/coverage-gate.test.ts"], sequence: { groupOrder: 0 } } },
      { test: { name: "coverage gate", include: ["test/coverage-gate.test.ts"], sequence: { groupOrder: 1 } } },
    ],
  },
});
