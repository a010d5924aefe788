// `hearth start` on a full disk (a 2 MB tmpfs): a clear error naming the home folder, not a
// bare ENOSPC line. Skipped where the sandbox refuses the mount.
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { isolatedEnv, runHearth } from "../support/cli-process.ts";
import { mountTmpfs, type Tmpfs } from "../support/tmpfs.ts";

const fs: Tmpfs | null = mountTmpfs(2);
afterAll(() => fs?.unmount());

const diskFullLine = (home: string) =>
  new RegExp(
    `^hearth: The disk that holds Hearth's home folder ${home} is full \\(ENOSPC: no space left on device, [^)]*\\)\\. ` +
      `Free some space on it \\(\`df -h ${home}\` shows how much is left\\), then start Hearth again; accepted messages are kept and answered then\\.\\n$`,
  );

describe.runIf(fs !== null)("starting on a full disk (e2e)", () => {
  it("hearth start and hearth chat -m (no daemon) exit 1 with one line that names the home folder", async () => {
    const home = join(fs!.dir, "home");
    fs!.fill();
    const env = isolatedEnv({ HEARTH_HOME: home, HEARTH_LOG: "silent", ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: "http://127.0.0.1:9" });
    const start = await runHearth(["start"], env);
    expect(start.code).toBe(1);
    expect(start.stdout).toBe("");
    expect(start.stderr).toMatch(diskFullLine(home));
    const chat = await runHearth(["chat", "-m", "hello"], env);
    expect(chat.code).toBe(1);
    expect(chat.stdout).toBe("");
    expect(chat.stderr).toMatch(diskFullLine(home));
  });
});
