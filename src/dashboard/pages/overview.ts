// Overview: the daemon at a glance — channels, sessions and their lanes, uptime, memory, spend,
// the last problems logged, damaged files, and what waits for the owner: approvals, pairings, and
// a channel linked as a device that waits for its link (WhatsApp's QR code or pairing code).
import type { DeviceLink } from "../../channels/channel.ts";
import { svgQr } from "../../channels/qr-code.ts";
import { channelDescriptor } from "../../channels/registry.ts";
import type { DashboardHost } from "../host.ts";
import { ago, badge, esc, named, table, usd } from "../layout.ts";
import type { Page } from "../pages.ts";

export const page: Page = {
  id: "overview",
  path: "/",
  title: "Overview",
  order: 0,
  async render(host) {
    const s = host.status();
    const links = await Promise.all(s.channels.flatMap((c) => (c.state === "starting" && c.link ? [linkSection(c.id, c.link)] : [])));
    const now = host.clock();
    const rss = process.memoryUsage().rss;
    const pending = host.people.pending();
    const questions = host.approvals.open();
    const nameOf = host.names();
    const channelRows = s.channels.map((c) => {
      const detail = c.state === "failed" ? c.reason : c.state === "reconnecting" ? c.detail : c.state === "running" ? (c.detail ?? "") : c.state === "starting" && c.link ? "waiting to be linked (above)" : "";
      return [`<strong>${esc(c.id)}</strong>`, badge(c.state === "failed" ? "not running" : c.state, c.state === "running" ? "ok" : c.state === "failed" ? "bad" : "warn"), esc(detail)];
    });
    const sessionRows = s.sessions
      .sort((a, b) => b.lastActivityAt - a.lastActivityAt)
      .map((x) => [
        named(nameOf(x.key), x.key),
        badge(x.scope, x.scope === "main" ? "ok" : "muted"),
        x.waitingFor
          ? `${badge("waiting for your approval", "warn")} <a href="/approvals"><code class="cmd">${esc(x.waitingFor)}</code></a>`
          : x.running
            ? badge(`answering ${Math.round((x.runningForMs ?? 0) / 1000)} s`, "warn")
            : badge("idle"),
        esc(x.queued),
        `${esc(x.contextPercent)} %`,
        esc(ago(x.lastActivityAt, now)),
      ]);
    const problems = lastProblems(host);
    const b = s.budget;
    return `
<section class="cards" aria-label="At a glance">
  <div class="card"><div class="label">Up</div><div class="value">${esc(ago(s.startedAt, now).replace(" ago", ""))}</div><div class="muted">pid ${esc(s.pid)}</div><div class="muted model" title="${esc(s.model)}">${esc(s.model)}</div></div>
  <div class="card"><div class="label">Memory</div><div class="value">${(rss / 1024 / 1024).toFixed(0)} MB</div><div class="muted">resident</div></div>
  <div class="card"><div class="label">Today</div><div class="value">${usd(b.today.spentUsd)}</div><div class="muted">${b.today.limitUsd !== null ? `of ${usd(b.today.limitUsd)}` : "no daily budget"}</div></div>
  <div class="card"><div class="label">Waiting</div><div class="value">${questions.length + pending.length}</div><div class="muted"><a href="/approvals">${questions.length} ${questions.length === 1 ? "approval" : "approvals"}</a> · <a href="/people">${pending.length} ${pending.length === 1 ? "pairing" : "pairings"}</a></div></div>
</section>
${links.join("")}<section aria-labelledby="ch"><h2 id="ch">Channels</h2>${table(["Channel", "State", "Detail"], channelRows, "No channels.", "Channels")}</section>
<section aria-labelledby="se"><h2 id="se">Sessions</h2>${table(["Session", "Scope", "Lane", "Queued", "Context", "Last"], sessionRows, "No sessions yet.", "Sessions")}</section>
<section aria-labelledby="ap"><h2 id="ap">Pending approvals</h2>${table(["Action", "Session", "Asked"], questions.map((q) => [`<code class="cmd">${esc(q.tool)}: ${esc(q.command)}</code>`, named(nameOf(q.session), q.session), esc(ago(q.at, now))]), "Nothing is waiting for your approval.", "Pending approvals")}${questions.length ? `<p><a href="/approvals">Answer on the Approvals page</a></p>` : ""}</section>
<section aria-labelledby="pe"><h2 id="pe">Pending pairings</h2>${table(["Code", "Who", "Asked"], pending.map((p) => [`<code>${esc(p.code)}</code>`, `${esc(p.name)} <span class="muted">${esc(p.channel)}:${esc(p.userId)}</span>`, esc(ago(p.createdAt, now))]), "Nobody is waiting.", "Pending pairings")}</section>
<section aria-labelledby="pr"><h2 id="pr">Last problems</h2>${table(["When", "Level", "Event"], problems, "No warnings or errors since the daemon started.", "Last problems")}</section>
<section aria-labelledby="da"><h2 id="da">Damaged files</h2>${s.damaged.length ? `<ul>${s.damaged.map((d) => `<li>${esc(d)}</li>`).join("")}</ul>` : `<p class="empty">None.</p>`}</section>
${s.terminalMailbox ? `<p>${s.terminalMailbox} message(s) wait in the terminal's mailbox.</p>` : ""}`;
  },
};

/** What to do on the phone to link a channel, with the code to scan (an SVG, and its text) or type. */
async function linkSection(id: string, link: DeviceLink): Promise<string> {
  const name = channelDescriptor(id)?.name ?? id;
  const head = `<section aria-labelledby="link-${esc(id)}"><h2 id="link-${esc(id)}">Link ${esc(name)}</h2>`;
  if (link.how === "code") {
    return `${head}<p>${esc(name)} is not linked yet. On the phone with Hearth's number: ${esc(name)} → Settings → Linked devices → Link a device → Link with phone number instead, and type <code class="pairing-code">${esc(link.code)}</code></p></section>`;
  }
  const svg = await svgQr(link.qr);
  return `${head}<p>${esc(name)} is not linked yet. On the phone with Hearth's number: ${esc(name)} → Settings → Linked devices → Link a device, and scan this code (it is renewed every few seconds: reload the page if the phone refuses it).</p>${svg ? `<div class="qr" role="img" aria-label="QR code to link ${esc(name)}">${svg}</div>` : ""}<p class="muted">The code's text: <code>${esc(link.qr)}</code></p></section>`;
}

function lastProblems(host: DashboardHost): string[][] {
  const out: string[][] = [];
  for (const line of host.logs.lines().reverse()) {
    if (out.length >= 5) break;
    try {
      const { t, level, event, error } = JSON.parse(line) as Record<string, unknown>;
      if (level !== "warn" && level !== "error") continue;
      const message = error && typeof error === "object" ? String((error as { message?: unknown }).message ?? "") : "";
      out.push([esc(String(t).slice(11, 19)), badge(String(level), level === "error" ? "bad" : "warn"), `<code>${esc(event)}</code>${message ? ` ${esc(message)}` : ""}`]);
    } catch {
      // not a JSON line
    }
  }
  return out;
}
