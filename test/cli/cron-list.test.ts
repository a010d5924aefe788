// `hearth cron list` as text: a job's times in the zone it was given, and the dashboard's word
// for a job that does not run.
import { describe, expect, it } from "vitest";
import { formatJobs } from "../../src/cli/cron.ts";
import type { JobView } from "../../src/scheduler/view.ts";

const job = (over: Partial<JobView>): JobView => ({
  id: "a1b2c3d4",
  name: "Standup",
  enabled: true,
  schedule: { kind: "cron", expr: "0 9 * * 1-5", tz: "Europe/Berlin" },
  scheduleText: 'cron "0 9 * * 1-5" (Europe/Berlin)',
  prompt: "Time for the standup.",
  session: "main",
  deliver: "owner",
  catchUp: "1h",
  createdAt: null,
  nextRunAt: "2026-12-01T08:00:00.000Z",
  lastRunAt: "2026-11-30T08:00:00.000Z",
  lastStatus: "ok",
  lastError: null,
  lastDelivery: "delivered",
  running: false,
  ...over,
});

describe("cron list", () => {
  it("shows next and last runs in the job's own zone, not the config's", () => {
    expect(formatJobs([job({})], "UTC")).toBe(
      'a1b2c3d4  Standup\n    cron "0 9 * * 1-5" (Europe/Berlin) · main session · delivery owner\n    next 2026-12-01 09:00 Europe/Berlin · last ok (delivered) 2026-11-30 09:00 Europe/Berlin\n    Time for the standup.\n',
    );
  });

  it("a job without a zone of its own uses the config's; a paused one says paused, as the dashboard does", () => {
    const every = job({ enabled: false, schedule: { kind: "every", every: "6h" }, scheduleText: "every 6h", lastStatus: null, lastRunAt: null, lastDelivery: null });
    expect(formatJobs([every], "Asia/Tokyo")).toBe(
      "a1b2c3d4  Standup  [paused]\n    every 6h · main session · delivery owner\n    next 2026-12-01 17:00 Asia/Tokyo · last never run\n    Time for the standup.\n",
    );
  });
});
