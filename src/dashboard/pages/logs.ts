// Logs: the daemon's newest log lines, then new ones as they are written (server-sent events),
// filtered by level and component in the page. Lines are already redacted by the logger.
import { esc } from "../layout.ts";
import type { Page } from "../pages.ts";

export const page: Page = {
  id: "logs",
  path: "/logs",
  title: "Logs",
  order: 90,
  render(host) {
    const lines = host.logs.lines();
    const components = new Set<string>();
    for (const l of lines) {
      try {
        const c = (JSON.parse(l) as { component?: unknown }).component;
        if (typeof c === "string") components.add(c);
      } catch {
        // not JSON
      }
    }
    return `
<form class="filters" id="log-filters" aria-label="Filters">
  <label>Level <select name="level"><option value="debug">all</option><option value="info" selected>info and up</option><option value="warn">warnings and errors</option><option value="error">errors</option></select></label>
  <label>Component <select name="component"><option value="">all</option>${[...components].sort().map((c) => `<option>${esc(c)}</option>`).join("")}</select></label>
  <label class="check"><input type="checkbox" name="follow" checked> follow</label>
</form>
<div class="log" id="log" role="log" aria-live="off" tabindex="0">${lines.map((l) => `<div class="line" data-line="${esc(l)}"></div>`).join("")}</div>
<script src="/static/logs.js" defer></script>`;
  },
};
