// The Logs page: renders the JSON lines, filters them by level and component, and appends new
// ones from the server's event stream.
"use strict";
(() => {
  const box = document.getElementById("log");
  const filters = document.getElementById("log-filters");
  const rank = { debug: 10, info: 20, warn: 30, error: 40 };

  function render(el, raw) {
    let rec;
    try {
      rec = JSON.parse(raw);
    } catch {
      el.textContent = raw;
      return;
    }
    const { t, level, event, component, ...rest } = rec;
    el.dataset.level = level;
    el.dataset.component = component ?? "";
    el.className = `line lv-${level}`;
    const time = document.createElement("span");
    time.textContent = `${String(t).slice(11, 19)} ${String(level).padEnd(5)} `;
    const ev = document.createElement("span");
    ev.className = "ev";
    ev.textContent = event;
    const fields = document.createElement("span");
    fields.textContent = `${component ? ` [${component}]` : ""}${Object.keys(rest).length ? ` ${JSON.stringify(rest)}` : ""}`;
    el.replaceChildren(time, ev, fields);
  }

  function visible(el) {
    const f = new FormData(filters);
    return (rank[el.dataset.level] ?? 0) >= rank[f.get("level")] && (!f.get("component") || el.dataset.component === f.get("component"));
  }
  const apply = () => {
    for (const el of box.children) el.hidden = !visible(el);
    follow();
  };
  const follow = () => {
    if (new FormData(filters).get("follow")) box.scrollTop = box.scrollHeight;
  };

  for (const el of box.children) render(el, el.dataset.line);
  apply();
  filters.addEventListener("change", apply);

  const source = new EventSource("/api/logs/stream");
  source.onmessage = (m) => {
    const el = document.createElement("div");
    render(el, m.data);
    el.hidden = !visible(el);
    box.append(el);
    while (box.children.length > 2000) box.firstElementChild.remove();
    follow();
  };
})();
