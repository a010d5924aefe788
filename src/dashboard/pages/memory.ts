// Memory: the workspace's notes labelled by who sees them, an editor whose save is refused when
// the file changed on disk since it was opened (both versions are shown then), the file's
// recorded versions (the memory history, as `hearth memory log FILE`), and search through
// memory_search in the owner's scope.
import type { NoteEntry, NoteRead } from "../../memory/workspace-edit.ts";
import { localDate, localTime } from "../../process/time.ts";
import type { NoteVersion } from "../host.ts";
import { ago, badge, esc } from "../layout.ts";
import { field, type Page } from "../pages.ts";

export const page: Page = {
  id: "memory",
  path: "/memory",
  title: "Memory",
  order: 20,
  async render(host, url) {
    const notes = host.notes.list();
    const file = url.searchParams.get("file");
    const query = url.searchParams.get("q")?.trim() ?? "";
    const results = query ? await host.notes.search(query) : "";
    const versions = file ? await host.notes.history(file, HISTORY_ROWS) : [];
    return `
<div class="split">
<nav class="tree" aria-label="Workspace files">
${tree(notes, file)}
<p class="muted legend">${badge("main only", "ok")} only your main session · ${badge("shared", "warn")} every chat · ${badge("this chat", "muted")} one chat's folder</p>
</nav>
<div class="pane">
<form class="search" method="get" action="/memory" role="search">
  <label class="sr-only" for="q">Search memory</label>
  <input id="q" name="q" type="search" placeholder="Search memory…" value="${esc(query)}">
  <button class="btn" type="submit">Search</button>
</form>
${query ? `<section aria-labelledby="res"><h2 id="res">Results for “${esc(query)}”</h2><pre class="results">${esc(results)}</pre></section>` : ""}
${file ? editor(host.notes.read(file), file, notes) + history(file, versions, host.clock(), host.usage.timezone) : query ? "" : `<p class="empty">Pick a file to view or edit it.</p>`}
</div>
</div>`;
  },
  actions: {
    save(host, body) {
      const result = host.notes.save(field(body, "path"), field(body, "text", { optional: true, trim: false }), field(body, "version"));
      switch (result.type) {
        case "saved":
          return { version: result.version };
        case "stale":
          return { refusal: 409, error: "The file changed on disk since you opened it; nothing was saved. Both versions are shown below.", current: result.current, version: result.version };
        case "refused":
          return { refusal: 400, error: `Not saved: ${result.reason}.` };
      }
    },
  },
};

/** How many versions of a file the page lists, newest first. */
const HISTORY_ROWS = 20;

function history(file: string, versions: NoteVersion[], now: number, tz: string): string {
  const items = versions.map(
    (v) => `<li><details><summary><code>${esc(v.oid.slice(0, 7))}</code> <span>${esc(v.subject)}</span> <span class="muted">${esc(ago(v.at, now))} · ${esc(`${localDate(v.at, tz)} ${localTime(v.at, tz)}`)}</span></summary><pre class="diff">${diffHtml(v.diff)}</pre></details></li>`,
  );
  return `<section class="history" aria-labelledby="hi"><h2 id="hi">History</h2>${
    items.length
      ? `<ol class="versions">${items.join("")}</ol><p class="muted">${items.length === HISTORY_ROWS ? `The newest ${HISTORY_ROWS}; all of them: <code>hearth memory log ${esc(file)}</code>. ` : ""}To go back to a version: <code>hearth memory restore ${esc(file)} --at ID</code>.</p>`
      : `<p class="empty">No recorded change to ${esc(file)} yet (changes are recorded within a minute).</p>`
  }</section>`;
}

/** A unified diff with its added and removed lines marked. */
function diffHtml(diff: string): string {
  return diff
    .split("\n")
    .map((l) => (l.startsWith("+") && !l.startsWith("+++") ? `<ins>${esc(l)}</ins>` : l.startsWith("-") && !l.startsWith("---") ? `<del>${esc(l)}</del>` : esc(l)))
    .join("\n");
}

function tree(notes: NoteEntry[], open: string | null): string {
  if (notes.length === 0) return `<p class="empty">The workspace has no notes.</p>`;
  let folder = "";
  // The workspace's own files come first, under no heading.
  const out: string[] = [];
  for (const n of notes) {
    const dir = n.relPath.includes("/") ? n.relPath.slice(0, n.relPath.lastIndexOf("/")) : "";
    if (dir !== folder) {
      out.push(`</ul><h2 class="folder">${esc(dir)}/</h2><ul>`);
      folder = dir;
    }
    const kind = n.audience === "main only" ? "ok" : n.audience === "shared" ? "warn" : "muted";
    const name = n.relPath.slice(dir ? dir.length + 1 : 0);
    out.push(`<li><a href="/memory?file=${encodeURIComponent(n.relPath)}"${n.relPath === open ? ' aria-current="page"' : ""}>${esc(name)}</a> ${badge(n.audience, kind)}</li>`);
  }
  return `<ul>${out.join("")}</ul>`.replace("<ul></ul>", "");
}

function editor(read: NoteRead, file: string, notes: NoteEntry[]): string {
  if (read.type === "refused") return `<p class="error" role="alert">${esc(file)} cannot be opened here: ${esc(read.reason)}.</p>`;
  const audience = notes.find((n) => n.relPath === file)?.audience;
  const text = read.type === "ok" ? read.text : "";
  return `
<form class="editor" data-editor>
  <div class="row"><h2 class="file-name">${esc(file)}</h2>${audience ? badge(audience, audience === "main only" ? "ok" : "warn") : ""}${read.type === "missing" ? badge("new file") : ""}</div>
  <input type="hidden" name="path" value="${esc(file)}">
  <input type="hidden" name="version" value="${esc(read.version)}">
  <label class="sr-only" for="note-text">Contents of ${esc(file)}</label>
  <textarea id="note-text" name="text" rows="22" spellcheck="true">${esc(text)}</textarea>
  <div class="row"><span class="grow muted" data-saved></span><button class="btn primary" type="submit">Save</button></div>
  <div class="conflict" hidden>
    <div><h3>On disk now</h3><pre data-theirs></pre></div>
    <div><h3>Yours (not saved)</h3><pre data-mine></pre></div>
    <p class="row muted">Marked: lines that are not in the other version.</p>
    <div class="row"><button type="button" class="btn" data-take-theirs>Use the version on disk</button><button type="button" class="btn danger" data-keep-mine>Overwrite with mine</button></div>
  </div>
</form>`;
}
