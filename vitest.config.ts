import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // e2e tests spawn daemons and servers; keep the machine's two cores from thrashing.
    maxWorkers: 2,
  },
});
