// `hearth start` on a full disk (a 2 MB tmpfs): a clear error naming the home folder, not a
// bare ENOSPC line. Skipped where the sandbox refuses the mount.
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { isolatedEnv, runHearth } from "../support/cli-process.ts";
import { mountTmpfs, type Tmpfs } from "../support/tmpfs.ts";

const fs: Tmpfs | null = mountTmpfs(2);
afterAll(() => fs?.unmount());

describe.runIf(fs !== null)("hearth start on a full disk (e2e)", () => {
  it("exits 1 with one line that names the home folder and says to free space", async () => {
    const home = join(fs!.dir, "home");
    fs!.fill();
    const r = await runHearth(["start"], isolatedEnv({ HEARTH_HOME: home, HEARTH_LOG: "silent", ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: "http://127.0.0.1:9" }));
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(
      new RegExp(
        `^hearth: The disk that holds Hearth's home folder ${home} is full \\(ENOSPC: no space left on device, [^)]*\\)\\. ` +
          `Free some space on it \\(\`df -h ${home}\` shows how much is left\\), then start Hearth again; accepted messages are kept and answered then\\.\\n$`,
      ),
    );
  });
});
