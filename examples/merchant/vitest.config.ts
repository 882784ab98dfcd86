import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // one Sandgate for the whole suite, started before the first test file and stopped after the last
    globalSetup: ["test/global-setup.ts"],
  },
});
