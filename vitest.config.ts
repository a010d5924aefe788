import { defineConfig } from "vitest/config";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * Vitest runs the files that took longest last time first; on a fresh clone (CI) it knows no
 * durations and runs the largest files first. The daemon tests are the long ones (up to a minute
 * each), and one of them starting last keeps the whole suite waiting on it: without durations,
 * they go first.
 */
class DaemonTestsFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    if (files.every((f) => this.ctx.cache.getTestSpecificationResult(f))) return sorted;
    const daemon = (f: TestSpecification) => (/\/test\/(e2e|channels\/conformance)\//.test(f.moduleId) ? 0 : 1);
    return sorted.sort((a, b) => daemon(a) - daemon(b));
  }
}

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // A test's limit is how long it may take to fail, not to pass. e2e tests start the daemon up
    // to three times and wait for conditions with limits of their own (test/support/limits.ts,
    // 90 s each); on a loaded two-core machine one daemon start alone can take 15–60 s of wall time.
    // These outer limits only catch a test that hangs outside those waits.
    testTimeout: 300_000,
    hookTimeout: 120_000,
    // e2e tests spawn daemons and servers and spend most of their time waiting on them: four
    // workers keep a two-core machine busy without thrashing it (on an idle two-core machine the
    // suite took 400 s with two workers and 300 s with three before the five new channels; with
    // them, 369 s with three).
    maxWorkers: 4,
    sequence: { sequencer: DaemonTestsFirst },
  },
});
