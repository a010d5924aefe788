import { describe, expect, it } from "vitest";
import { DiskRetry } from "../../../src/gateway/upkeep/disk-retry.ts";
import { silentLogger } from "../../../src/process/log.ts";
import { waitFor } from "../../support/daemon.ts";

describe("DiskRetry", () => {
  it("hands kept messages back once, and only when the disk has space again", async () => {
    let free = 0;
    let checks = 0;
    const resubmitted: string[][] = [];
    const retry = new DiskRetry({
      home: "/nowhere",
      log: silentLogger,
      everyMs: 5,
      minFreeBytes: 100,
      freeBytes: () => {
        checks++;
        return free;
      },
      resubmit: (ids) => resubmitted.push(ids),
    });
    retry.keep(["telegram:1"]);
    retry.keep(["telegram:2"]);
    await waitFor("a few checks of a full disk", () => checks >= 3);
    expect(resubmitted).toEqual([]);
    free = 100;
    await waitFor("the resubmit", () => resubmitted.length === 1);
    const after = checks;
    await new Promise((r) => setTimeout(r, 50));
    expect(resubmitted).toEqual([["telegram:1", "telegram:2"]]);
    expect(checks).toBe(after); // nothing kept: no more polling
    retry.stop();
  });
});
