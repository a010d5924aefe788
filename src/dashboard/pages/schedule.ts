// Schedule: the cron jobs (add, pause, resume, run now, delete) through the cron service, as
// `hearth cron` does; their recent runs with outcome and cost; the heartbeat's rhythm and last ticks.
import { CONFIGURABLE } from "../../channels/registry.ts";
import { parseDeliveryText } from "../../scheduler/job.ts";
import type { JobView } from "../../scheduler/view.ts";
import type { DashboardHost } from "../host.ts";
import { actionButton, ago, badge, esc, table, usd } from "../layout.ts";
import { field, type Page } from "../pages.ts";

export const page: Page = {
  id: "schedule",
  path: "/schedule",
  title: "Schedule",
  order: 30,
  render(host) {
    const now = host.clock();
    const jobs = host.cron.list();
    const jobRows = jobs.map((j) => [
      `<strong>${esc(j.name)}</strong> <span class="muted">${esc(j.id)}</span><br><span class="muted clip">${esc(j.prompt)}</span>`,
      `<code>${esc(j.scheduleText)}</code>`,
      j.running ? badge("running", "warn") : j.enabled ? badge("active", "ok") : badge("paused"),
      j.nextRunAt && j.enabled ? esc(j.nextRunAt.replace("T", " ").slice(0, 16)) : "—",
      j.lastRunAt ? `${esc(ago(Date.parse(j.lastRunAt), now))} ${j.lastStatus ? badge(j.lastStatus, j.lastStatus === "ok" ? "ok" : "bad") : ""}` : "never",
      `<div class="actions">${editButton(j)}${actionButton("Run now", "schedule/run", { id: j.id })}${actionButton(j.enabled ? "Pause" : "Resume", "schedule/enable", { id: j.id, enabled: j.enabled ? "false" : "true" })}${actionButton("Delete", "schedule/remove", { id: j.id }, { kind: "danger", confirm: `Delete the job "${j.name}"?` })}</div>`,
    ]);
    const hb = host.cron.heartbeat();
    return `
<section aria-labelledby="jobs"><h2 id="jobs">Jobs</h2>${table(["Job", "When", "State", "Next", "Last", ""], jobRows, "No scheduled jobs yet.", "Jobs")}</section>
<section aria-labelledby="add"><h2 id="add">Add a job</h2>
<form class="grid-form" id="job-form" data-action="/api/schedule/save" data-reload>
  <input type="hidden" name="id" value="">
  <input type="hidden" name="tz" value="">
  <label>Name <input name="name" required maxlength="80" placeholder="Morning briefing"></label>
  <label>Repeat
    <select name="kind"><option value="cron">cron expression</option><option value="every">every (interval)</option><option value="at">once, at</option></select></label>
  <label>Schedule <input name="when" required placeholder="${WHEN_EXAMPLE.cron}" data-examples="${esc(JSON.stringify(WHEN_EXAMPLE))}"></label>
  <label>Session <select name="session"><option value="main">main</option><option value="isolated">isolated</option></select></label>
  <label>Deliver to <input name="deliver" value="owner" placeholder="${esc(`owner, none, ${CONFIGURABLE.filter((c) => c.chats).map((c) => `${c.id}:${c.chats!.label}`).join(", ")}`)}"></label>
  <label class="wide">Message <textarea name="message" rows="3" required placeholder="What Hearth should do"></textarea></label>
  <div class="wide row"><span class="grow"></span><button class="btn" type="reset" hidden data-cancel-edit>Cancel</button><button class="btn primary" type="submit">Add job</button></div>
</form></section>
<section aria-labelledby="runs"><h2 id="runs">Recent runs</h2>${table(["Job", "When", "Outcome", "Took", "Cost", "Delivery"], runRows(host), "No runs yet.", "Recent runs")}</section>
<section aria-labelledby="hb"><h2 id="hb">Heartbeat</h2>
<p>Every <strong>${esc(hb.every)}</strong> between ${esc(hb.activeHours)}.</p>
${table(["When", "Event", "Detail"], hb.lastTicks.map((t) => [esc(t.at.replace("T", " ").slice(0, 19)), `<code>${esc(t.event)}</code>`, esc(t.detail)]), "No heartbeat since the daemon started.", "Heartbeat ticks")}
</section>`;
  },
  actions: {
    /** Adds a job, or with `id` changes that one (its delivery only when one is given). */
    save(host, body) {
      const kind = field(body, "kind");
      if (kind !== "cron" && kind !== "every" && kind !== "at") throw new Error('Pick how the job repeats: "cron", "every" or "at".');
      const input = {
        name: field(body, "name"),
        [kind]: field(body, "when"),
        tz: (kind === "cron" && field(body, "tz", { optional: true })) || undefined,
        message: field(body, "message"),
        session: field(body, "session", { optional: true }) || undefined,
        deliver: field(body, "deliver", { optional: true }) || undefined,
      };
      const id = field(body, "id", { optional: true });
      if (id) {
        const job = host.cron.update(id, input);
        return { message: `Saved "${job.name}".` };
      }
      const job = host.cron.add(input);
      return { message: `Added "${job.name}" (${job.id}).` };
    },
    remove(host, body) {
      const job = host.cron.remove(field(body, "id"));
      return { message: `Deleted "${job.name}".` };
    },
    run(host, body) {
      host.cron.runNow(field(body, "id"));
      return { message: "Started; its answer goes where the job delivers." };
    },
    enable(host, body) {
      const job = host.cron.setEnabled(field(body, "id"), field(body, "enabled") === "true");
      return { message: `${job.enabled ? "Resumed" : "Paused"} "${job.name}".` };
    },
  },
};

/** Fills the form with the job (the page's script); a delivery the form cannot express is kept as is. */
function editButton(j: JobView): string {
  const when = j.schedule.kind === "cron" ? j.schedule.expr : j.schedule.kind === "every" ? j.schedule.every : j.schedule.at;
  const deliver = j.deliver === "owner" || j.deliver === "none" || parseDeliveryText(j.deliver)?.to === "chat" ? j.deliver : "";
  const fields = { id: j.id, name: j.name, kind: j.schedule.kind, when, tz: j.schedule.kind === "cron" ? (j.schedule.tz ?? "") : "", session: j.session, deliver, message: j.prompt };
  return `<button type="button" class="btn" data-edit-job="${esc(JSON.stringify(fields))}" aria-controls="job-form">Edit</button>`;
}

/** The Schedule field's example for the chosen kind (the page's script swaps it): one format at a time. */
const WHEN_EXAMPLE = { cron: "0 9 * * *", every: "30m", at: "2026-12-01T09:00:00Z" };

function runRows(host: DashboardHost): string[][] {
  const runs = host.cron.recentRuns(20);
  const nameOf = host.names();
  const oldest = runs.reduce((m, r) => Math.min(m, Date.parse("startedAt" in r && r.startedAt ? r.startedAt : r.at)), Infinity);
  const cronCalls = Number.isFinite(oldest) ? host.usage.records(oldest).filter((u) => u.purpose === "cron") : [];
  return runs.map((r) => {
    if (r.status === "skipped") return [esc(r.job), esc(r.scheduledAt.replace("T", " ").slice(0, 16)), badge("skipped"), "—", "—", esc(r.reason)];
    const from = Date.parse(r.startedAt ?? r.at);
    const to = Date.parse(r.at);
    const cost = cronCalls.filter((u) => (u.session === `cron:${r.jobId}` || u.session === "main") && Date.parse(u.at) >= from && Date.parse(u.at) <= to).reduce((s, u) => s + u.costUsd, 0);
    return [
      esc(r.job),
      esc(r.at.replace("T", " ").slice(0, 16)),
      badge(r.status, r.status === "ok" ? "ok" : "bad") + (r.error ? ` <span class="muted">${esc(r.error)}</span>` : ""),
      r.durationMs !== undefined ? `${(r.durationMs / 1000).toFixed(1)} s` : "—",
      usd(cost),
      esc(`${r.delivery.status}${r.delivery.to ? ` → ${nameOf(r.delivery.to) ? `${nameOf(r.delivery.to)} (${r.delivery.to})` : r.delivery.to}` : ""}`),
    ];
  });
}
