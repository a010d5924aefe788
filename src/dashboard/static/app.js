// The dashboard's shared script: every state-changing request is a same-origin JSON POST with
// the page's CSRF token; buttons and forms marked data-action use it; the memory editor saves.
"use strict";
(() => {
  const csrf = document.querySelector('meta[name="csrf-token"]')?.content ?? "";

  /** POSTs `body` as JSON; resolves with the parsed answer ({ ok, error, … }) and the response. */
  async function post(url, body) {
    const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json", "x-csrf-token": csrf }, body: JSON.stringify(body), credentials: "same-origin" });
    const type = res.headers.get("content-type") ?? "";
    const data = type.startsWith("application/json") ? await res.json() : { ok: res.ok, error: (await res.text()).trim() };
    return { res, data };
  }

  let toastTimer;
  function toast(text, bad) {
    const el = document.querySelector(".toast");
    if (!el) return;
    el.textContent = text;
    el.classList.toggle("bad", Boolean(bad));
    el.hidden = false;
    clearTimeout(toastTimer);
    toastTimer = setTimeout(() => (el.hidden = true), bad ? 8000 : 3500);
  }

  window.hearth = { post, toast, csrf };

  document.addEventListener("click", async (ev) => {
    const btn = ev.target.closest("button[data-action]");
    if (!btn) return;
    if (btn.dataset.confirm && !confirm(btn.dataset.confirm)) return;
    btn.disabled = true;
    const { data } = await post(btn.dataset.action, JSON.parse(btn.dataset.args || "{}"));
    if (data.ok) {
      sessionStorage.setItem("hearth-toast", data.message || "Done.");
      location.reload();
    } else {
      btn.disabled = false;
      toast(data.error || "That did not work.", true);
    }
  });

  document.addEventListener("submit", async (ev) => {
    const form = ev.target;
    if (!(form instanceof HTMLFormElement) || !form.dataset.action) return;
    ev.preventDefault();
    const { data } = await post(form.dataset.action, Object.fromEntries(new FormData(form)));
    if (data.ok) {
      if (form.dataset.reload !== undefined) {
        sessionStorage.setItem("hearth-toast", data.message || "Done.");
        location.reload();
      } else toast(data.message || "Done.");
    } else toast(data.error || "That did not work.", true);
  });

  // Schedule: "Edit" fills the job form; saving it changes that job instead of adding one.
  const jobForm = document.getElementById("job-form");
  if (jobForm) {
    const submit = jobForm.querySelector('button[type="submit"]');
    const cancel = jobForm.querySelector("[data-cancel-edit]");
    const heading = document.getElementById("add");
    // The Schedule field's example follows the kind: one format at a time.
    const kind = jobForm.elements.namedItem("kind");
    const when = jobForm.elements.namedItem("when");
    const examples = JSON.parse(when.dataset.examples);
    const showExample = () => (when.placeholder = examples[kind.value] || "");
    kind.addEventListener("change", showExample);
    document.addEventListener("click", (ev) => {
      const btn = ev.target.closest("button[data-edit-job]");
      if (!btn) return;
      const job = JSON.parse(btn.dataset.editJob);
      for (const [k, v] of Object.entries(job)) {
        const el = jobForm.elements.namedItem(k);
        if (el) el.value = v;
      }
      const deliver = jobForm.elements.namedItem("deliver");
      deliver.placeholder = job.deliver ? deliver.placeholder : "unchanged";
      showExample();
      submit.textContent = "Save changes";
      heading.textContent = `Edit "${job.name}"`;
      cancel.hidden = false;
      heading.scrollIntoView({ block: "start" });
      jobForm.elements.namedItem("name").focus();
    });
    jobForm.addEventListener("reset", () => {
      setTimeout(() => {
        jobForm.elements.namedItem("id").value = "";
        jobForm.elements.namedItem("tz").value = "";
        submit.textContent = "Add job";
        heading.textContent = "Add a job";
        cancel.hidden = true;
        showExample();
      });
    });
  }

  // A chart wider than a phone opens at its newest days (its dollar scale does not scroll).
  for (const plot of document.querySelectorAll(".chart .plot")) plot.scrollLeft = plot.scrollWidth;

  const pending = sessionStorage.getItem("hearth-toast");
  if (pending) {
    sessionStorage.removeItem("hearth-toast");
    toast(pending);
  }

  /** `text` into `pre`, each line a span; a line the other version lacks is marked (class "differs"). */
  function showLines(pre, text, other) {
    const others = new Set(other.split("\n"));
    pre.textContent = "";
    text.split("\n").forEach((line, i, lines) => {
      const span = document.createElement("span");
      span.textContent = line;
      if (line !== "" && !others.has(line)) span.className = "differs";
      pre.append(span);
      if (i < lines.length - 1) pre.append("\n");
    });
  }

  // The memory editor: a save names the version it was opened at; a 409 shows both versions.
  const editor = document.querySelector("form[data-editor]");
  if (editor) {
    const conflict = editor.querySelector(".conflict");
    const saved = editor.querySelector("[data-saved]");
    const text = editor.elements.namedItem("text");
    const version = editor.elements.namedItem("version");
    let theirs = null;
    const save = async () => {
      const { data } = await post("/api/memory/save", { path: editor.elements.namedItem("path").value, text: text.value, version: version.value });
      if (data.ok) {
        version.value = data.version;
        conflict.hidden = true;
        saved.classList.remove("error");
        saved.textContent = `Saved at ${new Date().toLocaleTimeString()}.`;
        toast("Saved.");
      } else if (data.current !== undefined) {
        theirs = { text: data.current, version: data.version };
        showLines(editor.querySelector("[data-theirs]"), data.current, text.value);
        showLines(editor.querySelector("[data-mine]"), text.value, data.current);
        conflict.hidden = false;
        // Said beside Save, not in a toast: a toast sits over the Save button.
        saved.classList.add("error");
        saved.textContent = data.error;
        conflict.scrollIntoView({ block: "nearest" });
      } else toast(data.error || "Not saved.", true);
    };
    editor.addEventListener("submit", (ev) => {
      ev.preventDefault();
      void save();
    });
    text.addEventListener("keydown", (ev) => {
      if ((ev.ctrlKey || ev.metaKey) && ev.key === "s") {
        ev.preventDefault();
        void save();
      }
    });
    editor.querySelector("[data-take-theirs]").addEventListener("click", () => {
      if (!theirs) return;
      text.value = theirs.text;
      version.value = theirs.version;
      conflict.hidden = true;
      saved.textContent = "Showing the version on disk.";
    });
    editor.querySelector("[data-keep-mine]").addEventListener("click", () => {
      if (!theirs) return;
      version.value = theirs.version;
      void save();
    });
  }
})();
